"""The deterministic requirements check (`reqstudio.check`, `reqstudio check`) in the browser:
a folded step with a table of findings per section and the summary line, shown under every
generated SRS and every document uploaded for review. It needs no model. Under it, buttons
to judge each finding, ask for a rewrite, and check again (`reqstudio.web.check_findings`):
the findings this user dismissed in this thread are not reported again."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

import chainlit as cl

from reqstudio.check.verdicts import Verdict
from reqstudio.web.check_findings import FindingRef, current_verdicts, last_check, offer_actions
from reqstudio.web.session import button_action, send_finished_step
from reqstudio.web.texts import Catalog, lang

log = logging.getLogger("reqstudio.check")

tr = Catalog("check")


@dataclass(frozen=True)
class RequirementsCheck:
    tables: str  # the findings per section and the summary line
    requirements: int  # how many requirements the check found in the document
    findings: list[FindingRef] = field(default_factory=list)  # those on a requirement
    fixable: list[str] = field(default_factory=list)  # the requirements with findings
    suppressed: int = 0  # findings a verdict dismissed
    text: str = ""
    request_sentences: list[str] | None = None


def check_tables(
    text: str,
    language: str,
    request_sentences: list[str] | None = None,
    verdicts: list[Verdict] | None = None,
) -> RequirementsCheck:
    from reqstudio.check.engine import check_document
    from reqstudio.check.report import markdown_tables

    report = check_document(text, request=request_sentences, verdicts=verdicts)
    texts = {(r.label, r.line): r.text for r in report.requirements}
    findings = [
        FindingRef(
            f.requirement_id,
            f.line,
            f.rule,
            f.term,
            texts[(f.requirement_id, f.line)],
            f.message_in(language),
        )
        for f in report.findings
        if (f.requirement_id, f.line) in texts
    ]
    fixable = list(dict.fromkeys(f.requirement_id for f in findings))
    return RequirementsCheck(
        markdown_tables(report, language, show_suppressed=True),
        len(report.requirements),
        findings,
        fixable,
        len(report.suppressed),
        text,
        request_sentences,
    )


async def check_requirements(
    text: str, request_sentences: list[str] | None = None
) -> RequirementsCheck | None:
    """The check of `text` (off the event loop: it is CPU work); None when there is nothing to
    check or the check failed. With the sentences of the request it was written from, also
    those no requirement traces to; without the findings this user dismissed in this thread."""
    if not text.strip():
        return None
    verdicts = await current_verdicts()
    try:
        return await asyncio.to_thread(check_tables, text, lang(), request_sentences, verdicts)
    except Exception:  # the check is an aid: a failure of it never ends the run
        log.exception("requirements check failed")
        return None


async def show_check(check: RequirementsCheck | None) -> None:
    """The check as a finished step, and the buttons to act on its findings."""
    if check is not None:
        await send_finished_step(tr("step"), "tool", check.tables, icon="list-checks")
        await offer_actions(check.text, check.request_sentences, check.findings, check.fixable)


async def show_requirements_check(text: str, request_sentences: list[str] | None = None) -> None:
    await show_check(await check_requirements(text, request_sentences))


@button_action("check_again")
async def on_again(action: cl.Action) -> None:
    """The last check again, without what this user dismissed since."""
    last = last_check()
    if last.get("text"):
        await show_requirements_check(last["text"], last.get("request"))


@button_action("check_suggest")
async def on_suggest(action: cl.Action) -> None:
    from reqstudio.web.check_suggestions import suggest_for

    last = last_check()
    rid = action.payload.get("requirement")
    if last.get("text") and isinstance(rid, str):
        language = lang()
        await suggest_for(last["text"], rid, language)
