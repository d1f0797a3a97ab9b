"""Run the SRS pipeline and report it as a stream of events (see `reqstudio.modes.srs.events`).

The engine knows nothing of the UI. With a checkpointer, every completed node is saved under
`thread_id` before the next starts, so a run stopped or failed midway can resume from there.
LangGraph and the graph's modules are imported where they are used: a fresh run can send its
first request before them (`reqstudio.modes.srs.first_call`).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from reqstudio.errors import DATABASE_UNAVAILABLE, failure_of, is_database_failure, remedy_for
from reqstudio.failures import Failure, FailureCode
from reqstudio.llm import ModelFactory, context_overflow
from reqstudio.modes.srs import events
from reqstudio.modes.srs.events import (
    DecisionApplied,
    Notice,
    Paused,
    SrsEvent,
    SrsResult,
)
from reqstudio.modes.srs.first_call import FirstCall
from reqstudio.modes.srs.interactions import InteractionLog
from reqstudio.modes.srs.state import (
    Ablation,
    AgentName,
    GraphState,
    Score,
    SrsContext,
    initial_state,
)
from reqstudio.modes.srs.trace import trace_rows
from reqstudio.prompts import render_prompt
from reqstudio.usage import UsageTracker

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from reqstudio.modes.srs.decisions import HumanDecision

__all__ = [
    "SrsEvent",
    "SrsRequest",
    "SrsResult",
    "paused_run",
    "pending_resume",
    "run_srs",
]

log = logging.getLogger("reqstudio.srs")


def _no_reference_notice() -> events.Notice:
    return events.Notice(code="srs.no_reference_notice")


class SrsRequest(BaseModel):
    user_input: str
    reference_srs: str = ""
    ablation: Ablation = "none"
    max_iterations: int = Field(default=5, ge=1, le=20)
    # Wait for the user's decision after each ReqClarify round (needs a checkpointer).
    pause_after_round: bool = False


def _thread_config(thread_id: str, max_iterations: int = 20) -> dict[str, Any]:
    from reqstudio.modes.srs.graph import recursion_limit

    return {
        "configurable": {"thread_id": thread_id},
        "recursion_limit": recursion_limit(max_iterations),
    }


async def _saved_run(checkpointer: BaseCheckpointSaver, thread_id: str) -> tuple[Any, Ablation]:
    """The latest snapshot of the thread, read through the graph its run was built with."""
    from reqstudio.modes.srs.graph import build_graph

    config = _thread_config(thread_id)
    snapshot = await build_graph("none", checkpointer).aget_state(config)
    ablation = (snapshot.values or {}).get("ablation_mode") or "none"
    if ablation != "none":
        snapshot = await build_graph(ablation, checkpointer).aget_state(config)
    return snapshot, ablation


async def pending_resume(checkpointer: BaseCheckpointSaver, thread_id: str) -> str | None:
    """The last completed node of this thread's run if that run did not finish, else None
    (no run saved, the run finished, or it stopped before its first node completed)."""
    snapshot, _ = await _saved_run(checkpointer, thread_id)
    if not snapshot.values or not snapshot.next:
        return None
    return snapshot.values.get("last_node") or None


async def paused_run(checkpointer: BaseCheckpointSaver, thread_id: str) -> Paused | None:
    """The pause this thread's run waits at (the list and its scores), or None."""
    snapshot, _ = await _saved_run(checkpointer, thread_id)
    if not snapshot.values or not any(task.interrupts for task in snapshot.tasks):
        return None
    return _paused(snapshot.values, thread_id)


def _paused(state: dict[str, Any], thread_id: str | None) -> Paused:
    from reqstudio.modes.srs.decisions import paused_requirements
    from reqstudio.modes.srs.graph import route_after_clarify

    return Paused(
        round=int(state.get("iteration", 1)) - 1,
        requirements=paused_requirements(state),
        thread_id=thread_id,
        last_round=route_after_clarify(state) == "DocGenerate",  # type: ignore[arg-type]
    )


def context_notice(request: SrsRequest, factory: ModelFactory) -> Notice | None:
    """A warning before the run when ReqClarify's prompt (which carries the whole reference)
    would not fit the model's context: the provider would refuse it or cut it."""
    if not request.reference_srs.strip() or request.ablation != "none":
        return None
    prompt = render_prompt(
        "srs/req_clarify.md", unfrozen_list_json="[]", reference_srs=request.reference_srs
    )
    overflow = context_overflow(prompt, factory, "ReqClarify")
    if overflow is None:
        return None
    sizes = {"needed": overflow.needed, "limit": overflow.limit}
    return events.Notice(code="srs.reference_too_large_notice", values=sizes)


async def prune_checkpoints(checkpointer: BaseCheckpointSaver, thread_id: str) -> None:
    """Keep only the latest checkpoint of a running thread (resuming needs no other): SQLite
    stores the whole state, the reference SRS included, in every checkpoint."""
    # imported here: a run without a checkpointer (the CLI's) needs no SQLite before its
    # first model request
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    if not isinstance(checkpointer, AsyncSqliteSaver):
        return
    async with checkpointer.lock:
        for table in ("writes", "checkpoints"):
            await checkpointer.conn.execute(
                f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_id < "
                "(SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ?)",
                (thread_id, thread_id),
            )
        await checkpointer.conn.commit()


def _traceability(state: dict[str, Any], requirements: list[dict[str, str]]) -> dict[str, Any]:
    from reqstudio.check.trace import request_sentences

    user_input = state.get("user_input", "")
    return {
        "traceability": trace_rows(
            requirements,
            state.get("origins") or {},
            user_input,
            clarified=state.get("ablation_mode") == "none",
        ),
        "request_sentences": request_sentences(user_input),
    }


def _result(
    state: dict[str, Any],
    log: InteractionLog,
    tracker: UsageTracker,
    started: float,
    ablation: Ablation,
    ablation_used: Ablation,
    thread_id: str | None,
    continuations: int = 0,
) -> SrsResult:
    from reqstudio.modes.srs.nodes import effective_requirements

    requirements = effective_requirements(state.get("req_list", []), state.get("removed_ids", []))
    return SrsResult(
        srs_markdown=state.get("srs_output", ""),
        requirements=requirements,
        frozen_ids=list(state.get("frozen_ids", [])),
        removed_ids=list(state.get("removed_ids", [])),
        scores=dict(state.get("scores", {})),
        rounds=state.get("rounds", 0),
        iteration=state.get("iteration", 0),
        continuations=continuations,
        logs=list(log.entries),
        usage=tracker.as_dict(),
        seconds=round(time.perf_counter() - started, 3),
        ablation=ablation,
        ablation_used=ablation_used,
        thread_id=thread_id,
        completed=bool(state.get("srs_stream_printed")),
        **_traceability(state, requirements),
    )


def _node_finished(
    agent: AgentName,
    round_number: int,
    before: dict[str, Any],
    update: dict[str, Any],
    log: InteractionLog,
) -> tuple[events.NodeFinished, dict[str, Any]]:
    from reqstudio.modes.srs.nodes import effective_requirements, unfrozen_items

    state = {**before, **update}
    new_logs = log.entries[before.get("log_count", 0) : state.get("log_count", 0)]
    spent = new_logs[-1] if new_logs else {}
    scores: list[Score] = []
    if agent == "ReqClarify":
        reasons = state.get("score_reasons", {})
        scores = [
            Score(id=rid, score=score, reason=reasons.get(rid, ""))
            for rid, score in update.get("scores", {}).items()
        ]
    frozen_before = set(before["frozen_ids"])
    removed_before = set(before["removed_ids"])
    current = effective_requirements(state["req_list"], state["removed_ids"])
    event = events.NodeFinished(
        agent=agent,
        round=round_number,
        requirements=current,
        scores=scores,
        frozen_now=[r for r in state["frozen_ids"] if r not in frozen_before],
        removed_now=[r for r in state["removed_ids"] if r not in removed_before],
        frozen_ids=list(state["frozen_ids"]),
        removed_ids=list(state["removed_ids"]),
        counts={
            "total": len(current),
            "frozen": len(state["frozen_ids"]),
            "removed": len(state["removed_ids"]),
            "unfrozen": len(unfrozen_items(state)),  # type: ignore[arg-type]
        },
        seconds=float(spent.get("seconds", 0.0)),
        llm_calls=int(spent.get("llm_calls", 0)),
        input_tokens=int(spent.get("input_tokens", 0)),
        output_tokens=int(spent.get("output_tokens", 0)),
        skipped=not new_logs and agent != "ReqParse",
    )
    return event, state


def _failure_of(error: BaseException) -> Failure:
    from reqstudio.modes.srs.document_check import NotADocument
    from reqstudio.modes.srs.nodes import EmptyDocument, EmptyRequirementList

    if isinstance(error, EmptyRequirementList):
        return Failure(FailureCode.SRS_NO_REQUIREMENTS)
    if isinstance(error, NotADocument):
        return Failure(FailureCode.SRS_NOT_AN_SRS, {"reason": error.failure})
    if isinstance(error, EmptyDocument):
        return Failure(FailureCode.SRS_EMPTY_DOCUMENT)
    return failure_of(error)


def _database_failure(error: BaseException, step: str | None, last_saved: str | None) -> Failure:
    """What a run stopped by the database says: what is saved and what is not, truthfully.
    `step`: the node whose result is lost; `last_saved`: the last node saved before."""
    values = {"name": type(error).__name__, "step": step, "last_saved": last_saved}
    if last_saved:
        code = FailureCode.SRS_DATABASE_SAVED if step else FailureCode.SRS_DATABASE_SAVED_NO_STEP
    else:
        code = (
            FailureCode.SRS_DATABASE_NOTHING_SAVED
            if step
            else FailureCode.SRS_DATABASE_NOTHING_SAVED_NO_STEP
        )
    return Failure(code, {k: v for k, v in values.items() if v})


async def run_srs(
    request: SrsRequest,
    factory: ModelFactory,
    *,
    tracker: UsageTracker | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    thread_id: str | None = None,
    resume: bool = False,
    log_dir: Path | None = None,
    decision: HumanDecision | None = None,
    early_first_call: bool = False,
) -> AsyncIterator[SrsEvent]:
    """Generate an SRS for `request`, yielding events; the last is RunFinished or RunFailed.

    `resume=True` continues this thread's saved run from its last completed node (the saved
    request, ablation and bound are used; `request` is ignored). Cancelling the consuming task
    raises CancelledError through here; completed nodes stay in the checkpoint.
    `log_dir`: where a checkpointed run keeps its interaction log until it finishes (without
    it the log lives in memory only, and a resumed run's result lists only its own part).
    Only the latest checkpoint of a running thread is kept, and a finished run's checkpoints
    and log file are deleted (its result carries everything).

    With `request.pause_after_round` the run ends with `Paused` after each ReqClarify round;
    `resume=True` with the user's `decision` goes on from there (without a decision it pauses
    again at once). A decision naming an id not in the list raises `DecisionError` before
    anything is applied or any event is yielded.

    `early_first_call`: a fresh run without a checkpointer sends ReqParse's request before
    LangGraph is imported and the graph built, which then happens while that request is in
    flight (`reqstudio.modes.srs.first_call`); the events and the ending are the same.
    """
    tracker = tracker if tracker is not None else UsageTracker()
    started = time.perf_counter()
    requested: Ablation = request.ablation
    graph_input: GraphState | None
    if resume:
        if checkpointer is None or thread_id is None:
            raise ValueError("resuming needs the checkpointer and the thread_id of the run")
        snapshot, ablation_used = await _saved_run(checkpointer, thread_id)
        if not snapshot.values:
            raise ValueError(f"no saved SRS run for thread {thread_id!r}")
        state: dict[str, Any] = dict(snapshot.values)
        requested = ablation_used
        max_iterations = int(state.get("max_iterations", request.max_iterations))
        graph_input = None
        if decision is not None and any(task.interrupts for task in snapshot.tasks):
            from langgraph.types import Command

            from reqstudio.modes.srs.decisions import apply_decision

            apply_decision(state, decision)  # refused as a whole before anything changes
            graph_input = Command(resume=decision.model_dump(mode="json"))
    else:
        if not request.user_input.strip():
            raise ValueError("the requirements text is empty")
        ablation_used = requested
        if requested == "none" and not request.reference_srs.strip():
            ablation_used = "no-clarify"
            yield _no_reference_notice()
        max_iterations = request.max_iterations
        warning = context_notice(request.model_copy(update={"ablation": ablation_used}), factory)
        if warning is not None:
            yield warning
        if request.pause_after_round and checkpointer is None:
            raise ValueError("pausing after each round needs a checkpointer to wait in")
        graph_input = initial_state(
            request.user_input,
            request.reference_srs,
            ablation_used,
            max_iterations,
            request.pause_after_round,
        )
        state = dict(graph_input)
    if checkpointer is not None and thread_id is None:
        thread_id = uuid.uuid4().hex
    interactions = InteractionLog(log_dir if checkpointer is not None else None, thread_id)
    if resume:
        interactions.load(int(state.get("log_count", 0)))
    else:
        interactions.load(0)  # a reused thread id starts a fresh log
    running: tuple[AgentName, int] | None = None
    first_call = None
    if early_first_call and not resume and checkpointer is None:
        first_call = FirstCall.start(factory, tracker, request.user_input)
        try:  # what ReqParse writes until its request has left, as its node would
            async for event in first_call.before_sent():
                if isinstance(event, events.NodeStarted):
                    running = (event.agent, event.round)
                yield event
        except BaseException:
            first_call.close()
            raise
    from reqstudio.modes.srs.graph import build_graph
    from reqstudio.modes.srs.nodes import effective_requirements

    graph = build_graph(ablation_used, checkpointer)
    config = _thread_config(thread_id or "unsaved", max_iterations)
    context = SrsContext(factory=factory, tracker=tracker, log=interactions, first_call=first_call)
    saved_node: str | None = (state.get("last_node") or None) if resume else None
    continuations = 0
    paused = False
    decided: DecisionApplied | None = None  # the decision's changes, until its update arrives
    stream = graph.astream(
        graph_input,
        config,
        context=context,
        stream_mode=["updates", "custom"],
        # Save each node before the next starts, so a stop loses at most the running node.
        durability="sync" if checkpointer is not None else None,
    )
    try:
        async with aclosing(stream) as chunks:
            async for mode, chunk in chunks:
                if mode == "custom":
                    # the nodes write the union's events themselves; three are noted on the way
                    if isinstance(chunk, DecisionApplied):
                        decided = chunk  # shown once UserReview's update has the list
                        continue
                    if isinstance(chunk, events.DocumentContinued):
                        continuations = chunk.count
                    elif isinstance(chunk, events.NodeStarted):
                        # with sync durability, a node starts once the one before is saved
                        saved_node = state.get("last_node") or None
                        running = (chunk.agent, chunk.round)
                    yield chunk
                    continue
                for node, update in chunk.items():
                    if node == "__interrupt__":
                        paused = True
                    if node.startswith("__"):
                        continue
                    if node == "UserReview":
                        state = {**state, **(update or {})}
                        yield DecisionApplied(
                            round=decided.round if decided else int(state["iteration"]) - 1,
                            changes=decided.changes if decided else {},
                            requirements=effective_requirements(
                                state["req_list"], state["removed_ids"]
                            ),
                        )
                        decided = None
                        continue
                    round_number = running[1] if running else int(state.get("iteration", 0))
                    event, state = _node_finished(
                        node, round_number, state, update or {}, interactions
                    )
                    running = None
                    if checkpointer is not None and thread_id is not None:
                        await prune_checkpoints(checkpointer, thread_id)
                    yield event
    except Exception as exc:
        log.info("SRS run failed in %s", running[0] if running else "?", exc_info=True)
        database = checkpointer is not None and is_database_failure(exc)
        if database:
            finished_unsaved = (
                state.get("last_node") if state.get("last_node") != saved_node else None
            )
            lost = running[0] if running else finished_unsaved
            failure = _database_failure(exc, lost, saved_node)
        else:
            failure = _failure_of(exc)
        yield events.RunFailed(
            **failure.as_dict(),
            agent=running[0] if running else None,
            error_type=DATABASE_UNAVAILABLE if database else type(exc).__name__,
            remedy=remedy_for(exc),
            partial=_result(
                state,
                interactions,
                tracker,
                started,
                requested,
                ablation_used,
                thread_id,
                continuations,
            ),
        )
        return
    finally:
        if first_call is not None:
            first_call.close()
    if paused:  # waits in the checkpoint for the user's decision
        yield _paused(state, thread_id)
        return
    result = _result(
        state, interactions, tracker, started, requested, ablation_used, thread_id, continuations
    )
    if checkpointer is not None and thread_id is not None:
        # A finished run needs no resuming: its checkpoints and log file go. If the database
        # is away just now, they stay (a finished run is never offered for resuming).
        try:
            await checkpointer.adelete_thread(thread_id)
        except Exception as exc:
            if not is_database_failure(exc):
                raise
            log.warning("finished SRS run %s: its checkpoints were not deleted: %s", thread_id, exc)
        interactions.discard()
    yield events.RunFinished(result=result)
