"""The one way ReqStudio calls a model: whole answers only, one retry policy per call.

- An answer is complete only when the provider ended it with `stop` (or tool calls) and it
  carries something: text or a tool call. A stream that stops without a finish reason
  (connection closed, no `[DONE]`), a `content_filter` finish and an empty answer are faults,
  retried like a dropped connection; a `length` finish is never taken as a whole answer
  (`IncompleteAnswerError`; structured calls re-ask, documents continue). The same holds in
  every structured-output mode: the OpenAI SDK's `LengthFinishReasonError` and
  `ContentFilterFinishReasonError` (raised when `response_format` is a JSON schema) become
  the same `IncompleteAnswerError`.
- Each call has one retry policy (`RetryPolicy`), counted once: the SDK's own retries are off
  (`ModelFactory` builds clients with `max_retries=0`) and nothing else retries the same call.
  Tenacity runs the loop; every retry is logged with the call's label.
- Each call reports its waits (request sent, answer arriving, a try failed and the next one
  coming, its end) to the observers of the context it runs in (`reqstudio.waits`): the
  browser and the command line show them; engines pass nothing along.
- Failures that retrying cannot fix (401, 400, a `length` finish) are raised at once.

Worst case for one call, with a provider that never answers: `attempts × OPENAI_TIMEOUT`
plus the backoff waits (`RetryPolicy.worst_case_seconds`); the README lists it per role.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import httpx
import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.messages.ai import add_ai_message_chunks
from langchain_core.messages.utils import message_chunk_to_message
from langchain_core.runnables import Runnable
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
)

from reqstudio.model_roles import DEFAULT_POLICY, RetryPolicy, declared
from reqstudio.waits import CallWatch, watched_call

log = logging.getLogger("reqstudio.calls")

T = TypeVar("T")

TokenCallback = Callable[[str], Awaitable[None] | None]
RetryCallback = Callable[[int, BaseException, float], Awaitable[None] | None]


class _DeclaredPolicies(Mapping[str, RetryPolicy]):
    """The call policies the registered modes declare with their roles
    (`reqstudio.model_roles`): each role's own, and its re-asks as `<role>_<key>`. Read at
    each look-up, so a mode registered later brings its policies along."""

    def __getitem__(self, name: str) -> RetryPolicy:
        return declared().policies[name]

    def __iter__(self) -> Iterator[str]:
        return iter(declared().policies)

    def __len__(self) -> int:
        return len(declared().policies)


ROLE_POLICIES: Mapping[str, RetryPolicy] = _DeclaredPolicies()


def policy_for(role: str, settings: Any = None) -> RetryPolicy:
    """The role's policy; `OPENAI_MAX_RETRIES` (retries after the first try) overrides counts."""
    policy = ROLE_POLICIES.get(role, DEFAULT_POLICY)
    override = getattr(settings, "max_retries", None)
    if override is not None:
        policy = RetryPolicy(override + 1, policy.backoff)
    scale = getattr(settings, "retry_backoff_scale", 1.0)
    return policy.scaled(scale) if scale != 1.0 else policy


_INCOMPLETE_WHAT = {
    "cut": "stopped before it finished",
    "length": "hit the length limit (finish reason: length)",
    "content_filter": "was stopped by the provider's content filter (finish reason: content_filter)",
    "empty": "was empty (no text and no tool call)",
}


class IncompleteAnswerError(RuntimeError):
    """The model's answer did not end properly.

    reason "cut": the stream stopped without a finish reason (retried as transient);
    reason "content_filter": the provider's filter stopped the answer (retried as transient);
    reason "empty": the answer ended with no text and no tool call (retried as transient);
    reason "length": the answer hit the length limit (not retried here: the caller re-asks
    for JSON, or continues a document)."""

    def __init__(self, reason: str, partial: str, label: str = ""):
        self.reason = reason
        self.partial = partial
        self.label = label
        what = _INCOMPLETE_WHAT.get(reason, f"ended with finish reason {reason!r}")
        super().__init__(f"{label + ': ' if label else ''}the model's answer {what}")

    @property
    def cause_code(self) -> str:
        """The fault as a wait's cause (`reqstudio.waits.Cause`): cut, length, ..."""
        return self.reason


_TRANSIENT_STATUS = {408, 409, 429}
# Faults of one answer that the same request may well not repeat.
RETRIED_INCOMPLETE = frozenset({"cut", "content_filter", "empty"})
# Finish reasons that end a whole answer; anything else (length, content_filter, a provider's
# own) is not a result.
WHOLE_FINISHES = frozenset(
    {"stop", "tool_calls", "function_call", "end_turn", "tool_use", "stop_sequence", "eos"}
)


def is_transient(error: BaseException) -> bool:
    """Worth another try: the same request may well succeed."""
    if isinstance(error, IncompleteAnswerError):
        return error.reason in RETRIED_INCOMPLETE
    if isinstance(error, openai.APIStatusError):
        return error.status_code in _TRANSIENT_STATUS or error.status_code >= 500
    return isinstance(
        error,
        openai.APIConnectionError  # includes APITimeoutError
        | openai.APIResponseValidationError
        | httpx.TransportError
        | ConnectionError  # a stream cut below the SDK (reqstudio/coalesce.py)
        | json.JSONDecodeError
        | asyncio.TimeoutError,
    )


async def notify(callback: Callable[..., Any] | None, *args: Any) -> None:
    if callback is None:
        return
    result = callback(*args)
    if inspect.isawaitable(result):
        await result


def retrying(
    policy: RetryPolicy,
    label: str,
    on_retry: RetryCallback | None,
    retry_on,
    watch: CallWatch | None = None,
) -> AsyncRetrying:
    """Tenacity's loop for one call's tries; each retry is logged, given to `on_retry` (the
    caller drops what it showed of the failed try) and then reported to `watch`'s observers."""

    async def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        wait = policy.wait_before(state.attempt_number + 1)
        log.warning(
            "%s: try %d of %d failed (%s); trying again in %.1f s",
            label or "model call",
            state.attempt_number,
            policy.attempts,
            _short(error),
            wait,
        )
        await notify(on_retry, state.attempt_number + 1, error, wait)
        if watch is not None and error is not None:
            await watch.failed(error, wait, state.attempt_number)

    return AsyncRetrying(
        stop=stop_after_attempt(max(policy.attempts, 1)),
        wait=lambda state: policy.wait_before(state.attempt_number + 1),
        retry=retry_if_exception(retry_on),
        before_sleep=before_sleep,
        reraise=True,
    )


async def watched_tries(
    policy: RetryPolicy,
    label: str,
    work: Callable[[CallWatch | None], Awaitable[T]],
    retry_on: Callable[[BaseException], bool],
    *,
    on_retry: RetryCallback | None = None,
    streamed: bool = False,
) -> T:
    """`work(watch)`'s result, tried per `policy` while it raises what `retry_on` accepts (then
    the last error is raised), watched as one call (`reqstudio.waits.watched_call`; `streamed`
    when its text is shown as it comes): each retry is logged and given to `on_retry`."""
    async with watched_call(label, policy.attempts, streamed=streamed) as watch:
        async for attempt in retrying(policy, label, on_retry, retry_on, watch):
            with attempt:
                return await work(watch)
    raise AssertionError("unreachable")  # pragma: no cover - tenacity reraises


def _short(error: BaseException | None) -> str:
    if error is None:
        return "unknown"
    status = getattr(error, "status_code", None)
    return f"{type(error).__name__}{f' {status}' if status else ''}"


def finish_reason(message: BaseMessage) -> str | None:
    meta = getattr(message, "response_metadata", None) or {}
    return meta.get("finish_reason") or meta.get("stop_reason") or meta.get("done_reason")


async def stream_once(
    model: Runnable,
    messages: Sequence[BaseMessage],
    on_token: TokenCallback | None,
    label: str,
    on_reasoning: TokenCallback | None = None,
    text_required: bool = False,
    watch: CallWatch | None = None,
) -> AIMessage:
    """One try: the streamed answer, whole, or `IncompleteAnswerError` saying why not. An
    answer with neither text nor tool calls is "empty"; with `text_required` (prose: an
    answer, a document) so is one that holds only tool calls. `watch` hears when the request
    leaves, when its answer begins (the first chunk carrying something: a provider's empty
    opening chunk is no answer yet), and when a begun answer goes quiet and comes again.
    The chunks are joined once at the end (`chunk + chunk` per token copies the whole answer
    so far each time: a tenth of the app's CPU per streamed token)."""
    chunks: list[AIMessageChunk] = []
    if watch is not None:
        await watch.sent()
    try:
        # Closed here, in this task, however the loop ends: a Stop lands in `on_token` as
        # often as not, and a stream left open was closed later by the loop in another task,
        # where the HTTP client's cancel scopes broke and a later Stop could be lost.
        async with contextlib.aclosing(model.astream(list(messages))) as stream:
            async for chunk in stream:
                chunks.append(chunk)
                if watch is not None and _carries_something(chunk):
                    await watch.chunk_came()
                if on_reasoning is not None:
                    # A reasoning model's thinking (DeepSeek-R1, Qwen), kept by ChatDeepSeek.
                    thinking = chunk.additional_kwargs.get("reasoning_content")
                    if isinstance(thinking, str) and thinking:
                        await notify(on_reasoning, thinking)
                if on_token is not None and isinstance(chunk.content, str) and chunk.content:
                    await notify(on_token, chunk.content)
    except openai.LengthFinishReasonError:
        # response_format = JSON schema: the SDK parses the answer and refuses a cut one.
        raise IncompleteAnswerError("length", _text_of(_joined(chunks)), label) from None
    except openai.ContentFilterFinishReasonError:
        raise IncompleteAnswerError("content_filter", _text_of(_joined(chunks)), label) from None
    finally:
        if watch is not None:
            watch.try_over()  # a stream that is over is not "quiet"
    merged = _joined(chunks)
    if merged is None:
        raise IncompleteAnswerError("cut", "", label)
    text = _text_of(merged)
    reason = finish_reason(merged)
    if reason is None:
        raise IncompleteAnswerError("cut", text, label)
    if reason not in WHOLE_FINISHES:
        raise IncompleteAnswerError(reason, text, label)
    calls_only = bool(merged.tool_calls or merged.invalid_tool_calls) and not text_required
    if not text.strip() and not calls_only:
        raise IncompleteAnswerError("empty", text, label)
    return message_chunk_to_message(merged)


def _carries_something(chunk: BaseMessage) -> bool:
    """Text, a tool call or reasoning: the answer has begun. A model built without streaming
    gives its whole answer as one `AIMessage` (tool calls, no tool-call chunks)."""
    return bool(
        chunk.content
        or getattr(chunk, "tool_call_chunks", None)
        or getattr(chunk, "tool_calls", None)
        or chunk.additional_kwargs.get("reasoning_content")
    )


def _joined(chunks: list[AIMessageChunk]) -> AIMessageChunk | None:
    if not chunks:
        return None
    return chunks[0] if len(chunks) == 1 else add_ai_message_chunks(chunks[0], *chunks[1:])


def _text_of(message: BaseMessage | None) -> str:
    if message is None:
        return ""
    return message.content if isinstance(message.content, str) else str(message.content)


async def complete(
    model: BaseChatModel | Runnable,
    messages: Sequence[BaseMessage],
    *,
    policy: RetryPolicy,
    on_token: TokenCallback | None = None,
    on_retry: RetryCallback | None = None,
    on_reasoning: TokenCallback | None = None,
    label: str = "",
    text_required: bool = False,
) -> AIMessage:
    """One whole answer from `model`, streamed through `on_token`, tried per `policy`
    (`text_required`: see `stream_once`).

    `on_retry(next_attempt, error, wait_s)` runs before each new try, so a UI can discard
    what it showed of the failed one. `on_reasoning` receives a reasoning model's separate
    thinking (`reasoning_content`) as it streams. Raises the last error when the tries run
    out. Its waits are reported to the context's observers (`reqstudio.waits`), as a
    `streamed` call when `on_token` shows its text."""
    return await watched_tries(
        policy,
        label,
        lambda watch: stream_once(
            model, messages, on_token, label, on_reasoning, text_required=text_required, watch=watch
        ),
        is_transient,
        on_retry=on_retry,
        streamed=on_token is not None,
    )


CONTINUE_PROMPT = (
    "Your previous answer was cut off at the length limit. Continue exactly where it stopped, "
    "without repeating anything and without any preface. / 你的上一个回答因长度限制被截断。"
    "请从中断处继续，不要重复，也不要加任何开场白。"
)


async def complete_text(
    model: BaseChatModel | Runnable,
    messages: Sequence[BaseMessage],
    *,
    policy: RetryPolicy,
    on_token: TokenCallback | None = None,
    on_retry: RetryCallback | None = None,
    on_continue: Callable[[int], Awaitable[None] | None] | None = None,
    max_continuations: int = 2,
    label: str = "",
) -> str:
    """A whole prose answer (a document): a `length` finish is continued, up to
    `max_continuations` times, and `on_continue(n)` says so; past that it is an error. An
    answer without text (tool calls only, from a model asked for prose) is "empty"."""
    conversation = list(messages)
    parts: list[str] = []
    for continuation in range(max_continuations + 1):
        try:
            reply = await complete(
                model, conversation, policy=policy, on_token=on_token, on_retry=on_retry,
                label=label, text_required=True,
            )  # fmt: skip
            parts.append(str(reply.content))
            return "".join(parts)
        except IncompleteAnswerError as exc:
            if exc.reason != "length" or continuation == max_continuations:
                exc.partial = "".join(parts) + exc.partial
                raise
            parts.append(exc.partial)
            log.warning("%s: answer hit the length limit; asking the model to continue", label)
            await notify(on_continue, continuation + 1)
            conversation += [AIMessage(exc.partial), HumanMessage(CONTINUE_PROMPT)]
    raise AssertionError("unreachable")  # pragma: no cover
