"""Sharing a thread read-only with other signed-in users.

Chainlit's own thread sharing: the author picks Share in the thread's menu, which marks the
thread `is_shared` (only the author can, `PUT /project/thread/share`, checked by Chainlit),
and gets a `/share/<thread id>` link that shows the thread read-only. Off unless
`REQSTUDIO_THREAD_SHARING=true`; then a shared thread is shown to signed-in users only
(`reqstudio/web/ownership.py` refuses the link to a visitor who is not signed in), never written to
by them (every write route checks the thread is the caller's). Chainlit's switch and this
callback are set by reqstudio/web/chainlit_seam.py."""

from __future__ import annotations

from typing import Any


async def may_view_shared_thread(thread: dict[str, Any], viewer: Any) -> bool:
    """A signed-in user may view a thread its author shared."""
    metadata = thread.get("metadata") or {}
    return viewer is not None and isinstance(metadata, dict) and bool(metadata.get("is_shared"))
