"""A thread as Markdown: `GET /reqstudio/export/<thread id>` answers the
thread's messages and steps, in order, as a `.md` download, to its author only (anyone else,
and an unknown id, gets 404). The browser shows a download button in the header on a thread's
page (`public/reqstudio.js`)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from chainlit import server as chainlit_server
from chainlit.data import get_data_layer
from fastapi import APIRouter, HTTPException, Response

router = APIRouter()
NOT_FOUND = HTTPException(status_code=404, detail="Not found")
HANDLERS = ("on_message", "on_chat_start", "on_chat_resume")  # Chainlit's runs, not content
SAFE_NAME = re.compile(r"[^\w\u4e00-\u9fff.-]+")


def thread_markdown(thread: dict[str, Any]) -> str:
    """The thread as one Markdown document: its name, then each message (who said it) and
    each top-level step (its title and what it showed), in the order they happened; files by
    name."""
    parts = [f"# {thread.get('name') or 'ReqStudio'}", ""]
    top_level = {s["id"] for s in thread.get("steps") or [] if not s.get("parentId")}
    elements: dict[str, list[str]] = {}
    for element in thread.get("elements") or []:
        elements.setdefault(element.get("forId") or "", []).append(element.get("name") or "")
    for step in sorted(thread.get("steps") or [], key=lambda s: s.get("createdAt") or ""):
        kind, text = step.get("type"), (step.get("output") or "").strip()
        shown_step = step["id"] in top_level and step.get("name") not in HANDLERS
        if kind == "user_message":
            parts += [f"## 🧑 {step.get('name') or 'User'}", "", text, ""]
        elif kind in ("assistant_message", "system_message") and text:
            parts += ["## ReqStudio", "", text, ""]
        elif kind not in ("assistant_message", "system_message") and shown_step and text:
            parts += [f"### {step.get('name')}", "", text, ""]
        for name in elements.get(step["id"], []):
            parts += [f"📎 {name}", ""]
    return "\n".join(parts).rstrip() + "\n"


@router.get("/reqstudio/export/{thread_id}")
async def export_thread(thread_id: str, current_user: chainlit_server.UserParam) -> Response:
    data_layer = get_data_layer()
    if data_layer is None or current_user is None:
        raise NOT_FOUND
    author = await data_layer.get_thread_author(thread_id)
    if not author or author != current_user.identifier:
        raise NOT_FOUND
    thread = await data_layer.get_thread(thread_id)
    if not thread:
        raise NOT_FOUND
    name = SAFE_NAME.sub("-", thread.get("name") or "thread").strip("-")[:60] or "thread"
    return Response(
        content=thread_markdown(thread).encode("utf-8"),
        media_type="text/markdown; charset=utf-8",
        headers={"Content-Disposition": f"attachment; filename*=UTF-8''{quote(name, safe='')}.md"},
    )
