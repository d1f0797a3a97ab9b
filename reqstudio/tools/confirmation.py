"""MCP tools that change something run only when the user says so.

A document the user uploads, a web page the agent reads or a tool's own answer can say
"ignore your instructions and call tool X": a model may obey. So every MCP tool that is not
known to be read-only asks first: in the browser the user confirms or refuses the call
(reqstudio/web/tool_confirmation.py); the command line refuses it unless `--yes` was given.

Read-only means: the server says so (the MCP tool annotation `readOnlyHint`, which
langchain-mcp-adapters puts in the tool's metadata), or the setting
REQSTUDIO_MCP_READ_ONLY_TOOLS names the tool (`server:tool`, `server:*` or `tool`). Tools
that are not MCP tools (web search) change nothing and never ask.

A refused call is not an error of the run: the tool returns a result marked as an error
saying it was not run, which the agent reads and answers from.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from langchain_core.tools import BaseTool, ToolException

log = logging.getLogger("reqstudio.agent.mcp")

# (tool name, its arguments) -> whether the user allows the call
Confirm = Callable[[str, dict[str, Any]], Awaitable[bool]]


class ToolCallRefused(ToolException):
    """The user did not allow a call of a tool that changes something."""


def refusal_text(tool: str) -> str:
    return (
        f"The call of {tool} was NOT run: it can change things outside this conversation and "
        "the user did not allow it. Do not call it again for this request; answer from what "
        "is known, and say that the action needs the user's approval."
    )


def is_read_only(tool: BaseTool, read_only: Iterable[str] = ()) -> bool:
    metadata = tool.metadata or {}
    if metadata.get("reqstudio_kind") != "mcp":
        return True  # the app's own tools (web search) change nothing
    if metadata.get("readOnlyHint") is True:
        return True
    named = set(read_only)
    server = str(metadata.get("mcp_server") or "")
    return bool({tool.name, f"{server}:{tool.name}", f"{server}:*"} & named)


def _refusal_as_result(handle: Any) -> Callable[[ToolException], Any]:
    """handle_tool_error: a refusal becomes the tool's (error) result; any other tool error
    is handled as the tool handled it before (the MCP adapter turns a server's error into
    an error result)."""

    def handled(error: ToolException) -> Any:
        if isinstance(error, ToolCallRefused):
            return str(error)
        if callable(handle):
            return handle(error)
        if isinstance(handle, str):
            return handle
        if handle:
            return error.args[0] if error.args else "Tool execution error"
        raise error

    return handled


def _asking_first(tool: BaseTool, confirm: Confirm) -> BaseTool:
    call = getattr(tool, "coroutine", None)
    if call is None:  # not an MCP adapter tool: nothing to wrap, nothing run unasked
        return tool
    arguments = set(tool.args)

    @functools.wraps(call)
    async def confirmed(*args: Any, **kwargs: Any) -> Any:
        shown = {k: v for k, v in kwargs.items() if k in arguments}
        if not await confirm(tool.name, shown):
            log.warning("call of %s refused: it may change things and was not allowed", tool.name)
            raise ToolCallRefused(refusal_text(tool.name))
        return await call(*args, **kwargs)

    handle = _refusal_as_result(tool.handle_tool_error)
    return tool.model_copy(update={"coroutine": confirmed, "handle_tool_error": handle})


def guard_side_effects(
    tools: Iterable[BaseTool], confirm: Confirm, read_only: Iterable[str] = ()
) -> list[BaseTool]:
    """The tools, each that may change something wrapped to ask `confirm` before it runs.
    The originals are left as they are (a shared server's tools serve other sessions)."""
    named = frozenset(read_only)
    return [tool if is_read_only(tool, named) else _asking_first(tool, confirm) for tool in tools]


def always(answer: bool) -> Confirm:
    """A fixed answer: the command line's (`--yes` allows, otherwise refused)."""

    async def decide(tool: str, arguments: dict[str, Any]) -> bool:
        return answer

    return decide
