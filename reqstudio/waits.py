"""What a model call is doing, for whoever shows it: a request sent, its answer arriving, a try
that failed and the next one coming, the call's end.

The one call path (`reqstudio.calls.complete`, `complete_text`, `reqstudio.structured.
ask_structured`, and the team agents' `agent_answer`) reports these events to the observers
of the context it runs in. Whoever starts a run sets them once (`with watching(observer):`):
the browser draws a waiting line and a line per retry, a command prints its retries on
stderr, a test records them. A context variable reaches every call the run makes, in
LangGraph nodes and parallel branches too (each task copies its context when it starts), so
no engine passes a callback along and none knows who is watching. With no observer set, a
call reports nothing and costs nothing.

Why a try failed is a `Cause`: a code and its values (seconds, an HTTP status), never a
sentence. The browser and the command line render it in the user's language from the
message catalogue (`waits.cause.<code>` in `reqstudio/locales/*.toml`)."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

import httpx
import openai

log = logging.getLogger("reqstudio.waits")


@dataclass(frozen=True)
class Cause:
    """Why a try failed, as a code and its values.

    no_answer: nothing arrived for `seconds`; stalled: the answer began, then nothing came for
    `seconds`; http: the provider answered `status`; connection: the connection broke or
    could not be made; cut, content_filter, empty, length: the answer did not end properly
    (see `reqstudio.calls.IncompleteAnswerError`); unreadable: an answer that arrived whole
    but could not be used; malformed: a reply that was no JSON; other: `detail` names it."""

    code: str
    seconds: int | None = None
    status: int | None = None
    detail: str = ""


@dataclass(frozen=True)
class _CallReport:
    """Which call (`call`, numbered per process) reports, and its name for people (`label`)."""

    call: int
    label: str


@dataclass(frozen=True)
class _TryReport(_CallReport):
    """A report about try `attempt` of the call (1 for the first)."""

    attempt: int


@dataclass(frozen=True)
class RequestSent(_TryReport):
    """Try `attempt` of `attempts` leaves. `streamed`: the caller shows the answer's text as it
    comes (so the wait is over when it starts); else only the whole answer ends the wait."""

    attempts: int
    streamed: bool
    type: Literal["sent"] = "sent"


@dataclass(frozen=True)
class AnswerArrived(_TryReport):
    """Text, reasoning or a tool call of try `attempt` came, `seconds` after it left: its
    first, or the first after the answer went quiet (`AnswerQuiet`)."""

    seconds: float
    type: Literal["arrived"] = "arrived"


@dataclass(frozen=True)
class AnswerQuiet(_TryReport):
    """Try `attempt`'s answer began, then nothing more came for `QUIET_AFTER` seconds (a
    provider that stalls mid-stream, a local model whose one slot is busy): it is waited for
    again until the next chunk (`AnswerArrived`) or the try's end."""

    seconds: float  # since the last chunk
    type: Literal["quiet"] = "quiet"


@dataclass(frozen=True)
class TryFailed(_TryReport):
    """Try `attempt` failed for `cause`; try `attempt + 1` of `attempts` follows in `wait` s."""

    attempts: int
    cause: Cause
    wait: float
    type: Literal["retry"] = "retry"

    @property
    def next_attempt(self) -> int:
        return self.attempt + 1


@dataclass(frozen=True)
class CallEnded(_CallReport):
    """The call is over: answered, gave up (`cause` of its last failure) or stopped, after
    `attempts_used` requests it sent."""

    outcome: Literal["answered", "gave_up", "stopped"]
    attempts_used: int
    cause: Cause | None = None
    type: Literal["ended"] = "ended"


CallEvent = RequestSent | AnswerArrived | AnswerQuiet | TryFailed | CallEnded

QUIET_AFTER = 10.0  # seconds without a chunk after an answer began before it is waited for again
Observer = Callable[[CallEvent], Awaitable[None] | None]

_OBSERVERS: ContextVar[tuple[Observer, ...]] = ContextVar("reqstudio_wait_observers", default=())
_call_ids = itertools.count(1)


@contextlib.contextmanager
def watching(observer: Observer) -> Iterator[None]:
    """Every model call made in this context (and in the tasks it starts) reports to
    `observer`, beside any observer already set. Leave it in the task that entered it."""
    token = _OBSERVERS.set((*_OBSERVERS.get(), observer))
    try:
        yield
    finally:
        _OBSERVERS.reset(token)


def cause_of(error: BaseException, seconds: float, arrived: bool) -> Cause:
    """Why a try failed. `seconds`: how long the try had run; `arrived`: whether any of its
    answer had come. ReqStudio's own errors name their code (`cause_code`)."""
    own = getattr(error, "cause_code", None)
    if isinstance(own, str) and own:
        return Cause(own)
    if isinstance(error, TimeoutError | openai.APITimeoutError | httpx.TimeoutException):
        limit = getattr(error, "timeout_s", None)  # LangChain's silence between two chunks
        if arrived:
            return Cause("stalled", seconds=round(limit if limit else seconds))
        return Cause("no_answer", seconds=round(seconds))
    if isinstance(error, openai.APIStatusError):
        return Cause("http", status=error.status_code)
    if isinstance(error, openai.APIResponseValidationError | json.JSONDecodeError):
        return Cause("malformed")
    if isinstance(error, openai.APIConnectionError | httpx.TransportError | ConnectionError):
        return Cause("connection")
    return Cause("other", detail=type(error).__name__)


class CallWatch:
    """One call's reports to the observers set when it began."""

    def __init__(self, label: str, attempts: int, streamed: bool, observers: tuple[Observer, ...]):
        self.call = next(_call_ids)
        self.label = label
        self.attempts = attempts
        self.streamed = streamed
        self.observers = observers
        self.attempt = 0
        self.sent_at = 0.0
        self.arrived = False  # something of the current try's answer came
        self.last_chunk = 0.0  # when the current try's latest chunk came (loop time)
        self.quiet = False  # the current try's answer was reported quiet (`AnswerQuiet`)
        self._quiet_timer: asyncio.TimerHandle | None = None
        self._quiet_check: asyncio.Task | None = None
        self.streaming = False  # the current try's stream is open
        self._order = asyncio.Lock()  # a quiet spell's report and the next chunk's, in turn

    async def report(self, event: CallEvent) -> None:
        for observer in self.observers:
            try:
                result = observer(event)
                if inspect.isawaitable(result):
                    await result
            except asyncio.CancelledError:
                raise
            except Exception:  # a broken display must never break the model call
                log.exception("a wait observer failed on %s", event.type)

    async def sent(self) -> None:
        self.try_over()
        self.attempt += 1
        self.sent_at = time.monotonic()
        self.arrived = False
        self.streaming = True
        await self.report(
            RequestSent(self.call, self.label, self.attempt, self.attempts, self.streamed)
        )

    async def answer_arrived(self) -> None:
        self.arrived = True
        seconds = time.monotonic() - self.sent_at
        await self.report(AnswerArrived(self.call, self.label, self.attempt, seconds))

    async def chunk_came(self) -> None:
        """A chunk carrying something came: the first is the answer's beginning, one after a
        quiet spell its end; the others only move the quiet timer's mark (nothing per token
        is reported, and the timer is set once per `QUIET_AFTER`, not per chunk)."""
        loop = asyncio.get_running_loop()
        self.last_chunk = loop.time()
        if not self.arrived:
            await self.answer_arrived()
            self._quiet_timer = loop.call_at(self.last_chunk + QUIET_AFTER, self._quiet_due)
        elif self.quiet:
            async with self._order:
                self.quiet = False
                await self.answer_arrived()
            self._quiet_timer = loop.call_at(self.last_chunk + QUIET_AFTER, self._quiet_due)

    def _quiet_due(self) -> None:
        loop = asyncio.get_running_loop()
        self._quiet_timer = None
        due = self.last_chunk + QUIET_AFTER
        if loop.time() < due:  # a chunk came meanwhile: look again then
            self._quiet_timer = loop.call_at(due, self._quiet_due)
            return
        self._quiet_check = asyncio.ensure_future(self._report_quiet(self.attempt))

    async def _report_quiet(self, attempt: int) -> None:
        async with self._order:
            loop = asyncio.get_running_loop()
            if self.attempt != attempt or self.quiet or not self.streaming:
                return
            if loop.time() - self.last_chunk < QUIET_AFTER:  # the chunk came first
                self._quiet_timer = loop.call_at(self.last_chunk + QUIET_AFTER, self._quiet_due)
                return
            self.quiet = True
            seconds = loop.time() - self.last_chunk
            await self.report(AnswerQuiet(self.call, self.label, attempt, seconds))

    def try_over(self) -> None:
        """The current try's stream is over (whole, failed or stopped): no quiet spell of it
        is reported from now on (a report already under way says its try's number, which
        the observers no longer wait for)."""
        if self._quiet_timer is not None:
            self._quiet_timer.cancel()
            self._quiet_timer = None
        self.streaming = False
        self.quiet = False

    def cause(self, error: BaseException) -> Cause:
        return cause_of(error, time.monotonic() - self.sent_at, self.arrived)

    async def failed(self, error: BaseException, wait: float, attempt: int) -> None:
        """Try `attempt` of the policy failed (a call that re-asks whole answers sends no
        request of its own: its tries are counted by the policy, not by `sent`)."""
        cause = self.cause(error)
        await self.report(TryFailed(self.call, self.label, attempt, self.attempts, cause, wait))

    async def ended(self, outcome: str, error: BaseException | None = None) -> None:
        cause = self.cause(error) if error is not None else None
        await self.report(CallEnded(self.call, self.label, outcome, self.attempt, cause))  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def watched_call(
    label: str, attempts: int, streamed: bool
) -> AsyncIterator[CallWatch | None]:
    """One model call, watched: its tries report through the `CallWatch` given (None when no
    observer is set), and its end is reported however it ends."""
    observers = _OBSERVERS.get()
    if not observers:
        yield None
        return
    watch = CallWatch(label, attempts, streamed, observers)
    try:
        yield watch
    except asyncio.CancelledError:
        watch.try_over()
        await watch.ended("stopped")
        raise
    except BaseException as error:
        watch.try_over()
        await watch.ended("gave_up", error)
        raise
    else:
        watch.try_over()
        await watch.ended("answered")


# --- in words ---------------------------------------------------------------------------------


def cause_text(cause: Cause, language: str) -> str:
    """The cause in the user's language (`waits.cause.<code>`)."""
    from reqstudio.messages import catalog, text

    key = f"waits.cause.{cause.code}"
    if key not in catalog(language):
        key, cause = "waits.cause.other", Cause("other", detail=cause.code)
    return text(key, language, seconds=cause.seconds, status=cause.status, detail=cause.detail)


def retry_text(event: TryFailed, language: str) -> str:
    """ "try 2 of 3 after 120 s without an answer", in the user's language."""
    from reqstudio.messages import text

    return text(
        "waits.retry",
        language,
        attempt=event.next_attempt,
        attempts=event.attempts,
        cause=cause_text(event.cause, language),
    )


def wait_seconds(wait: float) -> str:
    """A wait before the next try as people read it: 1, 0.5, 0.02."""
    return f"{wait:.2g}" if wait < 1 else f"{math.ceil(wait)}"


def stderr_retries(language: str, say: Callable[[str], None]) -> Observer:
    """An observer for a command: each retry as one line (through `say`), in `language`."""
    from reqstudio.messages import text

    def observe(event: CallEvent) -> None:
        if isinstance(event, TryFailed):
            say(
                text(
                    "waits.cli_retry",
                    language,
                    who=event.label or "model",
                    retry=retry_text(event, language),
                    wait=wait_seconds(event.wait),
                )
            )

    return observe
