"""The run record: every event saved as it happens, so a crash loses nothing, and exported as
JSON. SQLite in the data directory by default; PostgreSQL (through psycopg) when the store is
given a libpq connection string, so several app instances share the records.

Writes go through one worker thread in submission order, so the event loop never waits on
the disk or the network."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any

from reqstudio.persistence import SCHEMA_LOCK_KEY

SCHEMA = """
CREATE TABLE IF NOT EXISTS team_runs (
    run_id TEXT PRIMARY KEY, task TEXT NOT NULL, started REAL NOT NULL,
    finished REAL, reason TEXT
);
CREATE TABLE IF NOT EXISTS team_events (
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
"""

# PostgreSQL: the same tables; REAL is a 4-byte float there, so times are DOUBLE PRECISION.
PG_SCHEMA = SCHEMA.replace(" REAL", " DOUBLE PRECISION")

UPSERT_RUN = (
    "INSERT INTO team_runs(run_id, task, started) VALUES (?, ?, ?) "
    "ON CONFLICT (run_id) DO UPDATE SET task = excluded.task, started = excluded.started"
)
UPSERT_EVENT = (
    "INSERT INTO team_events(run_id, seq, type, body) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (run_id, seq) DO UPDATE SET type = excluded.type, body = excluded.body"
)


class EventStore:
    def __init__(self, path: Path | str):
        """`path`: a SQLite file, or a `postgresql://` libpq connection string."""
        self.postgres = isinstance(path, str) and path.startswith("postgres")
        self.path = path
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="team-record")
        self._connection: sqlite3.Connection | None = None
        self._last: Future | None = None
        self._submit(self._open)

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> EventStore:
        return cls(data_dir / "team.db")

    @classmethod
    def at(cls, target: Path | str) -> EventStore:
        """`reqstudio.persistence.record_target(settings)`: a data directory or PostgreSQL."""
        return cls(target) if isinstance(target, str) else cls.in_data_dir(target)

    # --- worker-thread side -------------------------------------------------------

    def _connect(self) -> Any:
        if self.postgres:
            import psycopg

            return psycopg.connect(self.path, autocommit=True)
        return sqlite3.connect(self.path)

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.postgres else sql

    def _open(self) -> None:
        if self.postgres:
            self._connection = self._connect()
            with self._connection.transaction():  # the lock keeps instances from racing
                self._connection.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK_KEY,))
                for statement in filter(str.strip, PG_SCHEMA.split(";")):
                    self._connection.execute(statement)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._connection = sqlite3.connect(self.path, check_same_thread=False)
        self._connection.execute("PRAGMA journal_mode=WAL")
        # WAL + NORMAL: each committed event survives a crash of the app (not of the OS)
        # without an fsync per event
        self._connection.execute("PRAGMA synchronous=NORMAL")
        self._connection.executescript(SCHEMA)

    def _execute(self, sql: str, params: tuple[Any, ...]) -> None:
        assert self._connection is not None
        # one transaction, committed: the event is on disk
        with self._connection.transaction() if self.postgres else self._connection:
            self._connection.execute(self._sql(sql), params)

    def _submit(self, fn: Any, *args: Any) -> Future:
        self._last = self._executor.submit(fn, *args)
        return self._last

    # --- the run's side (non-blocking) ----------------------------------------------

    def start_run(self, run_id: str, task: str) -> None:
        self._submit(
            self._execute,
            UPSERT_RUN,
            (run_id, task, time.time()),
        )

    def append(self, run_id: str, event: dict[str, Any]) -> None:
        self._submit(
            self._execute,
            UPSERT_EVENT,
            (run_id, event["seq"], event["type"], json.dumps(event, ensure_ascii=False)),
        )

    def finish_run(self, run_id: str, reason: str) -> None:
        self._submit(
            self._execute,
            "UPDATE team_runs SET finished = ?, reason = ? WHERE run_id = ?",
            (time.time(), reason, run_id),
        )

    async def flush(self) -> None:
        if self._last is not None:
            await asyncio.wrap_future(self._last)

    def close(self) -> None:
        self._submit(lambda: self._connection and self._connection.close())
        self._executor.shutdown(wait=True)

    # --- reading -------------------------------------------------------------------

    def export(self, run_id: str) -> dict[str, Any]:
        """The whole record of one run (reads its own connection; call after `flush`)."""
        with closing(self._connect()) as connection:
            run = connection.execute(
                self._sql("SELECT task, started, finished, reason FROM team_runs WHERE run_id = ?"),
                (run_id,),
            ).fetchone()
            rows = connection.execute(
                self._sql("SELECT body FROM team_events WHERE run_id = ? ORDER BY seq"), (run_id,)
            ).fetchall()
        if run is None:
            raise KeyError(run_id)
        task, started, finished, reason = run
        return {
            "run_id": run_id,
            "task": task,
            "started": started,
            "finished": finished,
            "reason": reason,
            "events": [json.loads(body) for (body,) in rows],
        }

    def run_ids(self) -> list[str]:
        with closing(self._connect()) as connection:
            rows = connection.execute("SELECT run_id FROM team_runs ORDER BY started").fetchall()
        return [r[0] for r in rows]
