"""An opt-in event-loop lag monitor (`REQSTUDIO_LOOP_MONITOR=1`): a task that asks to wake up
every `interval` seconds and records how late it woke. A late wake-up is a stall: something
ran on the loop without yielding (parsing, file reading, logging, a blocking driver call).

The app exposes the figures at `GET /reqstudio/loop-lag` (and `?reset=1` to start afresh)
while the monitor is on; it logs every stall over `warn_ms`."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import sys
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass, field

log = logging.getLogger("reqstudio.loop")


def _awaits(coroutine: object, limit: int = 40) -> list[str]:
    """`coroutine` and what it awaits, down to the innermost await: name (file:line)."""
    chain = []
    while coroutine is not None and len(chain) < limit:
        frame = getattr(coroutine, "cr_frame", None) or getattr(coroutine, "ag_frame", None)
        frame = frame or getattr(coroutine, "gi_frame", None)
        if frame is not None:
            where = frame.f_code.co_filename.rsplit("/", 2)[-1]
            chain.append(f"{frame.f_code.co_name} ({where}:{frame.f_lineno})")
        coroutine = (
            getattr(coroutine, "cr_await", None)
            or getattr(coroutine, "ag_await", None)
            or getattr(coroutine, "gi_yieldfrom", None)
        )
    return chain


@dataclass
class LoopLagMonitor:
    interval: float = 0.01
    warn_ms: float = 100.0
    max_ms: float = 0.0
    samples: int = 0
    stalls_over_warn: int = 0
    total_ms: float = 0.0
    gc_max_ms: float = 0.0  # the longest garbage collection, which also stops the loop
    gc_total_ms: float = 0.0
    # every wake-up's lateness since the last reset (the newest 360 000: an hour at 10 ms),
    # for the percentiles: p50 says how late the loop usually is, p99 how late it often is
    lateness: deque[float] = field(default_factory=lambda: deque(maxlen=360_000), repr=False)
    _task: asyncio.Task | None = field(default=None, repr=False)
    _gc_started: float = field(default=0.0, repr=False)
    _last_tick: float = field(default=0.0, repr=False)
    _watchdog: threading.Thread | None = field(default=None, repr=False)
    _stopped: threading.Event = field(default_factory=threading.Event, repr=False)

    def _watch(self, loop_thread: int) -> None:
        reported_tick = 0.0
        while not self._stopped.wait(self.interval):
            tick = self._last_tick
            late_ms = (time.perf_counter() - tick - self.interval) * 1000
            if late_ms > self.warn_ms and tick != reported_tick:
                reported_tick = tick
                frame = sys._current_frames().get(loop_thread)
                where = "".join(traceback.format_stack(frame, limit=14)) if frame else "?"
                log.warning("event loop late by %.0f ms so far, in:\n%s", late_ms, where)

    def start(self, *, trace: bool = False) -> None:
        """`trace`: a watchdog thread also logs the loop thread's stack whenever the loop has
        not woken for `warn_ms`: the code that blocks it, or `select` when nothing did and the
        process simply was not scheduled. (asyncio's own debug mode cannot tell: Chainlit
        patches the loop with nest_asyncio, whose loop step does not time callbacks.)"""
        loop = asyncio.get_running_loop()
        self._last_tick = time.perf_counter()
        self._stopped.clear()
        if trace and self._watchdog is None:
            self._watchdog = threading.Thread(
                target=self._watch, args=(threading.get_ident(),), daemon=True,
                name="loop-lag-watchdog",
            )  # fmt: skip
            self._watchdog.start()
        if self._task is None:
            self._task = loop.create_task(self._run(), name="loop-lag")
            gc.callbacks.append(self._gc)
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signal.SIGUSR2, self.log_tasks)

    @staticmethod
    def log_tasks() -> None:
        """`kill -USR2 <pid>`: log where every task of the loop waits, from its coroutine to
        the await it is parked at (a run that never ends is in no thread's stack)."""
        tasks = asyncio.all_tasks()
        lines = [f"{len(tasks)} tasks:"]
        for task in tasks:
            lines.append(f"  {task.get_name()}: {' > '.join(_awaits(task.get_coro()))}")
        log.warning("\n".join(lines))

    def _gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif self._gc_started:
            took = (time.perf_counter() - self._gc_started) * 1000
            self.gc_max_ms = max(self.gc_max_ms, took)
            self.gc_total_ms += took

    def stop(self) -> None:
        self._stopped.set()
        if self._watchdog is not None:
            self._watchdog.join(timeout=1)
            self._watchdog = None
        if self._task is not None:
            with contextlib.suppress(Exception):  # from another thread or a closed loop
                self._task.get_loop().remove_signal_handler(signal.SIGUSR2)
            self._task.cancel()
            self._task = None
            gc.callbacks.remove(self._gc)

    def reset(self) -> None:
        self.max_ms = self.total_ms = self.gc_max_ms = self.gc_total_ms = 0.0
        self.samples = self.stalls_over_warn = 0
        self.lateness.clear()

    def percentile_ms(self, share: float) -> float:
        """The lateness that `share` of the wake-ups since the last reset did not exceed."""
        if not self.lateness:
            return 0.0
        ordered = sorted(self.lateness)
        return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]

    def snapshot(self) -> dict[str, float]:
        return {
            "max_ms": round(self.max_ms, 1),
            "mean_ms": round(self.total_ms / self.samples, 2) if self.samples else 0.0,
            "p50_ms": round(self.percentile_ms(0.50), 1),
            "p99_ms": round(self.percentile_ms(0.99), 1),
            "samples": self.samples,
            "stalls_over_warn": self.stalls_over_warn,
            "warn_ms": self.warn_ms,
            "gc_max_ms": round(self.gc_max_ms, 1),
            "gc_total_ms": round(self.gc_total_ms, 1),
        }

    async def _run(self) -> None:
        while True:
            asked = time.perf_counter()
            await asyncio.sleep(self.interval)
            self._last_tick = now = time.perf_counter()
            late_ms = max(0.0, (now - asked - self.interval) * 1000)
            self.samples += 1
            self.total_ms += late_ms
            self.lateness.append(late_ms)
            self.max_ms = max(self.max_ms, late_ms)
            if late_ms > self.warn_ms:
                self.stalls_over_warn += 1
                log.warning("event loop stalled for %.0f ms", late_ms)
