"""One model call of a team agent: a whole answer or an error, never a cut one.

Beyond what `reqstudio.calls` already refuses (a stream without a finish reason, a
`content_filter` finish, an empty answer), a team agent's answer is also a fault when

- it ends with `length`: the turn cannot go on from half an answer, so the same request is
  tried again, counted in the same retry policy as a cut stream;
- a tool call's arguments are the beginning of a JSON object that never closed (LangChain
  would parse the prefix and run the call with a truncated text): the answer was cut, and is
  tried again. Arguments that are no JSON at all stay a malformed call, which the agent is
  told about and can fix."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.runnables import Runnable
from langchain_core.utils.json import parse_partial_json

from reqstudio.calls import (
    IncompleteAnswerError,
    RetryCallback,
    RetryPolicy,
    is_transient,
    stream_once,
    watched_tries,
)


def worth_retrying(error: BaseException) -> bool:
    if isinstance(error, IncompleteAnswerError) and error.reason == "length":
        return True
    return is_transient(error)


def is_cut_json(raw: Any) -> bool:
    """True for the start of a JSON object that never ended (`{"to": "user", "content": "…`)."""
    if not isinstance(raw, str) or not raw.strip():
        return False
    try:
        json.loads(raw)
        return False
    except json.JSONDecodeError:
        pass
    try:
        return parse_partial_json(raw) is not None
    except (json.JSONDecodeError, ValueError):
        return False


class _Checked:
    """The model's stream, passed through; at its end, a cut tool call raises."""

    def __init__(self, model: Runnable, label: str):
        self.model = model
        self.label = label

    async def astream(self, messages: list[BaseMessage]) -> AsyncIterator[AIMessageChunk]:
        merged: Any = None
        async with aclosing(self.model.astream(messages)) as stream:  # closed in this task
            async for chunk in stream:
                merged = chunk if merged is None else merged + chunk
                yield chunk
        if merged is None:
            return
        raws = [c.get("args") for c in getattr(merged, "tool_call_chunks", None) or []]
        raws += [c.get("args") for c in getattr(merged, "invalid_tool_calls", None) or []]
        if any(is_cut_json(raw) for raw in raws):
            text = merged.content if isinstance(merged.content, str) else ""
            raise IncompleteAnswerError("cut", text, self.label)


async def agent_answer(
    model: Runnable,
    messages: Sequence[BaseMessage],
    *,
    policy: RetryPolicy,
    on_retry: RetryCallback | None = None,
    label: str = "",
) -> AIMessage:
    """A whole answer from `model`, tried per `policy` (`length` and cut tool calls count as
    faults, see the module's text); raises the last error when the tries run out. Its waits
    go to the context's observers (`reqstudio.waits`), as those of every model call."""
    checked = _Checked(model, label)
    return await watched_tries(
        policy,
        label,
        lambda watch: stream_once(checked, messages, None, label, watch=watch),
        worth_retrying,
        on_retry=on_retry,
    )
