"""Where what persists lives: SQLite files in the data directory (the embedded default) or one
PostgreSQL database when `REQSTUDIO_DATABASE_URL` is a `postgresql+asyncpg://` URL.

One place decides, for every mode: the LangGraph checkpointer (`open_checkpointer`), the
start-up schema work (`prepare_checkpoints`) and the connection string the synchronous
record stores use (`record_target`). Several app instances may share one PostgreSQL
database; the schema work takes an advisory lock so instances starting together do not race.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.engine import make_url

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from reqstudio.settings import Settings

# pg_advisory_lock key held while an instance creates or migrates tables ("ReqS" in ASCII)
SCHEMA_LOCK_KEY = 0x52657153

CHECKPOINT_FILE = "srs-checkpoints.db"


def is_postgres(url: str | None) -> bool:
    return bool(url) and url.startswith("postgresql")


def libpq_conninfo(url: str) -> str:
    """`postgresql+asyncpg://u:p@h:5432/db?ssl=require` -> `postgresql://u:p@h:5432/db?sslmode=require`
    (psycopg, which the LangGraph checkpointer and the record stores use, speaks libpq)."""
    parsed = make_url(url)
    query = dict(parsed.query)
    if "ssl" in query and "sslmode" not in query:
        query["sslmode"] = query.pop("ssl")
    parsed = parsed.set(drivername="postgresql", query=query)
    return parsed.render_as_string(hide_password=False)


def checkpoint_file(settings: Settings) -> Path:
    return settings.data_dir / CHECKPOINT_FILE


def record_target(settings: Settings) -> Path | str:
    """Where a record store writes: a libpq connection string, or a SQLite file of `name`."""
    if is_postgres(settings.database_url):
        return libpq_conninfo(settings.database_url)
    return settings.data_dir


@asynccontextmanager
async def open_checkpointer(settings: Settings) -> AsyncIterator[BaseCheckpointSaver]:
    """The checkpointer for a graph run: AsyncPostgresSaver on PostgreSQL, AsyncSqliteSaver
    on the data directory's SQLite file otherwise. Tables exist after `prepare_checkpoints`.
    In the app, the saver borrows from the process's pool (PostgreSQL) or is the one saver of
    all its runs (SQLite; reqstudio/pools.py)."""
    if is_postgres(settings.database_url):
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        from reqstudio.pools import checkpoint_pool

        conninfo = libpq_conninfo(settings.database_url)
        pool = checkpoint_pool(conninfo)
        if pool is not None:  # the app's: a connection only while a checkpoint is read or written
            yield AsyncPostgresSaver(pool)
            return
        async with AsyncPostgresSaver.from_conn_string(conninfo) as saver:
            yield saver
    else:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        from reqstudio.pools import shared_sqlite_checkpointer, tune_sqlite_checkpoints

        shared = shared_sqlite_checkpointer(checkpoint_file(settings))
        if shared is not None:  # the app's: one connection for all its runs
            yield shared
            return
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        async with AsyncSqliteSaver.from_conn_string(str(checkpoint_file(settings))) as saver:
            await tune_sqlite_checkpoints(saver.conn)
            yield saver


@asynccontextmanager
async def schema_lock(conninfo: str) -> AsyncIterator[None]:
    """Hold the schema advisory lock on PostgreSQL while the body runs."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        # Poll rather than wait inside a statement: the holder's CREATE INDEX CONCURRENTLY
        # waits for every open transaction, a blocked pg_advisory_lock included (deadlock).
        while True:
            cursor = await conn.execute("SELECT pg_try_advisory_lock(%s)", (SCHEMA_LOCK_KEY,))
            if (await cursor.fetchone())[0]:
                break
            await asyncio.sleep(0.1)
        try:
            yield
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK_KEY,))


async def prepare_checkpoints(settings: Settings) -> None:
    """Create or migrate the checkpoint tables (the saver's own migrations), once at start-up."""
    if not is_postgres(settings.database_url):
        async with open_checkpointer(settings) as saver:
            await saver.setup()
        return
    async with (
        schema_lock(libpq_conninfo(settings.database_url)),
        open_checkpointer(settings) as saver,
    ):
        await saver.setup()


async def open_pools(settings: Settings) -> None:
    """Size the process's pools from the settings and open the checkpoints' pool (PostgreSQL)
    or shared connection (SQLite), at the app's start-up (reqstudio/pools.py)."""
    from reqstudio.pools import configure_pools, open_checkpoint_pool, open_sqlite_checkpointer

    configure_pools(settings)
    if is_postgres(settings.database_url):
        await open_checkpoint_pool(libpq_conninfo(settings.database_url))
    else:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        await open_sqlite_checkpointer(checkpoint_file(settings))
