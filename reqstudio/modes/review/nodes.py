"""The review graph's nodes. One round:

    start_round -> (Send) review_perspective x3 -> judge_reviews -> determine_next_action
    -> [await_user_edits] -> revise_sections (iterate) -> start_round ...

Every node reports through LangGraph's stream writer (the events in `reqstudio.modes.review.events`);
none imports Chainlit."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from langgraph.types import Send, interrupt
from pydantic import BaseModel

from reqstudio.calls import complete_text, policy_for
from reqstudio.document_model import DocumentStructure, with_ids
from reqstudio.errors import remedy_for
from reqstudio.failures import Failure, FailureCode, say
from reqstudio.llm import ModelFactory
from reqstudio.modes.review.convergence import (
    determine_next_action,
    generate_review_feedback,
    review_summary,
)
from reqstudio.modes.review.events import (
    AuthorReset,
    AuthorStarted,
    AuthorToken,
    DecisionMade,
    ReviewerFailed,
    ReviewerFinished,
    RoundFinished,
    RoundStarted,
    SectionRevised,
)
from reqstudio.modes.review.memory import red_team_tracking, remember_round
from reqstudio.modes.review.models import (
    ANSWER_MODELS,
    PERSPECTIVES,
    BlueTeamReview,
    ClientReview,
    JudgeReview,
    RedTeamReview,
    ReviewerFailure,
    ReviewRound,
    SectionFeedback,
    SectionRevision,
)
from reqstudio.modes.review.placement import SectionPlacements, apply_placements, section_for
from reqstudio.modes.review.reasons import ReviewRoundFailed, reason_failure, reason_for
from reqstudio.modes.review.revision_check import refusal_for, requirement_ids
from reqstudio.modes.review.state import PerspectiveTask, ReviewContext, ReviewState
from reqstudio.modes.review.tracking import RoundTracking, checks_text, earlier_issues_text
from reqstudio.modes.review.user_decision import (
    ReviewDecision,
    ReviewDecisionError,
    apply_findings_decision,
)
from reqstudio.modes.rewrite import embedded
from reqstudio.prompts import render_prompt
from reqstudio.structured import StructuredResult, ask_structured

log = logging.getLogger("reqstudio.review")

ID_FIELDS = ("agent_id",)
# The bundled 135M model decodes against the schema: few, short findings keep a reviewer's
# answer to a few hundred tokens (four such answers make a round).
EMBEDDED_ITEMS = 2
EMBEDDED_LINE = r'^[^"\\\n]{1,60}$'
MEMORY_FIELDS = ("issue_id", "issue_ids", "example", "resolved_issues", "checks", "upheld")


def embedded_schema(schema: type) -> dict[str, Any]:
    """Rewrite's bounded schema for the embedded model, tightened for four reviewers a round."""

    def tighten(node: Any) -> Any:
        if isinstance(node, dict):
            node = {key: tighten(value) for key, value in node.items()}
            if node.get("type") == "array":
                node["maxItems"] = min(node.get("maxItems", EMBEDDED_ITEMS), EMBEDDED_ITEMS)
            if node.get("pattern") == embedded.ONE_LINE:
                node["pattern"] = EMBEDDED_LINE
            return node
        if isinstance(node, list):
            return [tighten(value) for value in node]
        return node

    bounded = tighten(embedded.bounded_schema(schema, ID_FIELDS))
    for derived in ("critical_issues_count", "total_improvements"):  # recomputed anyway
        bounded.get("properties", {}).pop(derived, None)
    # The optional memory fields (issue ids, checks, rulings) would only lengthen a 135M
    # model's answer: it is asked for the seed's fields alone.
    for node in [bounded, *bounded.get("$defs", {}).values()]:
        for optional in MEMORY_FIELDS:
            node.get("properties", {}).pop(optional, None)
    own = getattr(schema, "OWN_FIELDS", ())
    if own:
        # The grammar then cannot produce `{}`, which the answer model refuses.
        bounded["required"] = list(dict.fromkeys([*bounded.get("required", []), *own]))
    return bounded


def _emit(event: Any) -> None:
    with contextlib.suppress(RuntimeError):  # outside a graph run nobody listens
        get_stream_writer()(event)


async def ask_reviewer(
    ctx: ReviewContext,
    reviewer: str,
    document: DocumentStructure,
    language: str,
    round_number: int,
    **extra: Any,
) -> Any:
    """One reviewer's answer through the shared structured path (re-asks included)."""
    return await ask_panel_member(
        ctx.factory, [ctx.tracker], reviewer, document, language, round_number, **extra
    )


async def ask_panel_member(
    factory: ModelFactory,
    callbacks: Sequence[Any],
    reviewer: str,
    document: DocumentStructure,
    language: str,
    round_number: int,
    **extra: Any,
) -> Any:
    """`ask_reviewer` for callers without a review run (Rewrite's panel adapter)."""
    messages = panel_messages(reviewer, document, language, **extra)
    answer = await ask_panel(
        factory,
        callbacks,
        ANSWER_MODELS[reviewer],
        messages,
        f"Review {reviewer} round {round_number}",
    )
    return answer.value


def panel_messages(
    reviewer: str, document: DocumentStructure, language: str, **extra: Any
) -> list[BaseMessage]:
    prompt = render_prompt(
        f"review/{reviewer}.md",
        title=document.title,
        document=with_ids(document),
        language=language,
        **extra,
    )
    return [HumanMessage(prompt)]


async def ask_panel(
    factory: ModelFactory,
    callbacks: Sequence[Any],
    schema: type[BaseModel],
    messages: Sequence[BaseMessage],
    label: str,
) -> StructuredResult[Any]:
    """One structured panel call: the shared path, in every structured-output mode."""
    bounded = embedded_schema(schema) if factory.endpoint.embedded else None
    return await ask_structured(
        factory.for_role("ReviewPanel", callbacks=list(callbacks)),
        list(messages),
        schema,
        response_format=factory.response_format(schema, json_schema=bounded),
        policy=policy_for("ReviewPanel", factory.settings),
        label=label,
    )


async def ask_red_team(
    ctx: ReviewContext,
    document: DocumentStructure,
    language: str,
    round_number: int,
    **memory: Any,
) -> RedTeamReview:
    """The red team's review, its findings on real sections where it can say which: a finding
    naming no section (nor a section's title) is asked about once, with the valid ids; what
    still fits none stays as it is (a document-wide issue later), never dropped. `memory`:
    the earlier issues and the last revision's checks (`reqstudio.modes.review.tracking`)."""
    messages = panel_messages("red_team", document, language, **memory)
    label = f"Review red_team round {round_number}"
    answer = await ask_panel(ctx.factory, [ctx.tracker], RedTeamReview, messages, label)
    review: RedTeamReview = answer.value
    findings = [
        f.model_copy(update={"agent_id": section_for(f.agent_id, document) or f.agent_id})
        for f in review.improvements
    ]
    unknown = [f for f in findings if f.agent_id not in document.section_ids]
    if unknown:
        log.warning(
            "review round %d: %d red-team finding(s) name no section (%s); asking once which",
            round_number,
            len(unknown),
            ", ".join(f.agent_id for f in unknown),
        )
        question = render_prompt(
            "review/placement.md",
            sections=document.sections,
            findings=unknown,
            language=language,
        )
        try:
            placed = await ask_panel(
                ctx.factory,
                [ctx.tracker],
                SectionPlacements,
                [*messages, AIMessage(answer.raw_output), HumanMessage(question)],
                f"{label} (section ids)",
            )
        except Exception as error:  # the findings stay, as document-wide issues
            log.warning("review round %d: no section ids: %s", round_number, reason_for(error))
        else:
            findings = apply_placements(findings, unknown, placed.value, document)
    return review.model_copy(update={"improvements": findings})


# --- a round's start and the fan-out ----------------------------------------------------


async def start_round(state: ReviewState, runtime: Runtime[ReviewContext]) -> dict[str, Any]:
    number = state["round"] + 1
    _emit(RoundStarted(round=number))
    log.info("review round %d starts", number)
    return {"round": number, "reviews": None, "judge": None}


def fan_out(state: ReviewState) -> list[Send]:
    """The red team, blue team and client review concurrently (one Send each); the red team
    also gets the earlier issues and the last revision's checks."""
    earlier = [ReviewRound.model_validate(r) for r in state["rounds"]]
    return [
        Send(
            "review_perspective",
            PerspectiveTask(
                perspective=p,
                round=state["round"],
                document=state["document"],
                language=state["language"],
                earlier_issues=earlier_issues_text(earlier) if p == "red_team" else "",
                checks=checks_text(earlier) if p == "red_team" else "",
            ),
        )
        for p in PERSPECTIVES
    ]


async def review_perspective(
    task: PerspectiveTask, runtime: Runtime[ReviewContext]
) -> dict[str, Any]:
    """One perspective's review; an answer that cannot be read is recorded, not raised."""
    reviewer = task["perspective"]
    document = DocumentStructure.model_validate(task["document"])
    memory: dict[str, Any] = {}
    if reviewer == "red_team":
        memory = {
            "round": task["round"],
            "earlier_issues": task.get("earlier_issues", ""),
            "checks": task.get("checks", ""),
        }
    try:
        if reviewer == "red_team":
            review = await ask_red_team(
                runtime.context, document, task["language"], task["round"], **memory
            )
        else:
            review = await ask_reviewer(
                runtime.context, reviewer, document, task["language"], task["round"]
            )
    except Exception as error:
        failure = reason_failure(error).as_dict()
        failed = _reviewer_failed(task["round"], reviewer, failure)
        return {"reviews": [{**failed, "remedy": remedy_for(error)}]}
    _emit(ReviewerFinished(round=task["round"], reviewer=reviewer, review=review))
    return {"reviews": [{"reviewer": reviewer, "review": review.model_dump(mode="json")}]}


def _reviewer_failed(number: int, reviewer: str, failure: dict[str, Any]) -> dict[str, Any]:
    """Tell that `reviewer`'s answer did not count, and keep why in the state: its words in
    English (`failed`: the record, the judge's prompt) and as a failure (`failure`)."""
    reason = say(failure["code"], failure["values"], "en")
    log.warning("review round %d: %s failed: %s", number, reviewer, reason)
    _emit(ReviewerFailed(round=number, reviewer=reviewer, **failure))
    return {"reviewer": reviewer, "failed": reason, "failure": failure}


# --- the judge ---------------------------------------------------------------------------


def reviews_for_judge(outcomes: list[dict[str, Any]], tracking: RoundTracking | None = None) -> str:
    shown = {
        o["reviewer"]: o.get("review") or {"unavailable": o.get("failed", "")} for o in outcomes
    }
    if tracking is not None and isinstance(shown.get("red_team"), dict):
        # The findings with their issue ids, so the judge can rank and rule on them by id.
        shown["red_team"] = {
            **shown["red_team"],
            "improvements": [
                i.model_dump(mode="json", exclude_none=True) for i in tracking.improvements
            ],
        }
    ordered = {p: shown[p] for p in PERSPECTIVES if p in shown}
    return json.dumps(ordered, ensure_ascii=False, indent=1)


async def judge_reviews(state: ReviewState, runtime: Runtime[ReviewContext]) -> dict[str, Any]:
    outcomes = state["reviews"]
    number = state["round"]
    if not any("review" in o for o in outcomes):
        failure = Failure(FailureCode.REVIEW_NOTHING_TO_JUDGE).as_dict()
        return {"judge": _reviewer_failed(number, "judge", failure)}
    document = DocumentStructure.model_validate(state["document"])
    try:
        judge = await ask_reviewer(
            runtime.context,
            "judge",
            document,
            state["language"],
            number,
            reviews=reviews_for_judge(outcomes, red_team_tracking(state)),
        )
    except Exception as error:
        return {"judge": _reviewer_failed(number, "judge", reason_failure(error).as_dict())}
    _emit(ReviewerFinished(round=number, reviewer="judge", review=judge))
    return {"judge": {"review": judge.model_dump(mode="json")}}


# --- the decision ------------------------------------------------------------------------


def round_record(state: ReviewState) -> ReviewRound:
    """This round's reviews as a `ReviewRound` (before the decision)."""
    record = ReviewRound(round=state["round"])
    fields = {"red_team": RedTeamReview, "blue_team": BlueTeamReview, "client": ClientReview}
    for outcome in [*state["reviews"], {"reviewer": "judge", **(state["judge"] or {})}]:
        reviewer = outcome["reviewer"]
        if "review" in outcome:
            model = fields.get(reviewer, JudgeReview)
            setattr(record, reviewer, model.model_validate(outcome["review"]))
        elif "failed" in outcome:
            record.failures.append(
                ReviewerFailure(
                    reviewer=reviewer,
                    reason=outcome["failed"],
                    failure=outcome.get("failure", {}),
                )
            )
    return record


async def decide_next_action(state: ReviewState, runtime: Runtime[ReviewContext]) -> dict[str, Any]:
    """`generate_review_feedback` then `determine_next_action`; the round's summary is logged."""
    document = DocumentStructure.model_validate(state["document"])
    record = round_record(state)
    if record.red_team is None and record.judge is None:
        red = next((o for o in state["reviews"] if o["reviewer"] == "red_team"), {})
        raise ReviewRoundFailed(
            record.round,
            [f.reviewer for f in record.failures],
            remedy=red.get("remedy", "retry"),
        )
    # ids and statuses, on a section or document-wide, in the judge's order
    rulings, statuses = remember_round(record, state, document)
    record.feedback = generate_review_feedback(
        document, record.round, record.improvements, record.blue_team, record.judge,
        state["language"], rulings,
    )  # fmt: skip
    history = [
        {
            "total_improvements": r.total_improvements,
            "score": r.score,
            "scored_by": sorted(r.scores_by_reviewer()),
        }
        for r in (ReviewRound.model_validate(d) for d in state["rounds"])
    ]
    red_failure = next((f.reason for f in record.failures if f.reviewer == "red_team"), None)
    record.decision = determine_next_action(
        record.improvements,
        record.round,
        history,
        max_rounds=state["max_rounds"],
        score=record.score,
        scored_by=sorted(record.scores_by_reviewer()),
        document_wide=record.document_wide,
        red_team_failure=red_failure,
        statuses=statuses,
        overruled=rulings.overruled_ids,
    )
    summary = review_summary(record)
    log.info("%s", summary)
    _emit(
        DecisionMade(
            round=record.round,
            decision=record.decision,
            feedback=record.feedback,
            summary=summary,
            record=record,
        )
    )
    update: dict[str, Any] = {"rounds": [*state["rounds"], record.model_dump(mode="json")]}
    if record.decision.action == "approve":
        update["stop_reason"] = record.decision.reason
        _emit(RoundFinished(round=record.round, record=record, document=document))
    return update


def route_after_decision(state: ReviewState) -> str:
    if state["stop_reason"]:
        return "finish"
    return "await_user_edits" if state["pause_after_round"] else "revise_sections"


# --- the authors -------------------------------------------------------------------------


def _author_model(ctx: ReviewContext) -> Any:
    model = ctx.factory.for_role("ReviewAuthor", callbacks=[ctx.tracker])
    if ctx.factory.endpoint.embedded:
        extra = {"grammar": embedded.SECTION_GRAMMAR, "max_tokens": embedded.SECTION_TOKENS}
        return model.bind(extra_body=extra)
    return model


async def revise_one(
    ctx: ReviewContext,
    document: DocumentStructure,
    feedback: SectionFeedback,
    round_number: int,
    language: str,
) -> SectionRevision:
    section = document.section(feedback.agent_id)
    _emit(AuthorStarted(round=round_number, agent_id=section.id, title=section.title))
    prompt = render_prompt(
        "review/author.md",
        title=document.title,
        round=round_number,
        document=with_ids(document),
        agent_id=section.id,
        section_title=section.title,
        content=section.content.strip(),
        feedback=feedback,
        feedback_json=feedback.model_dump_json(indent=1),
        language=language,
    )

    async def on_token(text: str) -> None:
        _emit(AuthorToken(round=round_number, agent_id=section.id, text=text))

    async def on_retry(attempt: int, error: BaseException, wait: float) -> None:
        _emit(AuthorReset(round=round_number, agent_id=section.id))

    label = f"Review author {section.id} round {round_number}"
    conversation: list[BaseMessage] = [HumanMessage(prompt)]
    common = {"agent_id": section.id, "title": section.title, "before": section.content}
    rejected = ""
    refusal = None
    try:
        for attempt in range(2):  # the answer, and once more if it cannot replace the section
            text = await complete_text(
                _author_model(ctx),
                conversation,
                policy=policy_for("ReviewAuthor", ctx.factory.settings),
                on_token=on_token,
                on_retry=on_retry,
                label=label,
            )
            if not text.strip():
                raise ValueError("the model's answer was empty")
            refusal = refusal_for(section, text, feedback.specific_tasks)
            rejected = refusal.text("en") if refusal else ""
            if refusal is None:
                break
            log.warning(
                "review round %d: author of %s: %s%s",
                round_number, section.id, rejected, "; asking again" if attempt == 0 else "",
            )  # fmt: skip
            if attempt == 0:
                _emit(AuthorReset(round=round_number, agent_id=section.id))
                conversation += [
                    AIMessage(text),
                    HumanMessage(
                        render_prompt(
                            "review/author_reask.md",
                            reason=refusal.text(language),
                            agent_id=section.id,
                            section_title=section.title,
                            ids=", ".join(requirement_ids(section.content)),
                            language=language,
                        )
                    ),
                ]
    except Exception as error:
        reason = reason_for(error)
        log.warning("review round %d: author of %s failed: %s", round_number, section.id, reason)
        revision = SectionRevision(**common, after=section.content, failed=reason)
    else:
        if rejected:
            # Asked twice, refused twice: the section keeps its text and the run goes on.
            revision = SectionRevision(
                **common,
                after=section.content,
                rejected=rejected,
                refusal=refusal.failure.as_dict(),
            )
        else:
            revised = document.with_content(section.id, text.strip("\n") + "\n").section(section.id)
            revision = SectionRevision(**common, after=revised.content)
    _emit(SectionRevised(round=round_number, revision=revision))
    return revision


async def revise_sections(state: ReviewState, runtime: Runtime[ReviewContext]) -> dict[str, Any]:
    """The sections in focus, concurrently, each with its own feedback; every other section
    (and every failed author's section) stays byte for byte the same."""
    ctx = runtime.context
    document = DocumentStructure.model_validate(state["document"])
    record = ReviewRound.model_validate(state["rounds"][-1])
    assert record.decision is not None
    revisions = await asyncio.gather(
        *(
            revise_one(ctx, document, record.feedback[agent_id], record.round, state["language"])
            for agent_id in record.decision.focus_on
            if agent_id in record.feedback
        )
    )
    for revision in revisions:
        if revision.changed:
            document = document.with_content(revision.agent_id, revision.after)
    record.revisions = list(revisions)
    _emit(RoundFinished(round=record.round, record=record, document=document))
    return {
        "document": document.model_dump(mode="json"),
        "rounds": [*state["rounds"][:-1], record.model_dump(mode="json")],
    }


async def await_user_edits(state: ReviewState, runtime: Runtime[ReviewContext]) -> dict[str, Any]:
    """ "Pause after each round", before the authors revise: wait for the user; resume with
    {"edits": {section id: content}, "drop": [issue id], "add": [{agent_id, priority, issue}]}
    (`reqstudio.modes.review.user_decision`)."""
    record = ReviewRound.model_validate(state["rounds"][-1])
    assert record.decision is not None
    answer = interrupt(
        {
            "round": record.round,
            "focus_on": record.decision.focus_on,
            "findings": [i.model_dump(mode="json") for i in record.improvements],
        }
    )
    decision = ReviewDecision.model_validate(answer or {})
    document = DocumentStructure.model_validate(state["document"])
    earlier = [ReviewRound.model_validate(r) for r in state["rounds"][:-1]]
    try:
        record = apply_findings_decision(decision, record, earlier, document, state["language"])
    except ReviewDecisionError as error:
        # Checked before resuming; one that still gets here is applied not at all (nor its
        # edits): the authors revise as the reviewers asked.
        log.warning("review round %d: the user's decision was not applied: %s", record.round, error)
        return {}
    applied = []
    for agent_id, content in decision.edits.items():
        if agent_id in document.section_ids and content.strip():
            document = document.with_content(agent_id, content)
            applied.append(agent_id)
    record.edited_by_user = applied
    for what, ids in (("dropped", record.dropped_by_user), ("added", record.added_by_user)):
        if ids:
            log.info("review round %d: the user %s %s", record.round, what, ", ".join(ids))
    if applied:
        log.info("review round %d: the user edited %s", record.round, ", ".join(applied))
    return {
        "document": document.model_dump(mode="json"),
        "rounds": [*state["rounds"][:-1], record.model_dump(mode="json")],
    }


async def finish(state: ReviewState, runtime: Runtime[ReviewContext]) -> dict[str, Any]:
    return {}
