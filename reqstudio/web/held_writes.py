"""History writes that failed because the database was away, held in order and written again
once it is back.

Chainlit writes a turn's steps, elements and thread row in tasks nobody awaits and drops a
write whose statement failed. During a database outage that lost the turns made meanwhile
from the history, while the open session's model memory kept them. Here a write that failed
because the database could not be reached is held; a task writes the held ones again, oldest
first, once the database answers (tried every `retry_s`, up to `max_retry_s` apart, and at
once when a new write comes). While any are held, new writes queue behind them, so that
nothing lands out of order (a step's update before its creation, an older thread state over
a newer one). A write that fails again with
the database reachable is refused for good and logged; so is one past `limit` held writes.
Held writes live in this process: if it stops before the database is back, they are lost
(`flush` logs how many).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from enum import Enum

log = logging.getLogger("reqstudio")


class Outcome(Enum):
    WRITTEN = "written"
    AWAY = "away"  # the database could not be reached: worth another try
    REFUSED = "refused"  # it answered and refused: another try would fail the same way


Attempt = Callable[[], Awaitable[Outcome]]


class HeldWrites:
    def __init__(self, limit: int = 10_000, retry_s: float = 0.5, max_retry_s: float = 5.0):
        self.limit = limit
        self.retry_s = retry_s
        self.max_retry_s = max_retry_s
        self._queue: deque[tuple[str | None, str, Attempt]] = deque()
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None  # a new write: try now
        self._changed: asyncio.Event | None = None  # some held write landed or was given up
        self.written = 0  # held writes that landed later
        self.lost = 0  # held writes given up (refused, or past the limit)

    def __len__(self) -> int:
        return len(self._queue)

    def of(self, thread: str) -> int:
        """How many writes of `thread`'s session are held."""
        return sum(1 for held_thread, _, _ in self._queue if held_thread == thread)

    def hold(self, thread: str | None, what: str, attempt: Attempt) -> bool:
        """Queue `attempt` (a write of `thread`'s session, named `what` in the log) behind
        those held; False when the queue is full and the write is lost."""
        if len(self._queue) >= self.limit:
            self.lost += 1
            log.warning("history: %s of thread %s lost: %d writes held already", what, thread,
                        len(self._queue))  # fmt: skip
            return False
        if not self._queue:
            log.warning("history: the database is away; writes are held until it is back")
        self._queue.append((thread, what, attempt))
        if self._task is None or self._task.done():
            self._wake, self._changed = asyncio.Event(), asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(
                self._drain(), name="history-held-writes"
            )
        else:
            self._wake.set()
        return True

    async def settled(self, thread: str, timeout: float) -> int:
        """Wait up to `timeout` s for `thread`'s held writes to land; how many are left."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while (left := self.of(thread)) and (wait := deadline - loop.time()) > 0:
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), wait)
        return left

    async def _drain(self) -> None:
        delay = self.retry_s
        while self._queue:
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)
            while self._queue:
                thread, what, attempt = self._queue[0]
                try:
                    outcome = await attempt()
                except Exception:
                    log.exception("history: writing the held %s of thread %s failed", what, thread)
                    outcome = Outcome.REFUSED
                if outcome is Outcome.AWAY:
                    delay = min(delay * 2, self.max_retry_s)
                    break
                self._queue.popleft()
                self._changed.set()
                delay = self.retry_s
                if outcome is Outcome.WRITTEN:
                    self.written += 1
                else:
                    self.lost += 1
                    log.warning("history: the held %s of thread %s was refused", what, thread)
            else:
                log.warning("history: every held write is written (%d so far)", self.written)

    async def flush(self, timeout: float) -> int:
        """Give the held writes up to `timeout` s to land; returns how many are left (lost
        when the process ends)."""
        if self._task is not None and not self._task.done():
            done, _ = await asyncio.wait({self._task}, timeout=timeout)
            if not done:
                self._task.cancel()
        if self._queue:
            log.warning("history: %d held write(s) lost: the database was still away",
                        len(self._queue))  # fmt: skip
        return len(self._queue)
