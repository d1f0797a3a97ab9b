"""Sharing a thread read-only with other signed-in users (issue 18 item 14).

Chainlit's own thread sharing: the author picks Share in the thread's menu, which marks the
thread `is_shared` (only the author can, `PUT /project/thread/share`, checked by Chainlit),
and gets a `/share/<thread id>` link that shows the thread read-only. Off unless
`REQSTUDIO_THREAD_SHARING=true`; then a shared thread is shown to signed-in users only
(`ui/ownership.py` refuses the link to a visitor who is not signed in), never written to
by them (every write route checks the thread is the caller's)."""

from __future__ import annotations

from typing import Any

import chainlit as cl
from chainlit.config import config


def configure_sharing(enabled: bool) -> None:
    config.features.allow_thread_sharing = enabled
    if enabled:
        cl.on_shared_thread_view(may_view_shared_thread)


async def may_view_shared_thread(thread: dict[str, Any], viewer: Any) -> bool:
    """A signed-in user may view a thread its author shared."""
    metadata = thread.get("metadata") or {}
    return viewer is not None and isinstance(metadata, dict) and bool(metadata.get("is_shared"))
