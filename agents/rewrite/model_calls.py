"""Streaming a model answer that is whole: the model-call contract of `reqstudio.calls`.

Stand-in until `reqstudio/calls.py` lands on main: same names and signatures (`RetryPolicy`,
`policy_for`, `IncompleteAnswerError`, `complete`), so switching is one import in
`agents/rewrite/nodes.py`. An answer counts only when it ended with a finish reason; a stream
that stops without one is retried by the policy; a `length` finish is raised to the caller.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import openai
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage

from reqstudio.llm import DEFAULT_RETRIES
from reqstudio.settings import Settings

log = logging.getLogger("reqstudio.calls")


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int  # total attempts, the first included
    backoff: tuple[float, ...]  # seconds to wait before attempt 2, 3, ...

    def wait_before(self, attempt: int) -> float:
        if not self.backoff:
            return 0.0
        return self.backoff[min(attempt - 2, len(self.backoff) - 1)]


def policy_for(role: str, settings: Settings, base: float = 1.0) -> RetryPolicy:
    """Attempts per role (seed 000: 3 for list agents, 5 for documents), waits doubling."""
    retries = settings.max_retries if settings.max_retries is not None else DEFAULT_RETRIES[role]
    attempts = max(1, retries)
    return RetryPolicy(attempts, tuple(base * 2**k for k in range(max(0, attempts - 1))))


class IncompleteAnswerError(Exception):
    """The answer did not end with a finish reason ("cut") or ended at the length limit."""

    def __init__(self, reason: str, partial: str = ""):
        super().__init__(f"the answer was incomplete ({reason})")
        self.reason = reason
        self.partial = partial


_TRANSIENT = (
    openai.APIConnectionError,  # also APITimeoutError
    openai.RateLimitError,
    openai.InternalServerError,
    openai.APIResponseValidationError,
    httpx.TransportError,
    json.JSONDecodeError,
)

OnToken = Callable[[str], Awaitable[None] | None]
OnRetry = Callable[[int, BaseException, float], Awaitable[None] | None]


async def _call(callback: Callable[..., Any] | None, *args: Any) -> None:
    if callback is None:
        return
    outcome = callback(*args)
    if asyncio.iscoroutine(outcome) or isinstance(outcome, Awaitable):
        await outcome


async def complete(
    model: Any,
    messages: Sequence[BaseMessage],
    *,
    policy: RetryPolicy,
    on_token: OnToken | None = None,
    on_retry: OnRetry | None = None,
    label: str = "",
) -> AIMessage:
    """Stream `model`'s answer; return it merged only when it ended with a finish reason."""
    for attempt in range(1, policy.attempts + 1):
        merged: AIMessageChunk | None = None
        try:
            async for chunk in model.astream(list(messages)):
                merged = chunk if merged is None else merged + chunk
                if isinstance(chunk.content, str) and chunk.content:
                    await _call(on_token, chunk.content)
            finish = (merged.response_metadata or {}).get("finish_reason") if merged else None
            text = merged.content if merged is not None and isinstance(merged.content, str) else ""
            if finish == "length":
                raise IncompleteAnswerError("length", text)
            if finish is None:
                raise IncompleteAnswerError("cut", text)
            return AIMessage(
                content=merged.content,
                tool_calls=merged.tool_calls,
                usage_metadata=merged.usage_metadata,
                response_metadata=dict(merged.response_metadata),
            )
        except IncompleteAnswerError as error:
            if error.reason == "length" or attempt == policy.attempts:
                raise
            failure: BaseException = error
        except _TRANSIENT as error:
            if attempt == policy.attempts:
                raise
            failure = error
        wait = policy.wait_before(attempt + 1)
        log.warning(
            "%s: attempt %d/%d failed (%s); retrying in %.1f s",
            label or "model call",
            attempt,
            policy.attempts,
            failure,
            wait,
        )
        await _call(on_retry, attempt + 1, failure, wait)
        await asyncio.sleep(wait)
    raise AssertionError("unreachable")
