"""At most one executor per checkpointed run, across every instance sharing the database.

A run (an SRS run: its checkpoint thread id) executes only while its lease is held: a row of
`run_leases` naming the holder and the moment the lease lapses, by the database's clock (the
instances' clocks may disagree). The holder renews it every third of its time and deletes it
when the run ends, however it ends. A holder that died (SIGKILL, machine gone) stops renewing:
its lease lapses after `REQSTUDIO_RUN_LEASE_SECONDS` (10) and the run can be resumed elsewhere.
A second tab or instance asking for a held lease is refused (`RunBusy`, in words for the user).

The same table serves SQLite (one machine, several processes) and PostgreSQL; it sits in the
data layer's database and borrows its pool (reqstudio/pools.py), a connection per statement.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import socket
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import text

from reqstudio.failures import Failure, FailureCode, render
from reqstudio.schema import prepare_schema

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from reqstudio.settings import Settings

log = logging.getLogger("reqstudio.lease")

# The database's clock in seconds since 1970, so that every instance reads the same time.
_NOW = {
    "postgresql": "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)",
    "sqlite": "((julianday('now') - 2440587.5) * 86400.0)",
}

# Rows of holders that died are taken over when their run is resumed; those of runs never
# resumed go after a day.
FORGOTTEN_AFTER_S = 86_400


class RunBusy(Exception):
    """Another tab or instance is executing this run; `failure` (and `message(language)`)
    say so."""

    def __init__(self, run_key: str, seconds_left: float):
        self.run_key = run_key
        self.seconds_left = max(1, math.ceil(seconds_left))
        self.failure = Failure(FailureCode.RUN_BUSY, {"seconds": self.seconds_left})
        super().__init__(render(self.failure, "en"))

    def message(self, language: str) -> str:
        return render(self.failure, language)


@dataclass
class Lease:
    run_key: str
    holder: str
    lost: bool = False  # another holder took it over after this one could not renew it


def new_holder() -> str:
    """Who holds a lease: this machine and process, and one acquisition of it."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class RunLeases:
    """Leases of runs in the `run_leases` table of the database behind `engine`."""

    def __init__(self, engine: AsyncEngine, seconds: float = 10.0):
        self.engine = engine
        self.seconds = float(seconds)
        self._now = _NOW["postgresql" if engine.dialect.name == "postgresql" else "sqlite"]

    async def create_table(self) -> None:
        """The database's tables, the lease table among them (`reqstudio.schema`)."""
        async with self.engine.begin() as connection:
            await prepare_schema(connection)

    async def acquire(self, run_key: str) -> Lease:
        """Take the lease of `run_key`, free or lapsed; `RunBusy` if another holder has it."""
        holder = new_holder()
        now = self._now
        async with self.engine.begin() as connection:
            await connection.execute(
                text(
                    'INSERT INTO run_leases ("runKey", "holder", "expiresAt") '
                    f"VALUES (:key, :holder, {now} + :seconds) "
                    'ON CONFLICT ("runKey") DO UPDATE SET "holder" = excluded."holder", '
                    '"expiresAt" = excluded."expiresAt" '
                    f'WHERE run_leases."expiresAt" <= {now}'
                ),
                {"key": run_key, "holder": holder, "seconds": self.seconds},
            )
            row = (
                await connection.execute(
                    text(
                        f'SELECT "holder", "expiresAt" - {now} FROM run_leases '
                        'WHERE "runKey" = :key'
                    ),
                    {"key": run_key},
                )
            ).first()
            await connection.execute(
                text(f'DELETE FROM run_leases WHERE "expiresAt" < {now} - :forgotten'),
                {"forgotten": float(FORGOTTEN_AFTER_S)},
            )
        if row is None or row[0] != holder:
            left = float(row[1]) if row is not None else self.seconds
            log.info("run %s: refused, its lease is held by %s", run_key, row and row[0])
            raise RunBusy(run_key, left)
        log.info("run %s: lease taken by %s", run_key, holder)
        return Lease(run_key, holder)

    async def renew(self, lease: Lease) -> bool:
        """Push the lease's end further; False if it is no longer this holder's."""
        async with self.engine.begin() as connection:
            result = await connection.execute(
                text(
                    f'UPDATE run_leases SET "expiresAt" = {self._now} + :seconds '
                    'WHERE "runKey" = :key AND "holder" = :holder'
                ),
                {"key": lease.run_key, "holder": lease.holder, "seconds": self.seconds},
            )
        return result.rowcount == 1

    async def release(self, lease: Lease) -> None:
        async with self.engine.begin() as connection:
            await connection.execute(
                text('DELETE FROM run_leases WHERE "runKey" = :key AND "holder" = :holder'),
                {"key": lease.run_key, "holder": lease.holder},
            )
        log.info("run %s: lease released by %s", lease.run_key, lease.holder)

    async def holder_of(self, run_key: str) -> str | None:
        """Who holds the lease of `run_key` now (None: nobody, or it lapsed)."""
        async with self.engine.connect() as connection:
            row = (
                await connection.execute(
                    text(
                        'SELECT "holder" FROM run_leases '
                        f'WHERE "runKey" = :key AND "expiresAt" > {self._now}'
                    ),
                    {"key": run_key},
                )
            ).first()
        return row[0] if row else None

    @contextlib.asynccontextmanager
    async def hold(self, run_key: str) -> AsyncIterator[Lease]:
        """Hold the lease of `run_key` while the body runs (`RunBusy` if another holds it).

        It is renewed in the background and released however the body ends. If another holder
        took it over (this one could not renew it in time, the database being away), the task
        that holds it is cancelled: the run never has two executors."""
        lease = await self.acquire(run_key)
        owner = asyncio.current_task()
        keeper = asyncio.get_running_loop().create_task(self._keep(lease, owner))
        try:
            yield lease
        finally:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
            try:
                # shielded: a second cancellation of the run does not leave the row behind
                await asyncio.shield(self.release(lease))
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning(
                    "run %s: lease not released (it lapses in %g s): %r",
                    run_key,
                    self.seconds,
                    error,
                )

    async def _keep(self, lease: Lease, owner: asyncio.Task | None) -> None:
        interval = self.seconds / 3
        while True:
            await asyncio.sleep(interval)
            try:
                kept = await asyncio.wait_for(self.renew(lease), timeout=interval)
            except (TimeoutError, Exception) as error:  # the database away: tried again
                log.warning("run %s: lease not renewed this time: %r", lease.run_key, error)
                continue
            if not kept:
                lease.lost = True
                log.error(
                    "run %s: its lease lapsed and another holder took it; this one stops",
                    lease.run_key,
                )
                if owner is not None:
                    owner.cancel()
                return


@contextlib.asynccontextmanager
async def run_lease(settings: Settings, run_key: str) -> AsyncIterator[Lease]:
    """Hold the lease of `run_key` in the app's database (the process's data-layer pool)."""
    from reqstudio.pools import data_engine

    leases = RunLeases(data_engine(settings.resolved_database_url), settings.run_lease_seconds)
    async with leases.hold(run_key) as lease:
        yield lease
