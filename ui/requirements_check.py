"""The deterministic requirements check (`agents/check`, `reqstudio check`) in the browser:
a folded step with a table of findings per section and the summary line, shown under every
generated SRS and every document uploaded for review (issue 22 item 4). It needs no model."""

from __future__ import annotations

import asyncio
import logging

from ui.session import send_finished_step
from ui.texts import Catalog, lang

log = logging.getLogger("reqstudio.check")

tr = Catalog("check")


def check_tables(text: str, language: str, request_sentences: list[str] | None = None) -> str:
    from agents.check.engine import check_document
    from agents.check.report import markdown_tables

    return markdown_tables(check_document(text, request=request_sentences), language)


async def show_requirements_check(text: str, request_sentences: list[str] | None = None) -> None:
    """The check of `text` as a finished step (off the event loop: it is CPU work). With the
    sentences of the request it was written from, also those no requirement traces to."""
    if not text.strip():
        return
    try:
        tables = await asyncio.to_thread(check_tables, text, lang(), request_sentences)
    except Exception:  # the check is an aid: a failure of it never ends the run
        log.exception("requirements check failed")
        return
    await send_finished_step(tr("step"), "tool", tables, icon="list-checks")
