"""SRS mode's pause after a ReqClarify round in the browser.

The list is shown as a table with each item's score and status; the user accepts it, or sends
changes in the same small command language as the terminal (`edit FR-02 …`, `remove FR-03`,
`add …`, `score FR-01 2`). Text commands rather than a form: they need no custom element, read
the same in both languages, can be pasted, and are tested once for the CLI and the browser.
A refused decision (an unknown id, a line that is no command) is one line and asked again."""

from __future__ import annotations

import chainlit as cl

from reqstudio.modes.srs.decisions import DecisionError, HumanDecision, parse_commands
from reqstudio.modes.srs.events import DecisionApplied, Paused
from reqstudio.web.session import LocalizedAskAction
from reqstudio.web.texts import Catalog, lang

tr = Catalog("srs")

ASK_TIMEOUT = 1800


def paused_table(paused: Paused) -> str:
    rows = [tr("paused_header"), "|---|---|---|---|---|"]
    for row in paused.requirements:
        score = "" if row.score is None else f"{row.score:+d}" if row.score else "0"
        reason = row.reason.replace("|", "/")
        rows.append(
            f"| {row.id} | {score} | {tr('status.' + row.status)} | "
            f"{row.content.replace('|', '/')} | {reason} |"
        )
    return "\n".join(rows)


async def ask_for_decision(paused: Paused, refused: str = "") -> HumanDecision | None:
    """Accept, or the user's changes; None if nobody answered (the run keeps waiting)."""
    while True:
        intro = tr("paused_last" if paused.last_round else "paused", round=paused.round)
        content = f"{intro}\n\n{paused_table(paused)}"
        if refused:
            content = f"⚠️ {refused}\n\n{content}"
        question = LocalizedAskAction(  # the table stays once answered
            content=content,
            actions=[
                cl.Action(name="srs_accept", payload={"a": "accept"}, label=tr("accept")),
                cl.Action(name="srs_change", payload={"a": "change"}, label=tr("change")),
            ],
            timeout=ASK_TIMEOUT,
        )
        question.parent_id = None  # below the round's steps, not under the user's message
        answer = await question.send()
        if answer is None:
            await cl.Message(content=tr("paused_waiting")).send()
            return None
        if answer.get("payload", {}).get("a") != "change":
            return HumanDecision()
        ask = cl.AskUserMessage(content=tr("commands_prompt"), timeout=ASK_TIMEOUT)
        ask.parent_id = None
        reply = await ask.send()
        if reply is None:
            await cl.Message(content=tr("paused_waiting")).send()
            return None
        try:
            return parse_commands(reply.get("output", ""))
        except DecisionError as error:
            refused = error.message(lang())


def decision_text(event: DecisionApplied) -> str:
    changes = event.changes
    if changes.get("accepted_as_is"):
        return tr("decision_accepted", round=event.round)
    parts = []
    for key in ("edited", "removed", "added"):
        if changes.get(key):
            parts.append(tr("decision_" + key, ids=", ".join(changes[key])))
    for rid, score in (changes.get("scores") or {}).items():
        parts.append(tr("decision_score", id=rid, score=f"{score:+d}" if score else "0"))
    return tr("decision_applied", round=event.round, what="; ".join(parts))
