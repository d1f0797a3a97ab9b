"""In the browser, the user allows or refuses each call of an MCP tool that may change
things (reqstudio/tools/confirmation.py decides which): the chat shows the tool and its arguments
with two buttons. No answer in time counts as a refusal."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import chainlit as cl

from reqstudio.web.session import LocalizedAskAction
from reqstudio.web.texts import Catalog

CONFIRM_SECONDS = 120

tr = Catalog("tool_confirmation")

_ONE_AT_A_TIME = "tool_confirmation_lock"  # calls of one round ask one after another


async def ask_in_chat(tool: str, arguments: dict[str, Any]) -> bool:
    lock = cl.user_session.get(_ONE_AT_A_TIME)
    if lock is None:
        lock = asyncio.Lock()
        cl.user_session.set(_ONE_AT_A_TIME, lock)
    shown = json.dumps(arguments, ensure_ascii=False, indent=1)
    question = LocalizedAskAction(
        content=tr("ask", tool=tool, args=shown),
        actions=[
            cl.Action(name="allow_tool", payload={"allow": True}, label=tr("allow")),
            cl.Action(name="refuse_tool", payload={"allow": False}, label=tr("refuse")),
        ],
        timeout=CONFIRM_SECONDS,
    )
    question.parent_id = None  # below the tool's step, which is at the top level too
    async with lock:
        answer = await question.send()
    return bool((answer or {}).get("payload", {}).get("allow"))
