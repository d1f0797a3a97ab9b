"""The database connections of one process: one pool for the data layer, one for the checkpointer.

- The data layer (chat history, thread files kept in the database, sign-in accounts, run
  leases) shares one SQLAlchemy engine per database URL, whose pool holds at most
  `REQSTUDIO_DB_POOL_SIZE` + `REQSTUDIO_DB_POOL_OVERFLOW` connections.
- On PostgreSQL, every LangGraph checkpointer of the app (SRS, Review, Rewrite runs) borrows from
  one psycopg pool of at most `REQSTUDIO_CHECKPOINT_POOL_SIZE` connections, for the moment a
  checkpoint is read or written, instead of holding a connection of its own for a whole run.
  On SQLite the app's runs share one connection to the checkpoint file, through one saver.

Connections belong to the event loop that opened them, so pools are kept per running loop (the
app has one; tests and the CLI open and close loops of their own). Without a running loop an
engine is made for the caller alone. The app opens the checkpoint pool at start-up
(`reqstudio.persistence.open_pools`) and closes both at shutdown (`close_pools`); without it
(the CLI, the engines' tests) a checkpointer opens a connection of its own, as before.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from psycopg_pool import AsyncConnectionPool
    from sqlalchemy import Row

    from reqstudio.settings import Settings

log = logging.getLogger("reqstudio.pools")


@dataclass(frozen=True)
class PoolSizes:
    data: int = 5  # connections the data layer keeps
    data_overflow: int = 5  # more it may open under load, closed when returned
    checkpoint: int = 4  # the checkpointer's pool, at most
    timeout: float = 10.0  # seconds to wait for a free connection before failing

    @classmethod
    def of(cls, settings: Settings) -> PoolSizes:
        return cls(
            data=settings.db_pool_size,
            data_overflow=settings.db_pool_overflow,
            checkpoint=settings.checkpoint_pool_size,
            timeout=settings.db_pool_timeout,
        )

    @property
    def data_max(self) -> int:
        return self.data + self.data_overflow


_sizes = PoolSizes()
_engines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, AsyncEngine]] = (
    weakref.WeakKeyDictionary()
)
_checkpoint_pools: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[str, AsyncConnectionPool]
] = weakref.WeakKeyDictionary()
_sqlite_checkpointers: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[str, AsyncSqliteSaver]
] = weakref.WeakKeyDictionary()


def configure_pools(settings: Settings) -> PoolSizes:
    """Take the pool sizes from the settings (the app does this once, at import)."""
    global _sizes
    _sizes = PoolSizes.of(settings)
    return _sizes


def pool_sizes() -> PoolSizes:
    return _sizes


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


# Every SQLite connection of the app (history, checkpoints). WAL: readers never wait for the
# writer; NORMAL: a commit survives an app crash without an fsync per statement (every
# streamed message is several statements, every node a checkpoint; with the default journal,
# users' writes queued behind each other's fsyncs); a writer waits up to 10 s for another
# process's lock (a `reqstudio` command on the same files).
SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA busy_timeout=10000",
)


def sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    for pragma in SQLITE_PRAGMAS:
        cursor.execute(pragma)
    cursor.close()


async def tune_sqlite_checkpoints(connection: Any) -> None:
    """`SQLITE_PRAGMAS` on an aiosqlite connection to the checkpoint file."""
    for pragma in SQLITE_PRAGMAS:
        await connection.execute(pragma)


# Bounds the server keeps on every pooled connection, so that no statement of the app waits
# for ever: a row lock held by a stuck transaction, a statement that does not end, or a
# transaction left open by a task that stopped between two statements (its locks go with it).
SERVER_BOUNDS = {
    "lock_timeout": "10s",
    "statement_timeout": "60s",
    "idle_in_transaction_session_timeout": "60s",
}


def _new_engine(database_url: str) -> AsyncEngine:
    if database_url.startswith("postgresql"):
        # Connections die when the database restarts: each one is tested on checkout.
        return create_async_engine(
            database_url,
            pool_pre_ping=True,
            pool_size=_sizes.data,
            max_overflow=_sizes.data_overflow,
            pool_timeout=_sizes.timeout,
            connect_args={"server_settings": dict(SERVER_BOUNDS)},
        )
    engine = create_async_engine(database_url, pool_pre_ping=True)
    event.listen(engine.sync_engine, "connect", sqlite_pragmas)
    return engine


def data_engine(database_url: str) -> AsyncEngine:
    """The process's engine for `database_url` on the running loop (made on first use)."""
    loop = _running_loop()
    if loop is None:
        return _new_engine(database_url)
    engines = _engines.setdefault(loop, {})
    engine = engines.get(database_url)
    if engine is None:
        engine = engines[database_url] = _new_engine(database_url)
    return engine


class OnDataEngine:
    """A store over the history database (`self.database_url`): `engine` is the process's
    data-layer pool, taken on first use, so a connection is held only while a query runs."""

    database_url: str
    _engine: AsyncEngine | None = None

    @property
    def engine(self) -> AsyncEngine:
        if self._engine is None:
            self._engine = data_engine(self.database_url)
        return self._engine

    async def dispose_engine(self) -> None:
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None


async def first_row(
    connection: AsyncConnection, sql: str, parameters: Mapping[str, Any] | None = None
) -> Row[Any] | None:
    """The first row the query `sql` reads with its `:name` `parameters` (None: it reads none)."""
    return (await connection.execute(text(sql), parameters)).first()


async def open_checkpoint_pool(conninfo: str) -> AsyncConnectionPool:
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    loop = asyncio.get_running_loop()
    pools = _checkpoint_pools.setdefault(loop, {})
    if conninfo in pools:
        return pools[conninfo]
    pool = AsyncConnectionPool(
        conninfo,
        min_size=1,
        max_size=max(1, _sizes.checkpoint),
        timeout=_sizes.timeout,
        # what AsyncPostgresSaver.from_conn_string sets on its own connection
        kwargs={
            "autocommit": True,
            "prepare_threshold": 0,
            "row_factory": dict_row,
            "options": " ".join(f"-c {name}={value}" for name, value in SERVER_BOUNDS.items()),
        },
        # a connection that died with a database restart is replaced, not handed out
        check=AsyncConnectionPool.check_connection,
        # While the database is away, the pool retries with a doubling wait; giving up after
        # half a request's wait lets the next request try at once, so the pool is back within
        # seconds of the database, before a request waiting for it gives up.
        reconnect_timeout=max(1.0, _sizes.timeout / 2),
        name="reqstudio-checkpoints",
        open=False,
    )
    pools[conninfo] = pool
    await pool.open(wait=False)
    return pool


async def open_sqlite_checkpointer(path: Path) -> AsyncSqliteSaver:
    """The SQLite checkpoint file's one connection for all the app's runs, through one saver
    whose lock takes their reads and writes in turn. With a connection per run, the runs
    waited for each other's write lock, which each held across turns of the event loop: at
    50 users some waited past SQLite's busy timeout and their runs stopped."""
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    savers = _sqlite_checkpointers.setdefault(asyncio.get_running_loop(), {})
    saver = savers.get(str(path))
    if saver is None:
        connection = await aiosqlite.connect(str(path))
        await tune_sqlite_checkpoints(connection)
        saver = savers[str(path)] = AsyncSqliteSaver(connection)
    return saver


def shared_sqlite_checkpointer(path: Path) -> AsyncSqliteSaver | None:
    """The running loop's saver for the SQLite checkpoint file `path`, if the app opened one."""
    loop = _running_loop()
    savers = _sqlite_checkpointers.get(loop) if loop is not None else None
    return (savers or {}).get(str(path))


def checkpoint_pool(conninfo: str) -> AsyncConnectionPool | None:
    """The open checkpoint pool of the running loop for `conninfo`, if the app opened one."""
    loop = _running_loop()
    pools = _checkpoint_pools.get(loop) if loop is not None else None
    return (pools or {}).get(conninfo)


async def close_pools() -> None:
    """Close the running loop's pools (the app's shutdown; tests that opened them)."""
    loop = asyncio.get_running_loop()
    for pool in (_checkpoint_pools.pop(loop, None) or {}).values():
        await pool.close()
    for saver in (_sqlite_checkpointers.pop(loop, None) or {}).values():
        await saver.conn.close()
    for engine in (_engines.pop(loop, None) or {}).values():
        await engine.dispose()
