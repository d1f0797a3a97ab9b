"""The four agents of seed 000 as LangGraph nodes, and the list rules they apply.

Each node returns only the state keys it changes. Every LLM interaction appends one entry to
the run's interaction log (iteration, agent, input_messages, raw_output, parsed_output, plus
time and tokens), kept outside the checkpointed state; the seed's console lines go out
through `reqstudio.modes.srs.trail`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from reqstudio.calls import complete_text, watched_tries
from reqstudio.modes.srs.asking import NodeClock, ask_for, chat_model
from reqstudio.modes.srs.document_check import NotADocument, document_reason
from reqstudio.modes.srs.events import (
    DocumentContinued,
    DocumentReset,
    DocumentToken,
    NodeStarted,
)
from reqstudio.modes.srs.first_call import ask_parse
from reqstudio.modes.srs.state import (
    AgentName,
    GraphState,
    Requirement,
    RequirementList,
    Score,
    ScoreList,
    SrsContext,
)
from reqstudio.modes.srs.trace import explore_origins, parse_origins
from reqstudio.modes.srs.trail import say
from reqstudio.prompts import render_prompt

log = logging.getLogger("reqstudio.srs")


class EmptyRequirementList(RuntimeError):
    """ReqParse found no usable requirement in the model's answer."""


class EmptyDocument(ValueError):
    """DocGenerate's answer was empty."""


# --- list rules ---------------------------------------------------------------------------


def normalize_requirements(items: Iterable[Requirement | dict[str, Any]]) -> list[dict[str, str]]:
    """Drop items without an id or content (seed: "跳过无效项"); keep ids as the model wrote
    them (the seed's `str(it.get("id"))`, only trimmed: `fr-3` stays `fr-3`); keep the first
    of repeated ids (ids key the freeze and remove rules, so one id must mean one item)."""
    normalized: list[dict[str, str]] = []
    seen: set[str] = set()
    for item in items:
        req = item if isinstance(item, Requirement) else Requirement.model_validate(item)
        rid = req.id
        if not rid or not req.content or rid in seen:
            continue
        seen.add(rid)
        normalized.append({"id": rid, "content": req.content})
    return normalized


def unfrozen_items(state: GraphState) -> list[dict[str, str]]:
    """The items ReqExplore may change and ReqClarify scores: neither frozen nor removed."""
    closed = set(state["frozen_ids"]) | set(state["removed_ids"])
    return [dict(it) for it in state["req_list"] if it["id"] not in closed]


def effective_requirements(
    req_list: Sequence[dict[str, Any]], removed_ids: Iterable[str]
) -> list[dict[str, str]]:
    """The list without removed items: what DocGenerate writes and the user sees."""
    removed = set(removed_ids)
    return [
        {"id": it["id"], "content": it["content"]} for it in req_list if it["id"] not in removed
    ]


def merge_explored_items(
    previous: Sequence[dict[str, Any]],
    explored: Iterable[Requirement | dict[str, Any]],
    frozen_reqs: dict[str, str],
    frozen_ids: Iterable[str],
    removed_ids: Iterable[str],
) -> list[dict[str, str]]:
    """Seed 000's merge: output naming a frozen or removed id is discarded; frozen items keep
    their frozen text; unfrozen items take the new text (or keep theirs); removed items leave
    the list; ids new to the list are appended in the order the model gave them."""
    frozen = set(frozen_ids)
    removed = set(removed_ids)
    new_map: dict[str, str] = {}
    for item in normalize_requirements(explored):
        if item["id"] in frozen or item["id"] in removed:
            continue
        new_map[item["id"]] = item["content"]
    merged: list[dict[str, str]] = []
    previous_ids = [str(it["id"]) for it in previous]
    old_content = {str(it["id"]): str(it["content"]) for it in previous}
    for rid in previous_ids:
        if rid in removed:
            continue
        if rid in frozen:
            merged.append({"id": rid, "content": frozen_reqs.get(rid, old_content[rid])})
        else:
            merged.append({"id": rid, "content": new_map.get(rid, old_content[rid])})
    known = set(previous_ids)
    for rid, content in new_map.items():
        if rid not in known:
            merged.append({"id": rid, "content": content})
    return merged


@dataclass
class ScoringOutcome:
    scores: dict[str, int]
    reasons: dict[str, str]
    removed_now: list[str]
    frozen_now: list[str]
    skipped: list[str]  # items the seed's int() could not read, or without an id


def freeze_top_scored(scores: dict[str, int], already_frozen: Iterable[str] = ()) -> list[str]:
    """Every id tied at the round's highest score, when that score is at least +1."""
    if not scores:
        return []
    top = max(scores.values())
    if top < 1:
        return []
    frozen = set(already_frozen)
    return [rid for rid, score in scores.items() if score == top and rid not in frozen]


def apply_scores(scored: Iterable[Score], unfrozen: Sequence[dict[str, Any]]) -> ScoringOutcome:
    """Keep scores for this round's unfrozen items only (seed: "仅包含未冻结需求的评分");
    -2 removes, every item tied at the top score (>= +1) freezes. As the seed, each score is
    read with int() (1.5 -> 1, "2" -> 2, 3 stays 3) and an item it cannot read, or one
    without an id, is skipped, not the whole round."""
    allowed = {it["id"] for it in unfrozen}
    scores: dict[str, int] = {}
    reasons: dict[str, str] = {}
    skipped: list[str] = []
    for item in scored:
        rid = item.id
        if not rid or item.score is None:
            skipped.append(rid or "(no id)")
            continue
        if rid in allowed and rid not in scores:
            scores[rid] = item.score
            reasons[rid] = item.reason
    removed_now = [rid for rid, score in scores.items() if score == -2]
    frozen_now = freeze_top_scored(scores)
    return ScoringOutcome(scores, reasons, removed_now, frozen_now, skipped)


# --- shared plumbing ------------------------------------------------------------------


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def message_log(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    roles = {"human": "user", "ai": "assistant", "system": "system"}
    return [{"role": roles.get(m.type, m.type), "content": str(m.content)} for m in messages]


def interaction_log(
    *,
    iteration: int,
    agent: AgentName,
    messages: Sequence[BaseMessage],
    raw_output: str | None,
    parsed_output: Any,
    clock: NodeClock,
    attempts: int = 1,
    parse_errors: Sequence[str] = (),
) -> dict[str, Any]:
    return {
        "iteration": iteration,
        "agent": agent,
        "input_messages": message_log(messages),
        "raw_output": raw_output,
        "parsed_output": parsed_output,
        "attempts": attempts,
        "parse_errors": list(parse_errors),
        **clock.as_log(),
    }


def announce(runtime: Runtime[SrsContext], agent: AgentName, round_number: int) -> None:
    runtime.stream_writer(NodeStarted(agent=agent, round=round_number))


# --- asking the model -----------------------------------------------------------------------

# --- the agents -----------------------------------------------------------------------


def record(runtime: Runtime[SrsContext], entry: dict[str, Any]) -> dict[str, Any]:
    """Append one interaction to the run's log (outside the state); the state only counts."""
    log_count = runtime.context.log.append(entry)
    return {"log_count": log_count}


async def req_parse(state: GraphState, runtime: Runtime[SrsContext]) -> dict[str, Any]:
    """Natural-language requirements -> an atomic FR/NFR/CON list."""
    iteration = state["iteration"] + 1  # seed: ReqParse is iteration 1 ("递增")
    ctx = runtime.context
    if ctx.first_call is not None:  # started before the graph was built: its answer
        asked = await ctx.first_call.relay(runtime.stream_writer)
    else:
        asked = await ask_parse(
            runtime.stream_writer, ctx.factory, ctx.tracker, state["user_input"]
        )
    messages, answer, clock = asked.messages, asked.answer, asked.clock
    req_list = normalize_requirements(answer.value.requirements)
    if not req_list:
        raise EmptyRequirementList(
            "ReqParse: the model's answer held no item with an id and content"
        )
    entry = interaction_log(
        iteration=iteration,
        agent="ReqParse",
        messages=messages,
        raw_output=answer.raw_output,
        parsed_output=req_list,
        clock=clock,
        attempts=answer.attempts,
        parse_errors=answer.parse_errors,
    )
    say(runtime, "parse_done", count=len(req_list))
    return {
        "req_list": req_list,
        "origins": parse_origins(state["user_input"], req_list),
        "iteration": iteration,
        "last_node": "ReqParse",
        **record(runtime, entry),
    }


async def req_explore(state: GraphState, runtime: Runtime[SrsContext]) -> dict[str, Any]:
    """Refine and expand the unfrozen, non-removed items, guided by the last scores."""
    round_number = state["iteration"]  # the seed's "第 X 轮"
    rounds = state.get("rounds", 0) + 1
    announce(runtime, "ReqExplore", round_number)
    say(runtime, "explore_start", round=round_number)
    unfrozen = unfrozen_items(state)
    if not unfrozen:
        return {"last_node": "ReqExplore", "rounds": rounds}
    ctx = runtime.context
    clock = NodeClock.start()
    frozen_payload = [
        {"id": rid, "content": state["frozen_reqs"].get(rid, "")} for rid in state["frozen_ids"]
    ]
    removed_payload = [
        {"id": rid, "content": state["removed_reqs"].get(rid, "")} for rid in state["removed_ids"]
    ]
    scores_payload = [
        {
            "id": it["id"],
            "score": state["scores"][it["id"]],
            "reason": state["score_reasons"].get(it["id"], ""),
        }
        for it in unfrozen
        if it["id"] in state["scores"]
    ]
    prompt = render_prompt(
        "srs/req_explore.md",
        frozen_payload_json=to_json(frozen_payload),
        removed_payload_json=to_json(removed_payload),
        unfrozen_list_json=to_json(unfrozen),
        scores_arr_unfrozen_json=to_json(scores_payload),
        requirement_style=ctx.factory.settings.srs_requirement_style,
    )
    messages = [HumanMessage(prompt)]
    answer = await ask_for(
        ctx.factory, "ReqExplore", messages, RequirementList, [ctx.tracker, clock.usage]
    )
    merged = merge_explored_items(
        state["req_list"],
        answer.value.requirements,
        state["frozen_reqs"],
        state["frozen_ids"],
        state["removed_ids"],
    )
    entry = interaction_log(
        iteration=round_number,
        agent="ReqExplore",
        messages=messages,
        raw_output=answer.raw_output,
        parsed_output=normalize_requirements(answer.value.requirements),
        clock=clock,
        attempts=answer.attempts,
        parse_errors=answer.parse_errors,
    )
    say(
        runtime,
        "explore_done",
        total=len(merged),
        frozen=len(state["frozen_ids"]),
        removed=len(state["removed_ids"]),
    )
    # round k's new items answer round k-1's scores, given against the reference
    scored_against = state["reference_srs"] if state["ablation_mode"] == "none" else ""
    origins = explore_origins(
        state.get("origins") or {},
        state["req_list"],
        merged,
        round_number,
        scored_against if round_number > 1 else "",
    )
    return {
        "req_list": merged,
        "origins": origins,
        "last_node": "ReqExplore",
        "rounds": rounds,
        **record(runtime, entry),
    }


async def req_clarify(state: GraphState, runtime: Runtime[SrsContext]) -> dict[str, Any]:
    """Score every unfrozen item -2..+2 against the reference SRS; remove -2s, freeze the top."""
    round_number = state["iteration"]  # the seed's "第 X 轮"; it adds 1 when done
    announce(runtime, "ReqClarify", round_number)
    say(runtime, "clarify_start", round=round_number)
    unfrozen = unfrozen_items(state)
    if not unfrozen:
        return {
            "iteration": round_number + 1,
            "scores": {},
            "score_reasons": {},
            "last_node": "ReqClarify",
        }
    ctx = runtime.context
    clock = NodeClock.start()
    prompt = render_prompt(
        "srs/req_clarify.md",
        unfrozen_list_json=to_json(unfrozen),
        reference_srs=state["reference_srs"],
    )
    messages = [HumanMessage(prompt)]
    answer = await ask_for(
        ctx.factory, "ReqClarify", messages, ScoreList, [ctx.tracker, clock.usage]
    )
    outcome = apply_scores(answer.value.scores, unfrozen)
    if outcome.skipped:
        say(
            runtime,
            "clarify_skipped",
            count=len(outcome.skipped),
            items=", ".join(outcome.skipped),
        )
    contents = {it["id"]: it["content"] for it in state["req_list"]}
    removed_ids = [*state["removed_ids"], *outcome.removed_now]
    removed_reqs = {**state["removed_reqs"], **{r: contents[r] for r in outcome.removed_now}}
    frozen_ids = [*state["frozen_ids"], *outcome.frozen_now]
    frozen_reqs = {**state["frozen_reqs"], **{r: contents[r] for r in outcome.frozen_now}}
    entry = interaction_log(
        iteration=round_number,
        agent="ReqClarify",
        messages=messages,
        raw_output=answer.raw_output,
        parsed_output=[
            {"id": rid, "score": score, "reason": outcome.reasons[rid]}
            for rid, score in outcome.scores.items()
        ],
        clock=clock,
        attempts=answer.attempts,
        parse_errors=[
            *answer.parse_errors,
            *(f"skipped unreadable score item: {rid}" for rid in outcome.skipped),
        ],
    )
    top = max(outcome.scores.values(), default=None)
    say(
        runtime,
        "clarify_removed",
        now=len(outcome.removed_now),
        total=len(removed_ids),
    )
    say(
        runtime,
        "clarify_frozen",
        top="-" if top is None else top,
        now=len(outcome.frozen_now),
        total=len(frozen_ids),
    )
    say(runtime, "clarify_done")
    return {
        "scores": outcome.scores,
        "score_reasons": outcome.reasons,
        "removed_ids": removed_ids,
        "removed_reqs": removed_reqs,
        "frozen_ids": frozen_ids,
        "frozen_reqs": frozen_reqs,
        "iteration": round_number + 1,
        "last_node": "ReqClarify",
        **record(runtime, entry),
    }


async def doc_generate(state: GraphState, runtime: Runtime[SrsContext]) -> dict[str, Any]:
    """Write the IEEE 830 SRS in Markdown from the list without removed items, streaming it."""
    announce(runtime, "DocGenerate", state["iteration"])
    ctx = runtime.context
    clock = NodeClock.start()
    effective = effective_requirements(state["req_list"], state["removed_ids"])
    prompt = render_prompt(
        "srs/doc_generate.md",
        effective_req_list_json=to_json(effective),
        requirement_style=ctx.factory.settings.srs_requirement_style,
    )
    messages = [HumanMessage(prompt)]
    model = chat_model(ctx.factory, "DocGenerate", [ctx.tracker, clock.usage])
    errors: list[str] = []

    def show(text: str) -> None:
        runtime.stream_writer(DocumentToken(text=text))

    def start_again(attempt: int, error: BaseException, wait: float) -> None:
        errors.append(f"{type(error).__name__}: {error}")
        runtime.stream_writer(DocumentReset(attempt=attempt))

    def continue_after_length(count: int) -> None:
        errors.append("length: continued")
        runtime.stream_writer(DocumentContinued(count=count))

    async def write_document() -> str:
        say(runtime, "doc_stream_start")
        document = await complete_text(
            model,
            messages,
            policy=ctx.factory.policy("DocGenerate"),
            on_token=show,
            on_retry=start_again,
            on_continue=continue_after_length,
            label="DocGenerate",
        )
        say(runtime, "doc_stream_end")
        if not document.strip():
            raise EmptyDocument("DocGenerate: the model's answer was empty")
        problem = document_reason(document)
        if problem is not None:
            raise NotADocument(problem)
        return document

    policy = ctx.factory.policy("DocGenerate_document")
    # a document written again is said as a retry, like a model call's (reqstudio.waits)
    document = await watched_tries(
        policy,
        "DocGenerate document",
        lambda watch: write_document(),
        lambda error: isinstance(error, NotADocument),
        on_retry=start_again,
        streamed=True,
    )
    # Seed: raw_output is None here because the document was streamed; it is in srs_output.
    entry = interaction_log(
        iteration=state["iteration"],
        agent="DocGenerate",
        messages=messages,
        raw_output=None,
        parsed_output=None,
        clock=clock,
        attempts=len(errors) + 1,
        parse_errors=errors,
    )
    say(runtime, "doc_done")
    return {
        "srs_output": document,
        "srs_stream_printed": True,
        "last_node": "DocGenerate",
        **record(runtime, entry),
    }
