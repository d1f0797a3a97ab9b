"""A provider's stream in fewer, larger chunks: at most one every `interval` seconds.

A provider sends a chunk per token (about 4 characters, every 15-30 ms). Each chunk that
LangChain's `BaseChatModel.astream` yields costs the app its callbacks and message objects,
and LangChain keeps every one until the answer ends, to merge them for its callbacks: about
twelve objects per token that every full garbage collection walks while answers stream. At
20 users that collection stopped the event loop for 120 ms. Joined here, below
LangChain (in the model's `_astream`), the tokens of one interval become one chunk with the
same text, the same tool-call pieces, usage and finish reason (`ChatGenerationChunk`s add up
exactly as LangChain merges them at the end).

What the user sees does not change: the first chunk after a pause goes out at once, later
ones at most `interval` late (the browser already gets tokens at most every 30 ms per tab,
`reqstudio/web/token_stream.py`); a failure ends the stream after what came before it.

The provider's stream is read by its own task, so a slow reader does not slow the reading; the
task is ended, and the stream closed in it, however the consumer stops."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from langchain_core.outputs import ChatGenerationChunk
from langchain_core.outputs.chat_generation import merge_chat_generation_chunks
from langchain_openai import StreamChunkTimeoutError
from pydantic import BaseModel, Field

T = TypeVar("T")

log = logging.getLogger("reqstudio.coalesce")

STREAM_INTERVAL = 0.05  # seconds between two chunks of one answer, at most 20 a second
SILENCE_ENV = "LANGCHAIN_OPENAI_STREAM_CHUNK_TIMEOUT_S"

_END = object()


class _Failed:
    def __init__(self, error: BaseException):
        self.error = error


def _is_ending(item: object) -> bool:
    return item is _END or isinstance(item, _Failed)


class _Reader:
    """Reads `source` in its own task into a queue; its end (or failure, or a silence past
    `silence_limit`) is queued last and cuts short the consumer's `pause`."""

    def __init__(
        self,
        source: AsyncIterator[Any],
        silence_limit: float | None,
        on_silence: Callable[[int], BaseException],
    ):
        self.loop = asyncio.get_running_loop()
        self.source = source
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.received = 0
        self.last_received = self.loop.time()
        self.ended = False
        self.waker: asyncio.Future[None] | None = None
        self.silence_limit = silence_limit
        self.on_silence = on_silence
        self.task = self.loop.create_task(self._pump(), name="coalesced-stream")
        self.task.add_done_callback(self._stopped)
        self.watchdog = (
            self.loop.call_at(self.last_received + silence_limit, self._watch)
            if silence_limit
            else None
        )

    async def _pump(self) -> None:
        try:
            async for item in self.source:
                self.received += 1
                self.last_received = self.loop.time()
                self.queue.put_nowait(item)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # given to the consumer after what came before it
            self._end(_Failed(error))
        else:
            self._end(_END)
        finally:
            aclose = getattr(self.source, "aclose", None)
            if aclose is not None:
                await aclose()

    def _stopped(self, task: asyncio.Task[None]) -> None:
        """The reader ended without saying how (cancelled by something else than `close`, or
        a BaseException): the consumer must not wait for an end that never comes."""
        if not self.ended:
            error = None if task.cancelled() else task.exception()
            self._end(_Failed(error or ConnectionError("the provider's stream was cut off")))

    def _end(self, ending: object) -> None:
        self.ended = True
        self.queue.put_nowait(ending)
        self._wake()

    def _wake(self) -> None:
        if self.waker is not None and not self.waker.done():
            self.waker.set_result(None)

    def _watch(self) -> None:
        if self.task.done() or self.silence_limit is None:
            return
        if self.loop.time() - self.last_received >= self.silence_limit:
            self.task.cancel()
            self._end(_Failed(self.on_silence(self.received)))
        else:
            self.watchdog = self.loop.call_at(self.last_received + self.silence_limit, self._watch)

    async def pause(self, seconds: float) -> None:
        """Wait `seconds`, or less if the source ends meanwhile: its last items go at once."""
        if self.ended:
            return
        self.waker = self.loop.create_future()
        timer = self.loop.call_later(seconds, self._wake)
        try:
            await self.waker
        finally:
            timer.cancel()
            self.waker = None

    def take(self) -> list[Any]:
        held = []
        while not self.queue.empty():
            held.append(self.queue.get_nowait())
        return held

    async def close(self) -> None:
        """Stop reading if the consumer stopped early; after the end, let the reader close the
        provider's stream undisturbed (the HTTP response goes back to its pool)."""
        if self.watchdog is not None:
            self.watchdog.cancel()
        if not self.ended and not self.task.done():
            self.ended = True  # a cancelled reader is no fault of the source
            self.task.cancel()
        try:
            await self.task
        except asyncio.CancelledError:
            pass
        except Exception:  # closing a stream that was read whole: the answer stands
            log.warning("closing the provider's stream failed", exc_info=True)


async def coalesced(
    source: AsyncIterator[T],
    interval: float,
    join: Callable[[list[T]], T],
    *,
    silence_limit: float | None = None,
    on_silence: Callable[[int], BaseException] = lambda received: TimeoutError(),
) -> AsyncIterator[T]:
    """`source`'s items, those that come within `interval` of the last one given joined into
    one (`join`, in order); the first after a quiet `interval` is given at once, and so is
    what comes before the source's end. With `silence_limit`, a source that gives nothing
    for that many seconds is ended and `on_silence(items received)` raised (one timer per
    silence, not one per item)."""
    reader = _Reader(source, silence_limit, on_silence)
    last_given = float("-inf")
    try:
        while True:
            held = [await reader.queue.get()]
            wait = last_given + interval - reader.loop.time()
            if wait > 0 and not _is_ending(held[0]):
                await reader.pause(wait)
            held += reader.take()
            items = [item for item in held if not _is_ending(item)]
            if items:
                last_given = reader.loop.time()
                yield items[0] if len(items) == 1 else join(items)
            ending = held[-1]
            if isinstance(ending, _Failed):
                raise ending.error
            if ending is _END:
                return
    finally:
        await reader.close()


def join_generation_chunks(chunks: list[ChatGenerationChunk]) -> ChatGenerationChunk:
    merged = merge_chat_generation_chunks(chunks)
    assert merged is not None  # never called with no chunks
    return merged


class CoalescedStream(BaseModel):
    """Mixed into a LangChain chat model class (before it): its stream comes coalesced.

    The model is built with LangChain's own per-chunk bound off (`stream_chunk_timeout=None`:
    it wraps every chunk's wait in a task and a timer, a sixth of a chunk's CPU); the same
    bound is kept here, once per stream: no chunk for `stream_silence_limit` seconds (the
    same setting and default, LANGCHAIN_OPENAI_STREAM_CHUNK_TIMEOUT_S or 120 s) ends the
    answer with LangChain's `StreamChunkTimeoutError`, a `TimeoutError` (tried again)."""

    stream_silence_limit: float | None = Field(
        default_factory=lambda: silence_limit_from(os.environ.get(SILENCE_ENV)),
        exclude=True,
    )

    async def _astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        model_name = getattr(self, "model_name", None)
        limit = self.stream_silence_limit

        def silence(received: int) -> BaseException:
            return StreamChunkTimeoutError(
                limit or 0.0, model_name=model_name, chunks_received=received
            )

        stream = super()._astream(*args, **kwargs)  # type: ignore[misc]
        async for chunk in coalesced(
            stream, STREAM_INTERVAL, join_generation_chunks, silence_limit=limit, on_silence=silence
        ):
            yield chunk


def silence_limit_from(value: str | None) -> float | None:
    """LangChain's reading of LANGCHAIN_OPENAI_STREAM_CHUNK_TIMEOUT_S: unset or unreadable is
    120 s, 0 is no limit."""
    try:
        seconds = 120.0 if value is None else float(value)
    except ValueError:
        seconds = 120.0
    return seconds if seconds > 0 else None


@functools.cache
def coalescing(model_class: type) -> type:
    """`model_class` whose stream comes in chunks at most `STREAM_INTERVAL` apart (same name:
    LangChain's traces and the provider see the same model)."""
    return type(model_class.__name__, (CoalescedStream, model_class), {"__module__": __name__})
