"""One pool per process: the data layer's and the checkpointer's connections
to a real PostgreSQL stay within what the settings allow, however many runs go at once,
counted by the server itself (`pg_stat_activity`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from reqstudio.modes.srs.engine import pending_resume, run_srs
from reqstudio.persistence import (
    CHECKPOINT_FILE,
    libpq_conninfo,
    open_checkpointer,
    open_pools,
    prepare_checkpoints,
)
from reqstudio.pools import close_pools, data_engine, pool_sizes
from tests import test_srs_support as srs
from tests.apps import AppProcess, shared_database_env
from tests.browser_support import provider_env
from tests.sampling import PeakSampler
from tests.socket_tabs import ScriptedLLMServer, runs_at_once
from tests.test_srs_resume import REQUEST


class ConnectionCounter(PeakSampler):
    """Samples, every 20 ms, how many client connections the database `url` has (this
    counter's own excluded), and keeps the highest count seen."""

    def __init__(self, url: str):
        super().__init__()
        self.conninfo = libpq_conninfo(url)
        self.database = url.rsplit("/", 1)[1]
        self._conn: psycopg.Connection | None = None

    def count(self, conn: psycopg.Connection) -> int:
        return conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s "
            "AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
            (self.database,),
        ).fetchone()[0]

    @contextmanager
    def session(self) -> Iterator[None]:
        with psycopg.connect(self.conninfo, autocommit=True) as self._conn:
            yield

    def sample(self) -> int:
        return self.count(self._conn)


async def test_checkpointers_of_concurrent_runs_share_the_pool(
    postgres_url, settings, llm_server, factory
):
    pg = settings.model_copy(
        update={"database_url": postgres_url, "checkpoint_pool_size": 2, "db_pool_size": 1,
                "db_pool_overflow": 0}
    )  # fmt: skip
    await prepare_checkpoints(pg)
    runs = 6
    for _ in range(runs):
        llm_server.script(
            *srs.one_requirement_run("Place an order.", "Place an order.", explore_delay=0.5)
        )
    await open_pools(pg)
    try:
        assert pool_sizes().checkpoint == 2

        async def one_run(number: int) -> list:
            async with open_checkpointer(pg) as saver:
                assert type(saver.conn).__name__ == "AsyncConnectionPool"  # borrowed, not owned
                request = REQUEST.model_copy(update={"max_iterations": 2})
                return [
                    e async for e in run_srs(request, factory, checkpointer=saver,
                                             thread_id=f"pool-{number}")
                ]  # fmt: skip

        with ConnectionCounter(postgres_url) as counter:
            results = await asyncio.gather(*(one_run(n) for n in range(runs)))
        assert all(type(events[-1]).__name__ == "RunFinished" for events in results)
        assert 1 <= counter.peak <= 2, counter.peak  # six runs at once, two connections
        async with open_checkpointer(pg) as saver:
            assert await pending_resume(saver, "pool-0") is None
    finally:
        await close_pools()


async def test_data_layer_users_share_one_engine(postgres_url, tmp_path):
    from reqstudio.accounts import AccountStore
    from reqstudio.web.history import HistoryDataLayer
    from reqstudio.web.storage import DatabaseStorage

    layer = HistoryDataLayer(postgres_url)
    store = DatabaseStorage(postgres_url, 1.0, ("text/markdown",), 10.0)
    accounts = AccountStore(postgres_url)
    try:
        assert layer.engine is store.engine is accounts.engine is data_engine(postgres_url)
        other = f"sqlite+aiosqlite:///{tmp_path / 'other.db'}"
        assert data_engine(other) is not layer.engine  # one engine per database
    finally:
        await close_pools()


def test_an_instance_stays_within_its_pools_while_runs_go(
    llm_server: ScriptedLLMServer, postgres_url: str, tmp_path: Path
):
    sizes = {"REQSTUDIO_DB_POOL_SIZE": "2", "REQSTUDIO_DB_POOL_OVERFLOW": "1",
             "REQSTUDIO_CHECKPOINT_POOL_SIZE": "2"}  # fmt: skip
    allowed = 2 + 1 + 2
    env = shared_database_env(provider_env(llm_server) | sizes, postgres_url)
    app = AppProcess(tmp_path / "a", env).start()
    runs = 6
    for _ in range(runs):
        llm_server.script(
            *srs.one_requirement_run(
                "Readers search books.", "Readers search books by title.", explore_delay=2
            )
        )

    try:
        with ConnectionCounter(postgres_url) as counter:
            asyncio.run(runs_at_once(app, runs, srs.E_STORE / "reference.md", timeout=180))
    finally:
        app.stop()
    assert len([r for r in llm_server.requests if "Document Generation Agent" in str(r)]) == runs
    # six SRS runs at once, each writing history, checkpoints, files and its lease: the
    # instance never holds more than its pools allow (before, each run held a connection)
    assert 2 <= counter.peak <= allowed, (counter.peak, counter.samples[-50:])


async def test_every_pooled_connection_has_a_bound_on_locks_statements_and_open_transactions(
    postgres_url, settings
):
    """A statement of the app never waits for ever on the server: a row lock held by a stuck
    transaction, a statement that does not end, a transaction a stopped task left open."""
    from sqlalchemy import text

    from reqstudio.pools import SERVER_BOUNDS, checkpoint_pool

    pg = settings.model_copy(update={"database_url": postgres_url})
    await open_pools(pg)
    try:
        names = ", ".join(f"current_setting('{name}') AS {name}" for name in SERVER_BOUNDS)
        async with data_engine(postgres_url).connect() as connection:
            data = tuple((await connection.execute(text(f"SELECT {names}"))).first())
        pool = checkpoint_pool(libpq_conninfo(postgres_url))
        async with pool.connection() as connection:
            row = await (await connection.execute(f"SELECT {names}")).fetchone()
        checkpoints = tuple(row.values())
        assert data == checkpoints == ("10s", "1min", "1min")
    finally:
        await close_pools()


class OpenFileCounter(PeakSampler):
    """Samples how many descriptors the process `pid` holds open on the file `path`."""

    def __init__(self, pid: int, path: Path):
        super().__init__()
        self.fds, self.path = Path(f"/proc/{pid}/fd"), str(path)

    def sample(self) -> int:
        held = 0
        for fd in self.fds.iterdir():
            with contextlib.suppress(OSError):  # closed since it was listed
                held += os.readlink(fd) == self.path
        return held


def test_on_sqlite_concurrent_runs_share_one_checkpoint_connection(
    llm_server: ScriptedLLMServer, tmp_path: Path
):
    """With a connection per run, the runs waited for each other's write lock on the
    checkpoint file, which each held across turns of the event loop: at 50 users several runs
    waited past SQLite's busy timeout and stopped with "the database could not be reached"."""
    app = AppProcess(tmp_path / "a", provider_env(llm_server)).start()
    runs = 6
    for _ in range(runs):
        llm_server.script(
            *srs.one_requirement_run(
                "Readers search books.", "Readers search books by title.", explore_delay=2
            )
        )
    try:
        checkpoints = (tmp_path / "a" / CHECKPOINT_FILE).resolve()
        with OpenFileCounter(app.process.pid, checkpoints) as counter:
            asyncio.run(runs_at_once(app, runs, srs.E_STORE / "reference.md", timeout=180))
    finally:
        app.stop()
    assert len([r for r in llm_server.requests if "Document Generation Agent" in str(r)]) == runs
    assert counter.peak == 1, counter.samples[-50:]  # six runs at once, one connection
