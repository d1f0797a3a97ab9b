"""The run record: every event saved to SQLite in the data directory as it happens, so a crash
loses nothing, and exported as JSON.

Writes go through one worker thread in submission order, so the event loop never waits on
the disk."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

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


class EventStore:
    def __init__(self, path: Path):
        self.path = path
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="team-record")
        self._connection: sqlite3.Connection | None = None
        self._last: Future | None = None
        self._submit(self._open)

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> EventStore:
        return cls(data_dir / "team.db")

    # --- worker-thread side -------------------------------------------------------

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._connection = sqlite3.connect(self.path, check_same_thread=False)
        self._connection.execute("PRAGMA journal_mode=WAL")
        # WAL + NORMAL: each committed event survives a crash of the app (not of the OS)
        # without an fsync per event
        self._connection.execute("PRAGMA synchronous=NORMAL")
        self._connection.executescript(SCHEMA)

    def _execute(self, sql: str, params: tuple[Any, ...]) -> None:
        assert self._connection is not None
        with self._connection:  # one transaction, committed: the event is on disk
            self._connection.execute(sql, params)

    def _submit(self, fn: Any, *args: Any) -> Future:
        self._last = self._executor.submit(fn, *args)
        return self._last

    # --- the run's side (non-blocking) ----------------------------------------------

    def start_run(self, run_id: str, task: str) -> None:
        self._submit(
            self._execute,
            "INSERT OR REPLACE INTO team_runs(run_id, task, started) VALUES (?, ?, ?)",
            (run_id, task, time.time()),
        )

    def append(self, run_id: str, event: dict[str, Any]) -> None:
        self._submit(
            self._execute,
            "INSERT OR REPLACE INTO team_events(run_id, seq, type, body) VALUES (?, ?, ?, ?)",
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
        with sqlite3.connect(self.path) as connection:
            run = connection.execute(
                "SELECT task, started, finished, reason FROM team_runs WHERE run_id = ?",
                (run_id,),
            ).fetchone()
            rows = connection.execute(
                "SELECT body FROM team_events WHERE run_id = ? ORDER BY seq", (run_id,)
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
        with sqlite3.connect(self.path) as connection:
            rows = connection.execute("SELECT run_id FROM team_runs ORDER BY started").fetchall()
        return [r[0] for r in rows]
