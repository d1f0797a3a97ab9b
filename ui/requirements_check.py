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


def check_tables(text: str, language: str) -> str:
    from agents.check.engine import check_document
    from agents.check.report import markdown_tables

    return markdown_tables(check_document(text), language)


async def show_requirements_check(text: str) -> None:
    """The check of `text` as a finished step (off the event loop: it is CPU work)."""
    if not text.strip():
        return
    try:
        tables = await asyncio.to_thread(check_tables, text, lang())
    except Exception:  # the check is an aid: a failure of it never ends the run
        log.exception("requirements check failed")
        return
    await send_finished_step(tr("step"), "tool", tables, icon="list-checks")
