"""Cancelled timers leave the event loop's heap under Chainlit's nest_asyncio-patched loop, as
they would under asyncio's own loop (they kept 150 000 timers alive at 20 streaming users)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

from reqstudio.loop_timers import purge_cancelled_timers

ROOT = Path(__file__).resolve().parent.parent


def heap_after_streaming(clean: bool) -> int:
    """In a fresh process with nest_asyncio applied as Chainlit applies it, with one live
    timer due in 25 s (as Socket.IO's ping): 5 000 reads that each arm a 60 s timer and
    cancel it (as httpx does per streamed chunk), then how many timers the loop still holds."""
    script = textwrap.dedent(
        f"""
        import asyncio, nest_asyncio
        nest_asyncio.apply()
        from reqstudio.loop_timers import keep_timer_heap_clean

        async def main():
            loop = asyncio.get_running_loop()
            loop.call_later(25, print)
            if {clean}:
                task = asyncio.create_task(keep_timer_heap_clean(0.05))
            for _ in range(5000):
                loop.call_later(60, print).cancel()
                await asyncio.sleep(0)
            await asyncio.sleep(0.3)
            print(len(loop._scheduled))

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


def test_the_patched_loop_keeps_cancelled_timers_and_the_purge_drops_them():
    assert heap_after_streaming(clean=False) >= 4000  # what nest_asyncio's step does alone
    assert heap_after_streaming(clean=True) <= 200  # one purge interval's worth at most


def test_the_purge_keeps_live_timers_in_heap_order():
    loop = asyncio.new_event_loop()
    try:
        fired: list[int] = []
        live = [loop.call_later(0.01 * (n % 7), fired.append, n) for n in range(50)]
        for n in range(300):
            loop.call_later(60, fired.append, -n).cancel()
        assert purge_cancelled_timers(loop) == 300
        assert len(loop._scheduled) == 50
        loop.run_until_complete(asyncio.sleep(0.1))
        assert sorted(fired) == list(range(50))  # every live timer fired, no cancelled one
        assert all(not handle.cancelled() for handle in live)
    finally:
        loop.close()


def test_few_cancelled_timers_are_left_to_the_loop():
    loop = asyncio.new_event_loop()
    try:
        for _ in range(150):
            loop.call_later(60, print)
        for _ in range(100):
            loop.call_later(60, print).cancel()
        assert purge_cancelled_timers(loop) == 0  # 100 of 250: not more than half
        assert len(loop._scheduled) == 250
    finally:
        loop.close()
