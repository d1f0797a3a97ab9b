"""Cancelled timers leave the event loop's heap, as asyncio itself would have them leave.

Chainlit applies nest_asyncio, whose loop step drops cancelled timers only from the head of
the timer heap; asyncio's own step also rebuilds the heap once more than half of it is
cancelled. Every streamed chunk arms a timer and cancels it a moment later (httpx/anyio's read
timeout, 60 s; langchain_openai's chunk timeout, 120 s), so under the patched step each one
stayed in the heap, with the context it captured, until its deadline: 150 000 of them at 20
streaming users, which made every full garbage collection take 200-300 ms.
`purge_cancelled_timers` is asyncio's rule (`base_events._run_once`), run by a task."""

from __future__ import annotations

import asyncio
import heapq
import logging

log = logging.getLogger("reqstudio.loop")

# asyncio.base_events: the heap is rebuilt when it holds more than this many timers and more
# than this share of them is cancelled.
MIN_SCHEDULED = 100
CANCELLED_SHARE = 0.5


def purge_cancelled_timers(loop: asyncio.AbstractEventLoop) -> int:
    """Drop the cancelled timers from `loop`'s heap when they are more than half of it;
    returns how many were dropped. A loop without a timer heap is left alone."""
    scheduled = getattr(loop, "_scheduled", None)
    if not isinstance(scheduled, list) or len(scheduled) <= MIN_SCHEDULED:
        return 0
    kept = [handle for handle in scheduled if not handle.cancelled()]
    dropped = len(scheduled) - len(kept)
    if dropped <= CANCELLED_SHARE * len(scheduled):
        return 0
    for handle in scheduled:
        if handle.cancelled():
            handle._scheduled = False  # as asyncio marks a timer it removes
    heapq.heapify(kept)
    scheduled[:] = kept  # in place: the patched loop step may hold the list
    if hasattr(loop, "_timer_cancelled_count"):
        loop._timer_cancelled_count = 0
    return dropped


async def keep_timer_heap_clean(interval: float = 1.0) -> None:
    """Run `purge_cancelled_timers` on the running loop every `interval` seconds."""
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(interval)
        dropped = purge_cancelled_timers(loop)
        if dropped:
            log.debug("dropped %d cancelled timers from the event loop's heap", dropped)
