"""A thread's saved state (mode, settings, each mode's memory) and its versions.

The state lives in the thread's `metadata`; the `stateVersion` column counts the writes it
had, and the metadata carries the same number under `state_version`. A session remembers the
state it last read or wrote (`ThreadState`); a write is a `StateChange`: that state, what the
session holds now, and, for a value two sessions both change (a mode's memory), how to make
this session's change again on someone else's value. The history layer writes a change only
over the version it read (compare-and-set on the row); when another tab or instance wrote
since, the change is made again on what that one wrote (`StateChange.onto`), so neither
write is lost and the state never goes backwards.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from reqstudio.pools import first_row

log = logging.getLogger("reqstudio")

# The key of the state's version in a thread's metadata.
STATE_VERSION = "state_version"

# Chainlit copies these into every session's state from the session itself (its id, its
# user, its client): a tab's own, not a change it made to the thread.
SESSION_KEYS = frozenset({"id", "env", "user", "client_type", STATE_VERSION})

# A value as stored by someone else -> that value with this session's change made again.
Merger = Callable[[Any], Any]


@dataclass(frozen=True)
class ThreadState:
    """A thread's state as stored at `version` (0: never written)."""

    version: int
    values: dict[str, Any]


NOTHING_READ = ThreadState(0, {})


@dataclass
class StateChange:
    """What a session writes: the state it started from (`base`), the state it holds now,
    and how to make its change of some values again over another session's (`merging`)."""

    base: ThreadState
    state: Mapping[str, Any]
    merging: Mapping[str, Merger] = field(default_factory=dict)

    def changed_keys(self) -> set[str]:
        keys = (self.state.keys() | self.base.values.keys()) - SESSION_KEYS
        return {k for k in keys if self.state.get(k) != self.base.values.get(k)} | set(self.merging)

    def onto(self, stored: Mapping[str, Any]) -> dict[str, Any]:
        """`stored` (the thread's state now) with this session's changes made on it: a value
        it changed is its own, a value with a merger is made again from the stored one, every
        other value stays as stored. Over the state it started from, that is its own state."""
        result = dict(stored)
        for key in self.changed_keys():
            value = self.state.get(key)
            if key in self.merging:
                try:
                    value = self.merging[key](stored.get(key))
                except Exception:  # a stored value it cannot read: this session's stands
                    log.warning("thread state: %s stored unreadable, this session's kept", key)
            if value is None:  # as Chainlit's own save: a value set to None is deleted
                result.pop(key, None)
            else:
                result[key] = value
        for key in SESSION_KEYS - {STATE_VERSION}:
            if self.state.get(key) is not None:
                result[key] = self.state[key]
        return result


def snapshot(version: int, values: Mapping[str, Any]) -> ThreadState:
    """A state that nothing the session does later can change (the session's values are
    handed on to it, and it may change nested ones in place)."""
    return ThreadState(version, copy.deepcopy(dict(values)))


# The state each session (a tab) last read or wrote, for as long as the session lives.
_READ: WeakKeyDictionary[Any, ThreadState] = WeakKeyDictionary()


def last_read(session: Any) -> ThreadState:
    """What `session` last read or wrote of its thread's state (nothing, for a new chat)."""
    return _READ.get(session, NOTHING_READ)


def has_read(session: Any) -> bool:
    return session in _READ


def remember(session: Any, state: ThreadState) -> None:
    _READ[session] = state


def version_of(values: Mapping[str, Any]) -> int:
    version = values.get(STATE_VERSION)
    return version if isinstance(version, int) and not isinstance(version, bool) else 0


# --- on the row -------------------------------------------------------------------------------
# Each statement commits on its own (autocommit): a read, then an UPDATE that lands only if the
# version is still the one read. A transaction around both would hold SQLite's write lock
# across a turn of the event loop (reqstudio/web/history.py's `_statement` says why that hurt), and in WAL
# mode a read transaction that another writer overtook cannot become a write at all.


async def read_stored(engine: AsyncEngine, thread_id: str) -> ThreadState | None:
    """The thread's state as stored now, or None: no such thread."""
    async with engine.connect() as connection:
        await connection.execution_options(isolation_level="AUTOCOMMIT")
        row = await first_row(
            connection,
            'SELECT "metadata", "stateVersion" FROM threads WHERE "id" = :id',
            {"id": thread_id},
        )
    if row is None:
        return None
    values = row[0] if isinstance(row[0], dict) else json.loads(row[0] or "{}")
    return ThreadState(int(row[1] or 0), values if isinstance(values, dict) else {})


async def compare_and_set(
    engine: AsyncEngine, thread_id: str, read: int, values: Mapping[str, Any]
) -> ThreadState | None:
    """Write `values` as the version after `read` if the stored version is still `read`:
    the state written, or None when another writer came first."""
    written = {**values, STATE_VERSION: read + 1}
    async with engine.connect() as connection:
        await connection.execution_options(isolation_level="AUTOCOMMIT")
        result = await connection.execute(
            text(
                'UPDATE threads SET "metadata" = :metadata, "stateVersion" = :version '
                'WHERE "id" = :id AND COALESCE("stateVersion", 0) = :read'
            ),
            {"metadata": json.dumps(written), "version": read + 1, "id": thread_id, "read": read},
        )
    return ThreadState(read + 1, written) if result.rowcount == 1 else None


# How often a state write reads again when other writes keep landing between its read and its
# write (two tabs saving at once need two tries).
STATE_WRITE_TRIES = 20


async def store_state(
    engine: AsyncEngine,
    thread_id: str,
    compose: Callable[[ThreadState], dict[str, Any] | None],
    make_thread: Callable[[], Awaitable[None]],
) -> ThreadState | None:
    """Read the stored state, `compose` what to write from it (None: nothing to write), and
    write it only if no other write landed in between; read and compose again when one did.
    A thread not made yet is made first (`make_thread`). Returns the state as stored after
    (None: the thread could not be made, or other writes kept coming first)."""
    for _ in range(STATE_WRITE_TRIES):
        stored = await read_stored(engine, thread_id)
        if stored is None:
            await make_thread()
            if (stored := await read_stored(engine, thread_id)) is None:
                return None
        values = compose(stored)
        if values is None:
            return stored
        if (
            written := await compare_and_set(engine, thread_id, stored.version, values)
        ) is not None:
            return written
    log.warning("thread %s: state not saved, %d other writes came first", thread_id,
                STATE_WRITE_TRIES)  # fmt: skip
    return None


def unless_behind(
    thread_id: str, metadata: Mapping[str, Any]
) -> Callable[[ThreadState], dict | None]:
    """What to write of a state saved without what its session read, only its version (a
    tab's state saved by Chainlit at its disconnect): the state merged as Chainlit merges it,
    if its version is still the one stored; nothing if another write came since (a tab or
    instance that fell behind would put an older state back) or if nothing would change."""
    carried = version_of(metadata)

    def compose(stored: ThreadState) -> dict[str, Any] | None:
        if stored.version != carried:
            log.warning(
                "thread %s: state version %d not saved over version %d (a tab or instance "
                "that fell behind)",
                thread_id, carried, stored.version,
            )  # fmt: skip
            return None
        merged = {k: v for k, v in {**stored.values, **metadata}.items() if v is not None}
        return None if merged == stored.values else merged

    return compose
