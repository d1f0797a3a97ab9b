"""The opt-in loop-lag monitor sees a blocked event loop and names the code that blocked it."""

from __future__ import annotations

import asyncio
import logging
import time

from reqstudio.loop_monitor import LoopLagMonitor


def parse_a_huge_file_synchronously() -> None:
    time.sleep(0.4)  # stands for parsing or reading a file on the event loop


async def test_a_blocking_call_is_measured_and_its_stack_logged(caplog):
    monitor = LoopLagMonitor(warn_ms=100)
    caplog.set_level(logging.WARNING, logger="reqstudio.loop")
    monitor.start(trace=True)
    try:
        while monitor.samples < 3:  # the monitor is ticking
            await asyncio.sleep(0.01)
        parse_a_huge_file_synchronously()
        before = monitor.samples
        while monitor.samples == before:  # it wakes up after the block
            await asyncio.sleep(0.01)
    finally:
        monitor.stop()
    figures = monitor.snapshot()
    assert figures["max_ms"] > 100 and figures["stalls_over_warn"] >= 1
    # one late wake-up among many on time: the worst is in the max, not in the median
    assert figures["p50_ms"] < 100 <= figures["max_ms"] and figures["p99_ms"] <= figures["max_ms"]
    assert "parse_a_huge_file_synchronously" in caplog.text  # the watchdog saw where it was
    monitor.reset()
    assert monitor.snapshot()["max_ms"] == 0 and monitor.snapshot()["p99_ms"] == 0


async def waits_for_a_lease_that_never_comes(never: asyncio.Event) -> None:
    await never.wait()


async def finish_the_run(never: asyncio.Event) -> None:
    await waits_for_a_lease_that_never_comes(never)


async def test_sigusr2_logs_where_each_task_is_parked(caplog):
    """A run that never ends is in no thread's stack: `kill -USR2` logs every task's chain of
    awaits down to the one it is parked at."""
    import os
    import signal

    monitor = LoopLagMonitor()
    caplog.set_level(logging.WARNING, logger="reqstudio.loop")
    never = asyncio.Event()
    stuck = asyncio.create_task(finish_the_run(never), name="srs-run")
    monitor.start()
    try:
        await asyncio.sleep(0.01)
        os.kill(os.getpid(), signal.SIGUSR2)
        while "tasks:" not in caplog.text:
            await asyncio.sleep(0.01)
    finally:
        monitor.stop()
        stuck.cancel()
    line = next(line for line in caplog.text.splitlines() if "srs-run:" in line)
    assert line.index("finish_the_run") < line.index("waits_for_a_lease_that_never_comes")
    assert line.rstrip().endswith(")") and "wait (locks.py:" in line


def test_the_app_collects_young_objects_less_often_and_never_walks_its_startup_heap():
    """Under token streams, short-lived objects promoted by young collections every 700
    allocations made full collections stop the loop 102-121 ms at 20 users (41-51 ms with
    young collections every 10 000; the load benchmark, README)."""
    import subprocess
    import sys

    shown = subprocess.run(
        [sys.executable, "-c", "import gc; from reqstudio.runtime import tune_garbage_collector;"
         "tune_garbage_collector(); print(gc.get_threshold()[0], gc.get_freeze_count())"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout.split()  # fmt: skip
    assert int(shown[0]) == 10_000
    assert int(shown[1]) > 10_000  # modules and what they made, out of the collector's walk
