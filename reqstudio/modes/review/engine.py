"""Run a review: a document in, events out, the improved document and every review at the end.

The engine knows nothing of the UI. With a checkpointer every finished node is saved under
`thread_id` before the next starts, so a run stopped or failed midway keeps its finished rounds
and can resume; "pause after each round" waits there for the user's edits."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel, Field, computed_field

from reqstudio.document_model import DocumentStructure, document_language, parse_markdown
from reqstudio.errors import remedy_for
from reqstudio.llm import ModelFactory
from reqstudio.messages import join, text
from reqstudio.modes.review.documents import document_too_large
from reqstudio.modes.review.events import Paused, ReviewEvent, RunFailed, RunFinished
from reqstudio.modes.review.graph import build_graph, recursion_limit
from reqstudio.modes.review.models import Improvement, ReviewRound
from reqstudio.modes.review.reasons import reason_failure
from reqstudio.modes.review.state import ReviewContext, initial_state
from reqstudio.modes.review.tracking import issue_ledger
from reqstudio.modes.review.trajectory import improvement_trajectory, trajectory_text
from reqstudio.modes.review.user_decision import ReviewDecision, check_decision
from reqstudio.modes.review.verdict import open_high_priority, review_outcome
from reqstudio.modes.review.verdict import returned_round as returned_record
from reqstudio.modes.review.versions import BestVersion, best_version, versions_json
from reqstudio.outcomes import Outcome
from reqstudio.usage import UsageTracker

log = logging.getLogger("reqstudio.review")


class ReviewRequest(BaseModel):
    document: str = Field(description="the document to review, Markdown or plain text")
    title: str = ""
    max_rounds: int = Field(default=3, ge=1, le=10)
    pause_after_round: bool = False


class ReviewResult(BaseModel):
    original: str
    document: DocumentStructure
    rounds: list[ReviewRound] = Field(default_factory=list)
    stop_reason: str | None = None
    language: str = "en"
    usage: dict[str, Any] = Field(default_factory=dict)
    seconds: float = 0.0
    thread_id: str | None = None
    best_round: int | None = Field(
        default=None, description="the round that reviewed `document` (the best version)"
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def improved_markdown(self) -> str:
        return self.document.to_markdown()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def improvement_trajectory(self) -> dict[str, dict[str, Any]]:
        titles = {s.id: s.title for s in self.document.sections}
        return improvement_trajectory(self.rounds, self.stop_reason, titles)

    def trajectory_text(self, language: str | None = None) -> str:
        return trajectory_text(self.rounds, self.stop_reason, language or self.language)

    @property
    def complete(self) -> bool:
        return self.stop_reason is not None

    def best(self) -> BestVersion | None:
        return best_version(self.rounds) if self.complete else None

    def best_version_note(self, language: str | None = None) -> str:
        """Why the result is an earlier version than the last ("" when it is the last)."""
        best = self.best()
        return best.reason(language or self.language) if best and not best.is_last else ""

    @property
    def outcome(self) -> Outcome:
        """Passed, or ended without a pass (`reqstudio.modes.review.verdict`): the browser's mark and
        the exit code of `reqstudio review` both come from here."""
        return review_outcome(self.stop_reason, self.rounds, self.best_round)

    @property
    def returned_round(self) -> int | None:
        """The round that reviewed the version this result holds."""
        record = returned_record(self.rounds, self.best_round)
        return record.round if record is not None else None

    def open_findings(self) -> list[Improvement]:
        """The high-priority findings the returned version still holds (not overruled)."""
        return open_high_priority(returned_record(self.rounds, self.best_round))

    def open_findings_text(self, language: str | None = None) -> str:
        """ "I-1 (sec-02), I-4 (document-wide)": the open findings, named."""
        language = language or self.language
        names = {s.id for s in self.document.sections}
        wide = text("review.engine.document_wide", language)
        return join(
            [
                f"{i.issue_id or i.issue[:40]} ({i.agent_id if i.agent_id in names else wide})"
                for i in self.open_findings()
            ],
            language,
        )

    def overrulings(self) -> list[dict[str, Any]]:
        """Every finding the judge overruled by naming its id, with its round."""
        return [
            {"round": r.round, **o.model_dump(mode="json")}
            for r in self.rounds
            for o in r.overruled
        ]

    def issues_json(self) -> list[dict[str, Any]]:
        """Every issue of the run: id, round first seen, status per round."""
        return [t.model_dump(mode="json") for t in issue_ledger(self.rounds).values()]

    @property
    def stop_detail(self) -> str:
        """What lies behind the stop reason (reviewer_failed: the reviewer and its error)."""
        last = self.rounds[-1].decision if self.rounds else None
        return last.detail if last is not None else ""

    @property
    def failed_reviewers(self) -> list[str]:
        """ "round 2 red_team: ..." for every reviewer that gave no readable answer."""
        return [
            f"round {r.round} {f.reviewer}: {f.reason}" for r in self.rounds for f in r.failures
        ]

    def reviews_json(self) -> dict[str, Any]:
        """Every review of every round, the decisions and the trajectory (the .json export)."""
        best = self.best()
        return {
            "stop_reason": self.stop_reason,
            "stop_detail": self.stop_detail,
            # passed / without_pass (incomplete: see `partial.incomplete_json`)
            "outcome": self.outcome.value,
            "returned_round": self.returned_round,
            "open_findings": [i.model_dump(mode="json") for i in self.open_findings()],
            "overruled": self.overrulings(),
            "improvement_trajectory": self.improvement_trajectory,
            "trajectory": self.trajectory_text(),
            "issues": self.issues_json(),
            "versions": versions_json(self.rounds),
            "best_version": None
            if best is None
            else {
                "round": best.round,
                "last_round": best.last_round,
                "reason": best.reason("en"),
                "reason_zh": best.reason("zh"),
            },
            "rounds": [
                r.model_dump(mode="json", exclude={"reviewed_document"}) for r in self.rounds
            ],
            "usage": self.usage,
            "seconds": self.seconds,
        }


def _config(thread_id: str, max_rounds: int) -> dict[str, Any]:
    return {
        "configurable": {"thread_id": thread_id},
        "recursion_limit": recursion_limit(max_rounds),
    }


def _finished(record: ReviewRound) -> bool:
    decision = record.decision
    return decision is not None and (decision.action == "approve" or bool(record.revisions))


def _result(state: dict[str, Any], tracker: UsageTracker, started: float, thread_id: str | None):
    result = ReviewResult(
        original=state.get("original", ""),
        document=DocumentStructure.model_validate(state["document"]),
        rounds=[ReviewRound.model_validate(r) for r in state.get("rounds", [])],
        stop_reason=state.get("stop_reason"),
        language=state.get("language", "en"),
        usage=tracker.as_dict(),
        seconds=round(time.perf_counter() - started, 3),
        thread_id=thread_id,
    )
    best = result.best()
    if best is not None:
        # A finished run returns the best version it reviewed, not necessarily the last.
        result.best_round = best.round
        if not best.is_last:
            record = next(r for r in result.rounds if r.round == best.round)
            result.document = DocumentStructure.model_validate(record.reviewed_document)
            log.info("review: %s", best.reason("en"))
    return result


async def saved_review(checkpointer: BaseCheckpointSaver, thread_id: str) -> ReviewResult | None:
    """The saved state of this thread's review (finished rounds included), or None."""
    snapshot = await build_graph(checkpointer).aget_state(_config(thread_id, 10))
    if not snapshot.values or "document" not in snapshot.values:
        return None
    return _result(snapshot.values, UsageTracker(), time.perf_counter(), thread_id)


async def pending_review(checkpointer: BaseCheckpointSaver, thread_id: str) -> bool:
    """True when this thread's review stopped before its end (it can resume)."""
    snapshot = await build_graph(checkpointer).aget_state(_config(thread_id, 10))
    return bool(snapshot.values and snapshot.next)


async def run_review(
    request: ReviewRequest | None,
    factory: ModelFactory,
    *,
    tracker: UsageTracker | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    thread_id: str | None = None,
    resume: bool = False,
    edits: dict[str, str] | None = None,
    decision: ReviewDecision | None = None,
) -> AsyncIterator[ReviewEvent]:
    """Review `request.document` round after round, yielding events; the last is RunFinished,
    RunFailed or Paused.

    `resume=True` continues this thread's saved run (`request` is ignored): after a stop or a
    failure from the last finished node, after a pause with the user's `decision` (section
    edits, findings dropped and added; `edits` alone is the same as a decision with only
    those). A decision naming an unknown finding or section raises `ReviewDecisionError`
    before anything is applied."""
    tracker = tracker if tracker is not None else UsageTracker()
    started = time.perf_counter()
    if resume:
        if checkpointer is None or thread_id is None:
            raise ValueError("resuming needs the checkpointer and the thread_id of the run")
        snapshot = await build_graph(checkpointer).aget_state(_config(thread_id, 10))
        if not snapshot.values:
            raise ValueError(f"no saved review for thread {thread_id!r}")
        state: dict[str, Any] = dict(snapshot.values)
        paused = any(task.interrupts for task in snapshot.tasks)
        graph_input: Any = None
        if paused:
            decision = decision or ReviewDecision()
            if edits:
                decision = decision.model_copy(update={"edits": {**decision.edits, **edits}})
            check_decision(
                decision,
                ReviewRound.model_validate(state["rounds"][-1]),
                DocumentStructure.model_validate(state["document"]),
            )
            graph_input = Command(resume=decision.model_dump(mode="json"))
        if not paused and snapshot.next:
            # Stopped or failed inside a round: that round starts again after the last
            # finished one (a round is finished once decided for good or revised).
            finished = [r for r in state["rounds"] if _finished(ReviewRound.model_validate(r))]
            restart = {"rounds": finished, "round": len(finished), "reviews": None, "judge": None}
            await build_graph(checkpointer).aupdate_state(
                _config(thread_id, 10), restart, as_node="revise_sections"
            )
            state.update(restart)
    else:
        assert request is not None
        if not request.document.strip():
            raise ValueError("the document is empty")
        too_large = document_too_large(request.document, factory, request.title or "document")
        if too_large is not None:  # refused before the first call (callers usually check first)
            yield RunFailed(
                **too_large.failure.as_dict(),
                partial=None,
                remedy="size",
            )
            return
        document = parse_markdown(request.document, default_title=request.title)
        state = dict(
            initial_state(
                request.document,
                document.model_dump(mode="json"),
                document_language(request.document),
                request.max_rounds,
                request.pause_after_round,
            )
        )
        graph_input = state
        if request.pause_after_round and checkpointer is None:
            checkpointer = InMemorySaver()  # a pause needs somewhere to wait
    if checkpointer is not None and thread_id is None:
        thread_id = uuid.uuid4().hex
    graph = build_graph(checkpointer)
    config = _config(thread_id or "unsaved", int(state["max_rounds"]))
    stream = graph.astream(
        graph_input,
        config,
        context=ReviewContext(factory=factory, tracker=tracker),
        stream_mode=["updates", "custom"],
        durability="sync" if checkpointer is not None else None,
    )
    interrupted = False
    try:
        async with aclosing(stream) as chunks:
            async for mode, chunk in chunks:
                if mode == "custom":
                    yield chunk
                    continue
                for node, update in chunk.items():
                    if node == "__interrupt__":
                        interrupted = True
                    elif update:
                        state.update({k: v for k, v in update.items() if k != "reviews"})
    except Exception as error:
        log.info("review run failed", exc_info=True)
        yield RunFailed(
            **reason_failure(error).as_dict(),
            partial=_result(state, tracker, started, thread_id),
            remedy=remedy_for(error),
        )
        return
    result = _result(state, tracker, started, thread_id)
    if interrupted:
        last = result.rounds[-1] if result.rounds else None
        focus = last.decision.focus_on if last and last.decision else []
        yield Paused(
            round=int(state["round"]),
            document=result.document,
            focus_on=focus,
            findings=list(last.improvements) if last else [],
        )
        return
    yield RunFinished(result=result)


async def review_document(
    request: ReviewRequest, factory: ModelFactory, *, tracker: UsageTracker | None = None
) -> ReviewResult:
    """The whole run without events (benchmarks, scripts); raises on failure."""
    async for event in run_review(request, factory, tracker=tracker):
        if isinstance(event, RunFinished):
            return event.result
        if isinstance(event, RunFailed):
            raise RuntimeError(event.message)
    raise RuntimeError("the review paused; resume it through run_review")
