"""The user's hand between ReqClarify rounds.

With "pause after each round" on, the run stops after every ReqClarify round (LangGraph
`interrupt()`), shows the list with its scores, and resumes with a `HumanDecision`: accept as it
is, or edit, remove, add requirements and override scores. The next round starts from the list
as the user left it; the interaction log records the decision (agent "User").

A decision is checked as a whole before anything is applied: an id that is not in the list is
one clear line (`DecisionError`) and nothing changes. The same small command language serves
the terminal (`reqstudio srs generate --interactive`) and the browser:

    edit FR-02 new text      remove FR-03      add text      add NFR-04 text
    score FR-01 2            accept (or nothing at all)
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import interrupt
from pydantic import BaseModel, Field, ValidationError

from reqstudio.failures import Failure, FailureCode, FailureError
from reqstudio.modes.srs.events import DecisionApplied, PausedRequirement
from reqstudio.modes.srs.nodes import effective_requirements, freeze_top_scored, record
from reqstudio.modes.srs.state import GraphState, SrsContext

log = logging.getLogger("reqstudio.srs")

USER_AGENT = "User"  # the interaction log's `agent` for a human decision
OVERRIDE_REASON = "score set by the user"


class EditRequirement(BaseModel):
    action: Literal["edit"] = "edit"
    id: str = Field(min_length=1)
    content: str = Field(min_length=1)


class RemoveRequirement(BaseModel):
    action: Literal["remove"] = "remove"
    id: str = Field(min_length=1)


class AddRequirement(BaseModel):
    action: Literal["add"] = "add"
    content: str = Field(min_length=1)
    id: str = Field(default="", description="empty: the next free FR number")


class OverrideScore(BaseModel):
    """The score ReqClarify should have given: -2 removes, the round's top (>= +1) freezes."""

    action: Literal["score"] = "score"
    id: str = Field(min_length=1)
    score: int = Field(ge=-2, le=2)


DecisionAction = Annotated[
    EditRequirement | RemoveRequirement | AddRequirement | OverrideScore,
    Field(discriminator="action"),
]


class HumanDecision(BaseModel):
    """What the user decided at a pause. No actions: the list is accepted as it is."""

    actions: list[DecisionAction] = Field(default_factory=list)
    text: str = Field(default="", description="the commands as the user typed them (the log)")

    @property
    def accepted_as_is(self) -> bool:
        return not self.actions


class DecisionError(FailureError):
    """The decision cannot be applied (unknown id, bad command): nothing was applied."""


# --- the command language -------------------------------------------------------------------

_VERBS = {
    "edit": "edit",
    "编辑": "edit",
    "修改": "edit",
    "remove": "remove",
    "rm": "remove",
    "delete": "remove",
    "删除": "remove",
    "add": "add",
    "添加": "add",
    "新增": "add",
    "score": "score",
    "评分": "score",
    "accept": "accept",
    "ok": "accept",
    "接受": "accept",
}
_ID = re.compile(r"^[A-Za-z]+-\d+$")


def parse_commands(text: str) -> HumanDecision:
    """One command per line (see the module's doc); blank lines and `accept` add nothing.
    A line that is not a command is a `DecisionError` naming it."""
    actions: list[Any] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        verb, _, rest = line.partition(" ")
        kind = _VERBS.get(verb.lower())
        rest = rest.strip()
        first, _, tail = rest.partition(" ")
        tail = tail.strip()
        try:
            if kind == "accept" and not rest:
                continue
            if kind == "edit" and first and tail:
                actions.append(EditRequirement(id=first, content=tail))
                continue
            if kind == "remove" and first and not tail:
                actions.append(RemoveRequirement(id=first))
                continue
            if kind == "add" and rest:
                if _ID.match(first) and tail:
                    actions.append(AddRequirement(id=first.upper(), content=tail))
                else:
                    actions.append(AddRequirement(content=rest))
                continue
            if kind == "score" and first and re.fullmatch(r"[+-]?\d", tail):
                actions.append(OverrideScore(id=first, score=int(tail)))
                continue
        except ValidationError:
            pass
        raise DecisionError(
            Failure(FailureCode.DECISION_NOT_A_COMMAND, {"number": number, "line": line})
        )
    return HumanDecision(actions=actions, text=text.strip())


# --- applying a decision --------------------------------------------------------------------


def paused_requirements(state: Mapping[str, Any]) -> list[PausedRequirement]:
    """The list as the pause shows it: every requirement not removed, with this round's score,
    then the ones this round removed (a score override can bring them back)."""
    scores = state.get("scores", {})
    reasons = state.get("score_reasons", {})
    frozen = set(state.get("frozen_ids", []))
    rows = [
        PausedRequirement(
            id=it["id"],
            content=it["content"],
            score=scores.get(it["id"]),
            reason=reasons.get(it["id"], ""),
            status="frozen" if it["id"] in frozen else "open",
        )
        for it in effective_requirements(state.get("req_list", []), state.get("removed_ids", []))
    ]
    removed_reqs = state.get("removed_reqs", {})
    for rid in state.get("removed_ids", []):
        if rid in scores:  # removed by this round's -2
            rows.append(
                PausedRequirement(
                    id=rid,
                    content=removed_reqs.get(rid, ""),
                    score=scores[rid],
                    reason=reasons.get(rid, ""),
                    status="removed",
                )
            )
    return rows


def _next_id(prefix: str, taken: set[str]) -> str:
    numbers = [
        int(m.group(1)) for rid in taken if (m := re.fullmatch(rf"{prefix}-(\d+)", rid, re.I))
    ]
    number = max(numbers, default=0) + 1
    while f"{prefix}-{number:02d}" in taken:
        number += 1
    return f"{prefix}-{number:02d}"


def apply_decision(
    state: Mapping[str, Any], decision: HumanDecision
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The state update a decision makes, and what it changed (for the log and the event).

    Actions apply in order. Edit and remove take a requirement in the list; score also takes
    one this round removed (a score above -2 brings it back). After the overrides the round's
    rule is applied again to this round's scores (-2 removes, every item tied at the top score
    >= +1 freezes); an item frozen in an earlier round whose score is overridden leaves the
    frozen set below +1 and is removed at -2. Raises `DecisionError` (nothing applied) if any
    id is not in the list."""
    req_list = [dict(it) for it in state["req_list"]]
    contents = {it["id"]: it["content"] for it in req_list}
    removed_before = list(state["removed_ids"])
    round_ids = list(state["scores"])  # scored this round: ReqClarify scores open items only
    scores = dict(state["scores"])
    reasons = dict(state["score_reasons"])
    live = [it["id"] for it in effective_requirements(req_list, removed_before)]
    restorable = [rid for rid in removed_before if rid in round_ids]
    user_removed: list[str] = []
    edited: list[str] = []
    added: list[str] = []
    overridden: dict[str, int] = {}
    unknown: list[str] = []

    by_upper = {rid.upper(): rid for rid in [*live, *restorable]}

    def present(rid: str, *, or_restorable: bool = False) -> bool:
        if rid in user_removed:
            return False
        return rid in live or rid in added or (or_restorable and rid in restorable)

    for action in decision.actions:
        if not isinstance(action, AddRequirement):  # "fr-02" names FR-02
            action = action.model_copy(update={"id": by_upper.get(action.id.upper(), action.id)})
        if isinstance(action, AddRequirement):
            rid = action.id or _next_id("FR", set(contents))
            if rid in contents:
                unknown.append(f"{rid} (exists already)")
                continue
            contents[rid] = action.content
            req_list.append({"id": rid, "content": action.content})
            added.append(rid)
        elif not present(action.id, or_restorable=isinstance(action, OverrideScore)):
            unknown.append(action.id)
        elif isinstance(action, EditRequirement):
            contents[action.id] = action.content
            edited.append(action.id)
        elif isinstance(action, RemoveRequirement):
            user_removed.append(action.id)
        elif isinstance(action, OverrideScore):
            scores[action.id] = action.score
            reasons[action.id] = OVERRIDE_REASON
            overridden[action.id] = action.score
    if unknown:
        names = ", ".join(dict.fromkeys(unknown))
        raise DecisionError(Failure(FailureCode.DECISION_UNKNOWN_IDS, {"names": names}))
    for it in req_list:
        it["content"] = contents[it["id"]]

    earlier_frozen = [r for r in state["frozen_ids"] if r not in round_ids]
    earlier_removed = [r for r in removed_before if r not in round_ids]
    round_scores = {r: scores[r] for r in round_ids if r not in user_removed}
    removed_by_score = [r for r, s in round_scores.items() if s == -2]
    frozen_ids: list[str] = []
    for rid in earlier_frozen:
        if rid in user_removed:
            continue
        score = overridden.get(rid)
        if score == -2:
            removed_by_score.append(rid)
        elif score is None or score >= 1:
            frozen_ids.append(rid)
    frozen_ids += freeze_top_scored(round_scores, frozen_ids)
    removed_ids = list(dict.fromkeys([*earlier_removed, *removed_by_score, *user_removed]))
    removed_reqs = {
        rid: text for rid, text in state["removed_reqs"].items() if rid in set(removed_ids)
    }
    for rid in removed_ids:
        removed_reqs.setdefault(rid, contents.get(rid, ""))
    update = {
        "req_list": req_list,
        "scores": scores,
        "score_reasons": reasons,
        "frozen_ids": frozen_ids,
        "frozen_reqs": {rid: contents[rid] for rid in frozen_ids},
        "removed_ids": removed_ids,
        "removed_reqs": removed_reqs,
    }
    changes = {
        "accepted_as_is": decision.accepted_as_is,
        "edited": edited,
        "removed": user_removed,
        "added": added,
        "scores": overridden,
        "frozen_ids": frozen_ids,
        "removed_ids": removed_ids,
    }
    return update, changes


# --- the pause as a graph node ----------------------------------------------------------------


async def await_user_decision(state: GraphState, runtime: Runtime[SrsContext]) -> dict[str, Any]:
    """After a ReqClarify round with "pause after each round" on: wait (LangGraph `interrupt`,
    saved by the checkpointer, so the wait survives a restart) for the user's decision, apply
    it, and record it in the interaction log as agent "User"."""
    round_number = state["iteration"] - 1  # ReqClarify's round (it added 1 when done)
    answer = interrupt({"round": round_number})
    decision = HumanDecision.model_validate(answer or {})
    try:
        update, changes = apply_decision(state, decision)
    except DecisionError as error:  # checked before resuming; a stale decision changes nothing
        log.warning("SRS round %d: the user's decision was not applied: %s", round_number, error)
        update, changes = {}, {"accepted_as_is": True, "refused": str(error)}
    entry = {
        "iteration": round_number,
        "agent": USER_AGENT,
        "input_messages": [],
        "raw_output": decision.text or None,
        "parsed_output": {"decision": decision.model_dump(mode="json"), "applied": changes},
        "attempts": 1,
        "parse_errors": [],
        "seconds": 0.0,
        "model_seconds": 0.0,
        "llm_calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
    }
    runtime.stream_writer(DecisionApplied(round=round_number, changes=changes))
    if changes.get("added") or changes.get("edited"):
        from reqstudio.modes.srs.trace import user_origins

        update["origins"] = user_origins(
            state.get("origins") or {}, changes["added"], changes["edited"], round_number
        )
    return {**update, "last_node": "UserReview", **record(runtime, entry)}
