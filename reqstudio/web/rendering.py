"""How every mode shows things: markdown table cells and tables, the downloads attached to a
result, and the Resume offer made once per browser session. The modes decide what to show;
step titles with their outcome are `reqstudio.web.session.finish_step`."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import chainlit as cl

from reqstudio.export import DOCX_MEDIA_TYPE, ExportError, docx_name, markdown_to_docx
from reqstudio.web.reqif_files import REQIF_MEDIA_TYPE, reqif_copy, reqif_name

MIME_TYPES = {
    ".json": "application/json",
    ".md": "text/markdown",
    ".docx": DOCX_MEDIA_TYPE,
    ".csv": "text/csv",
    ".reqif": REQIF_MEDIA_TYPE,
}
log = logging.getLogger("reqstudio.ui")


# Chainlit draws a Plotly chart with Plotly's own white page whatever the app's theme: with no
# background and a mid grey for text and grid, a chart reads on the light and the dark theme.
GRID = "rgba(128, 128, 128, 0.3)"
THEME_NEUTRAL = {
    "paper_bgcolor": "rgba(0, 0, 0, 0)",
    "plot_bgcolor": "rgba(0, 0, 0, 0)",
    "font": {"color": "#8b929c"},
}


def cell(text: Any) -> str:
    """Text for one markdown table cell: one line, no column bar."""
    return " ".join(str(text).split()).replace("|", "/")


def markdown_table(head: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(v) or " " for v in row) + " |" for row in rows]
    return "\n".join(lines)


def json_bytes(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, indent=2).encode()


async def word_copy(markdown: str) -> bytes | None:
    """The document as a .docx (pandoc, off the event loop); None if it cannot be made, which
    is logged: the Markdown file is still offered."""
    try:
        return await asyncio.to_thread(markdown_to_docx, markdown)
    except ExportError as error:
        log.warning("no .docx beside the document: %s", error)
        return None


async def with_document_copies(contents: dict[str, bytes]) -> dict[str, bytes]:
    """The files, each Markdown document followed by its .docx and its .reqif (`improved.md`,
    `improved.docx`, `improved.reqif`), so that a generated document is there in Word and in
    a requirements tool without another click."""
    result: dict[str, bytes] = {}
    for name, content in contents.items():
        result[name] = content
        if not name.endswith(".md"):
            continue
        markdown = content.decode("utf-8")
        if docx := await word_copy(markdown):
            result[docx_name(name)] = docx
        if reqif := await reqif_copy(markdown, name.removesuffix(".md")):
            result[reqif_name(name)] = reqif
    return result


def downloads(contents: dict[str, bytes]) -> list[cl.File]:
    """A result's files by name, each with the type its ending says."""
    return [
        cl.File(
            name=name,
            content=content,
            mime=next((m for end, m in MIME_TYPES.items() if name.endswith(end)), "text/markdown"),
        )
        for name, content in contents.items()
    ]


# (browser session, run) pairs already offered: restoring a thread reconnects the browser,
# which runs on_chat_resume a second time.
OFFERED: set[tuple[str, str]] = set()


def first_offer(key: str) -> bool:
    """True the first time this browser session asks about `key`; then False."""
    offer_key = (cl.context.session.id, key)
    if offer_key in OFFERED:
        return False
    OFFERED.add(offer_key)
    return True


def forget_offer(key: str) -> None:
    """Ask again next time (the offer could not be made)."""
    OFFERED.discard((cl.context.session.id, key))


async def offer_resume(
    run_key: str | None,
    is_pending: Callable[[str], Awaitable[Any]],
    content: str | Callable[[], str],
    action: cl.Action,
) -> None:
    """Offer to resume `run_key` once per browser session, when its saved run is unfinished;
    `content` may be worded from what `is_pending` found (called after it)."""
    if not run_key or not first_offer(str(run_key)):
        return
    if await is_pending(run_key):
        text = content() if callable(content) else content
        await cl.Message(content=text, actions=[action]).send()
