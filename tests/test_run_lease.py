"""The run lease (reqstudio/run_lease.py) on SQLite and on a real PostgreSQL: one holder at a
time, refused in words, released however the run ends, kept alive while its holder lives, and
lapsed within seconds once the holder's process is killed."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from reqstudio.pools import data_engine
from reqstudio.run_lease import RunBusy, RunLeases

ROOT = Path(__file__).resolve().parent.parent
SECONDS = 1.5  # the leases' time in these tests (the app's default is 10)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'leases.db'}"
    return request.getfixturevalue("postgres_url")


async def leases_on(url: str, seconds: float = SECONDS) -> RunLeases:
    leases = RunLeases(data_engine(url), seconds)
    await leases.create_table()
    return leases


async def test_one_holder_at_a_time_and_the_refusal_says_why(database_url):
    leases = await leases_on(database_url)
    first = await leases.acquire("srs:t-1:1")
    with pytest.raises(RunBusy) as refused:
        await leases.acquire("srs:t-1:1")
    assert refused.value.run_key == "srs:t-1:1"
    assert 1 <= refused.value.seconds_left <= 2  # when it would lapse if its holder died
    assert "another tab or on another instance" in refused.value.message("en")
    assert "另一个标签页或另一个实例" in refused.value.message("zh")
    assert await leases.holder_of("srs:t-1:1") == first.holder

    other = await leases.acquire("srs:t-2:1")  # another run is not held up
    await leases.release(first)
    again = await leases.acquire("srs:t-1:1")  # released: free at once
    assert again.holder != first.holder
    await leases.release(again)
    await leases.release(other)
    assert await leases.holder_of("srs:t-1:1") is None


async def test_released_however_the_run_ends(database_url):
    leases = await leases_on(database_url)

    with pytest.raises(ValueError):
        async with leases.hold("srs:t:1"):
            raise ValueError("the run failed")
    assert await leases.holder_of("srs:t:1") is None

    started = asyncio.Event()

    async def run() -> None:
        async with leases.hold("srs:t:1"):
            started.set()
            await asyncio.Event().wait()  # until stopped

    task = asyncio.create_task(run())
    await started.wait()
    assert await leases.holder_of("srs:t:1") is not None
    task.cancel()  # the user pressed stop, or closed the tab
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await leases.holder_of("srs:t:1") is None

    async with leases.hold("srs:t:1") as lease:  # and it ends normally
        assert await leases.holder_of("srs:t:1") == lease.holder
    assert await leases.holder_of("srs:t:1") is None


async def test_a_living_holder_keeps_its_lease_past_its_time(database_url):
    leases = await leases_on(database_url)
    async with leases.hold("srs:long:1") as lease:
        deadline = time.monotonic() + 3 * SECONDS  # renewed every SECONDS / 3
        while time.monotonic() < deadline:
            with pytest.raises(RunBusy):
                await leases.acquire("srs:long:1")
            await asyncio.sleep(0.2)
        assert not lease.lost


async def test_a_holder_whose_lease_was_taken_over_stops(database_url):
    from sqlalchemy import text

    leases = await leases_on(database_url)
    started = asyncio.Event()
    seen: dict = {}

    async def run() -> None:
        async with leases.hold("srs:stolen:1") as lease:
            seen["lease"] = lease
            started.set()
            await asyncio.Event().wait()

    task = asyncio.create_task(run())
    await started.wait()
    # as if its renewals had failed past its time and another instance had taken the run
    async with leases.engine.begin() as connection:
        await connection.execute(
            text('UPDATE run_leases SET "holder" = \'elsewhere\' WHERE "runKey" = :key'),
            {"key": "srs:stolen:1"},
        )
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=3 * SECONDS)
    assert seen["lease"].lost
    assert await leases.holder_of("srs:stolen:1") == "elsewhere"  # its row was not touched


HOLDER = textwrap.dedent(
    """
    import asyncio, sys
    from reqstudio.pools import data_engine
    from reqstudio.run_lease import RunLeases

    async def main():
        leases = RunLeases(data_engine(sys.argv[1]), float(sys.argv[2]))
        async with leases.hold("srs:crash:1"):
            print("held", flush=True)
            await asyncio.Event().wait()

    asyncio.run(main())
    """
)


async def test_a_killed_holders_lease_lapses_within_seconds(database_url):
    leases = await leases_on(database_url)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, database_url, str(SECONDS)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = await asyncio.to_thread(holder.stdout.readline)
        assert line.strip() == "held"
        await asyncio.sleep(2 * SECONDS)  # alive: it renews
        with pytest.raises(RunBusy):
            await leases.acquire("srs:crash:1")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
    killed = time.monotonic()
    with pytest.raises(RunBusy):  # not released by the dead process...
        await leases.acquire("srs:crash:1")
    while True:  # ...but lapsed within its time
        try:
            lease = await leases.acquire("srs:crash:1")
            break
        except RunBusy:
            assert time.monotonic() - killed < SECONDS + 2, "the dead holder's lease stayed"
            await asyncio.sleep(0.1)
    assert time.monotonic() - killed <= SECONDS + 0.5
    await leases.release(lease)
