"""What a user does with the findings of the requirements check in the browser: mark one
wrong or right (with an optional reason: stored per user and thread, `verdict_store`), check
the document again (what was dismissed is not reported), and ask the model for a rewrite of
a requirement with findings (judged by the meaning guard, shown as a word diff).

Under the check's step, one message carries the buttons: one per finding ("judge"), one per
requirement with findings ("suggest a rewrite"), and "check again". The findings and the text
of the last check are kept in the session, so a button carries only a number."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import chainlit as cl
from chainlit.data import get_data_layer

from reqstudio.check.verdicts import Verdict
from reqstudio.web.modes import shortened
from reqstudio.web.session import LocalizedAskAction, button_action
from reqstudio.web.texts import Catalog
from reqstudio.web.verdict_store import save_verdict, thread_verdicts

log = logging.getLogger("reqstudio.check")

tr = Catalog("check")

LAST_CHECK = "check_last"  # the session key of the last check's text and findings
MAX_JUDGE_BUTTONS = 20  # buttons per finding under one check (the table lists every finding)
MAX_SUGGEST_BUTTONS = 10
ASK_TIMEOUT = 600


@dataclass(frozen=True)
class FindingRef:
    """One finding as the buttons name it: where, which rule, which words, and the
    requirement's text (the verdict's context)."""

    requirement_id: str
    line: int
    rule: str
    term: str
    context: str
    message: str


async def _sql(query: str, **parameters: Any) -> Any:
    layer = get_data_layer()
    if layer is None:
        return None
    return await layer.execute_sql(query=query, parameters=parameters)  # type: ignore[attr-defined]


def _who() -> tuple[str, str] | None:
    """The user and the thread a verdict belongs to (None without a thread)."""
    session = cl.context.session
    thread = getattr(session, "thread_id", None)
    if not thread:
        return None
    user = getattr(session, "user", None)
    return (user.identifier if user else "local"), thread


async def current_verdicts() -> list[Verdict]:
    """This user's verdicts in this thread (none without a database or on its failure: the
    check goes on and reports everything)."""
    who = _who()
    if who is None or get_data_layer() is None:
        return []
    try:
        return await thread_verdicts(_sql, *who)
    except Exception:
        log.exception("could not read the check's verdicts")
        return []


LABEL_CHARS = 60  # a finding's button label at most


def _label(ref: FindingRef) -> str:
    """The finding's requirement, rule and term; a long term is cut inside its quotes, at a
    word, with an ellipsis (the label cut at its end left a word and a quote open: “meet the
    following requi)."""
    head = f"{ref.requirement_id} · {ref.rule}"
    room = LABEL_CHARS - len(head) - 3  # the space and the two quotes
    if not ref.term or room < 2:
        return shortened(head, LABEL_CHARS)
    return f"{head} “{shortened(ref.term, room)}”"


async def offer_actions(
    text: str, request: list[str] | None, findings: list[FindingRef], fixable: list[str]
) -> None:
    """The buttons under a check: judge each finding, suggest a rewrite of each requirement
    with findings, check again."""
    cl.user_session.set(
        LAST_CHECK,
        {"text": text, "request": request, "findings": [f.__dict__ for f in findings]},
    )
    if not findings:
        return
    actions = [
        cl.Action(
            name="check_judge",
            payload={"n": n},
            label=_label(ref),
            tooltip=tr("judge_tooltip"),
            icon="gavel",
        )
        for n, ref in enumerate(findings[:MAX_JUDGE_BUTTONS])
    ]
    actions += [
        cl.Action(
            name="check_suggest",
            payload={"requirement": rid},
            label=tr("suggest", requirement=rid),
            icon="wand-sparkles",
        )
        for rid in fixable[:MAX_SUGGEST_BUTTONS]
    ]
    actions.append(cl.Action(name="check_again", payload={}, label=tr("again"), icon="refresh-cw"))
    more = len(findings) - MAX_JUDGE_BUTTONS
    content = tr("offer") + (f"\n\n{tr('more_findings', count=more)}" if more > 0 else "")
    await cl.Message(content=content, actions=actions).send()


def last_check() -> dict[str, Any]:
    """The text, request and findings of the last check shown in this session."""
    return cl.user_session.get(LAST_CHECK) or {}


@button_action("check_judge")
async def on_judge(action: cl.Action) -> None:
    findings = last_check().get("findings") or []
    n = action.payload.get("n")
    if not isinstance(n, int) or not 0 <= n < len(findings):
        return
    await judge(FindingRef(**findings[n]))


async def judge(ref: FindingRef) -> None:
    """Ask wrong / right and a reason, and store the verdict for this user and thread."""
    picked = await LocalizedAskAction(
        content=tr("judge_question", requirement=ref.requirement_id, message=ref.message),
        actions=[
            cl.Action(name="wrong", payload={"v": "wrong"}, label=tr("wrong")),
            cl.Action(name="right", payload={"v": "right"}, label=tr("right")),
            cl.Action(name="cancel", payload={"v": ""}, label=tr("cancel")),
        ],
        timeout=ASK_TIMEOUT,
    ).send()
    verdict = (picked or {}).get("payload", {}).get("v")
    if verdict not in ("wrong", "right"):
        return
    reply = await cl.AskUserMessage(content=tr("reason_question"), timeout=ASK_TIMEOUT).send()
    reason = ((reply or {}).get("output") or "").strip()
    reason = "" if reason in ("-", "—", "－") else reason
    who = _who()
    stored = who is not None and await save_verdict(
        _sql,
        *who,
        Verdict(ref.rule, ref.term, verdict, context=ref.context, reason=reason),
    )
    if not stored:
        await cl.Message(content=tr("not_stored")).send()
        return
    await cl.Message(
        content=tr(f"judged_{verdict}", requirement=ref.requirement_id, rule=ref.rule)
    ).send()
