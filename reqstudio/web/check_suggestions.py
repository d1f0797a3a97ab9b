"""The browser's "suggest a rewrite" under the requirements check: the model proposes a new
wording of one requirement (`reqstudio.check.suggest`, role CheckSuggest), the meaning guard
judges it, and the step shows the word diff with the guard's verdict: accepted with the
findings before and after, refused with the reasons, or no suggestion (the call failed)."""

from __future__ import annotations

import asyncio

import chainlit as cl

from reqstudio import messages
from reqstudio.errors import describe_failure
from reqstudio.web.session import finish_step, open_top_level_step
from reqstudio.web.settings_panel import thread_factory
from reqstudio.web.texts import Catalog

tr = Catalog("check")


def suggestion_text(suggestion, language: str) -> str:
    """The suggestion as Markdown: its verdict, then the word diff (removed words struck
    through, added ones in bold)."""
    r = suggestion.requirement
    guarded = suggestion.guarded
    if guarded is None:
        return tr("suggest_failed", requirement=r.label, error=suggestion.error)
    if guarded.accepted:
        head = tr(
            "suggest_accepted",
            requirement=r.label,
            before=len(guarded.findings_before),
            after=len(guarded.findings_after),
        )
    else:
        separator = messages.text("check_suggest.separator", language)
        head = tr(
            "suggest_refused",
            requirement=r.label,
            reasons=separator.join(guarded.reasons(language)),
        )
    return f"{head}\n\n{_markdown_diff(r.body, guarded.rewrite)}\n\n> {guarded.rewrite}"


def _markdown_diff(old: str, new: str) -> str:
    from reqstudio.check.worddiff import word_diff

    out = []
    for op in word_diff(old, new):
        if op.tag == "equal":
            out.append(op.new)
            continue
        if op.old.strip():
            out.append(f"~~{op.old.strip()}~~ ")
        if op.new.strip():
            out.append(f"**{op.new.strip()}** ")
    return "".join(out).strip()


async def suggest_for(text: str, requirement_id: str, language: str) -> None:
    from reqstudio.check.engine import check_document
    from reqstudio.check.suggest import requirements_to_fix, suggest_one
    from reqstudio.web.check_findings import current_verdicts

    report = check_document(text, verdicts=await current_verdicts(), cross=False)
    todo = [(r, f) for r, f in requirements_to_fix(report) if r.label == requirement_id]
    if not todo:
        await cl.Message(content=tr("suggest_nothing", requirement=requirement_id)).send()
        return
    step = await open_top_level_step(tr("suggesting", requirement=requirement_id), "llm")
    try:
        suggestion = await suggest_one(thread_factory(), *todo[0])
    except asyncio.CancelledError:
        await finish_step(step, "stopped")
        raise
    except Exception as exc:
        reason = describe_failure(exc, language)
        await finish_step(step, "failed")  # the message below says why, once
        await cl.Message(
            content=tr("suggest_failed", requirement=requirement_id, error=reason)
        ).send()
        return
    body = suggestion_text(suggestion, language)
    await finish_step(step, "done" if suggestion.guarded is not None else "failed")
    await cl.Message(content=body).send()
