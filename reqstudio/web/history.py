"""Chat history through Chainlit's own SQLAlchemy data layer.

SQLite (in the data directory) by default, PostgreSQL when REQSTUDIO_DATABASE_URL says so.
Chainlit creates no tables: the app's start-up creates them, with every other table of the
app, through `reqstudio.schema`. On SQLite, list and dict columns (`tags`, `modes`) are stored
as JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from typing import Any

from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import sessionmaker

from reqstudio.errors import is_database_failure
from reqstudio.pools import data_engine
from reqstudio.web.element_order import in_creation_order
from reqstudio.web.held_writes import HeldWrites, Outcome
from reqstudio.web.thread_versions import (
    STATE_VERSION,
    StateChange,
    ThreadState,
    has_read,
    last_read,
    read_stored,
    remember,
    snapshot,
    store_state,
    unless_behind,
    version_of,
)


def _decode_json_list(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


log = logging.getLogger("reqstudio")

# Chainlit writes steps, elements and threads in fire-and-forget tasks; the writes are
# tracked so that shutting the app down waits for them (a message that had arrived in the
# browser was otherwise lost from the history when the app stopped right after it).


# Chainlit stores a step or element with `INSERT ... ON CONFLICT (id) DO UPDATE`, whatever
# thread the row with that id is in. A message's id comes from the browser: user B sending
# a message with the id of one of user A's moved it into his thread and overwrote it. The
# update happens only when the stored row is of the same thread.
_UPSERTS = {
    "steps": ("step", 'WHERE steps."threadId" = excluded."threadId"'),
    "elements": ("element", 'WHERE elements."threadId" IS NOT DISTINCT FROM excluded."threadId"'),
}


def _same_thread_upsert(query: str) -> tuple[str, str | None]:
    """The query, made to update only a row of the same thread; and what it writes."""
    head = query.lstrip()
    for table, (what, condition) in _UPSERTS.items():
        if head.startswith(f"INSERT INTO {table} ") and "ON CONFLICT (id) DO UPDATE" in head:
            return f"{head.rstrip().rstrip(';')} {condition}", what
    return query, None


def _session_thread() -> str | None:
    """The thread of the Chainlit session this code runs for, if any."""
    from chainlit.context import context

    try:
        return context.session.thread_id
    except Exception:
        return None


def _session_on(thread_id: str) -> Any:
    """The Chainlit session this code runs for, if it is on `thread_id`."""
    from chainlit.context import context

    try:
        session = context.session
    except Exception:
        return None
    return session if session is not None and session.thread_id == thread_id else None


def _session_user_id() -> str | None:
    """The id of the signed-in user of the session this code runs for, if any."""
    from chainlit.context import context
    from chainlit.user import PersistedUser

    try:
        user = context.session.user
    except Exception:
        return None
    return user.id if isinstance(user, PersistedUser) else None


def _session_thread_title() -> str | None:
    """The name the app gave the session's thread (`reqstudio.web.session.name_thread`), if any."""
    from chainlit.user_session import user_session

    try:
        title = user_session.get("thread_title")
    except Exception:
        return None
    return title if isinstance(title, str) and title else None


# The errors of the statements of the write in progress (None outside a write): a write is
# a few statements, and one that failed because the database was away makes it held.
_WRITE_ERRORS: ContextVar[list[BaseException] | None] = ContextVar(
    "history_write_errors", default=None
)


def _note_error(error: BaseException) -> None:
    errors = _WRITE_ERRORS.get()
    if errors is not None:
        errors.append(error)


async def _attempt(call: Callable[[], Any]) -> tuple[Outcome, Any]:
    """Run one write, its statements' errors collected: written, away (the database could
    not be reached) or refused. An exception the write raised for another reason than the
    database being away goes on to the caller, as it did before writes were held."""
    errors: list[BaseException] = []
    raised: Exception | None = None
    token = _WRITE_ERRORS.set(errors)
    try:
        result = await call()
    except Exception as error:  # Chainlit's own code failing around its statements
        errors.append(error)
        raised, result = error, None
    finally:
        _WRITE_ERRORS.reset(token)
    if not errors:
        return Outcome.WRITTEN, result
    if any(is_database_failure(error) for error in errors):
        return Outcome.AWAY, result
    if raised is not None:
        raise raised
    return Outcome.REFUSED, result


def _tracked(name: str, method: Any = None, row: Callable[..., str] | None = None):
    """Chainlit's write `name` (or `method`), tracked and held while the database is away;
    with `row` (the id of the row it writes, from its arguments), after the writes of that
    row started before it (`HistoryDataLayer._in_order`)."""

    async def write(self: HistoryDataLayer, *args: Any, **kwargs: Any) -> Any:
        call = functools.partial(
            method or getattr(SQLAlchemyDataLayer, name), self, *args, **kwargs
        )
        if _WRITE_ERRORS.get() is not None:  # part of another write (or of its replay)
            return await call()
        task = asyncio.current_task()
        thread = _session_thread()
        if task is not None:
            self._writes.add(task)
            if thread is not None:
                self._writes_of.setdefault(thread, set()).add(task)
        key = None if row is None else (name.split("_", 1)[1], str(row(*args, **kwargs)))
        try:
            async with self._in_order(key):
                if len(self.held):  # behind the held ones, so that writes land in order
                    self.held.hold(thread, name, self._replay(call, contextvars.copy_context()))
                    return None
                outcome, result = await _attempt(call)
                if outcome is Outcome.AWAY:
                    self.held.hold(thread, name, self._replay(call, contextvars.copy_context()))
                return result
        finally:
            if task is not None:
                self._writes.discard(task)
                if thread is not None and (mine := self._writes_of.get(thread)) is not None:
                    mine.discard(task)
                    if not mine:
                        del self._writes_of[thread]

    write.__name__ = name
    return write


class HistoryDataLayer(SQLAlchemyDataLayer):
    """SQLAlchemyDataLayer that stores list/dict columns as JSON text, survives the database
    restarting, counts the writes and reads that failed (Chainlit logs and drops them), and
    can wait for its writes in flight (`flush`) before the app stops."""

    def __init__(self, conninfo: str, **kwargs: Any):
        super().__init__(conninfo, **kwargs)
        # The process's data-layer pool (sized by settings, shared with the file store, the
        # accounts and the run leases); its connections are tested on checkout, as they die
        # when the database restarts.
        self.engine = data_engine(conninfo)
        self.async_session = sessionmaker(
            bind=self.engine, expire_on_commit=False, class_=AsyncSession
        )
        self.failures = 0  # statements that failed since start-up
        self.failures_of: dict[str, int] = {}  # ... by the thread whose session wrote them
        self.available = True  # the last statement succeeded
        # Chainlit hands lists and dicts to the driver as they are: SQLite cannot store them
        # and asyncpg refuses them for TEXT/JSONB parameters, so both get JSON text.
        self._json_columns = True
        self._writes: set[asyncio.Task] = set()
        self._writes_of: dict[str, set[asyncio.Task]] = {}  # ... by the session's thread
        self._threads_known: set[str] = set()  # threads this process saw written
        # (kind, id) of a row being written: its lock, and the writes using it (`_in_order`)
        self._row_locks: dict[tuple[str, str], tuple[asyncio.Lock, int]] = {}
        # writes that failed because the database was away, written again once it is back
        self.held = HeldWrites()

    def _replay(self, call: Callable[[], Any], context: contextvars.Context) -> Callable[[], Any]:
        """The write again, in the context it was first made in (its session's thread and
        title, which the thread's upsert reads)."""

        async def once() -> Outcome:
            outcome, _ = await _attempt(call)
            self.available = outcome is not Outcome.AWAY
            return outcome

        async def again() -> Outcome:
            return await asyncio.get_running_loop().create_task(once(), context=context)

        return again

    def _count_failure(self, thread: str | None) -> None:
        self.failures += 1
        if thread is not None:  # whose turn it was: one user's failure is not another's
            self.failures_of[thread] = self.failures_of.get(thread, 0) + 1

    create_step = _tracked("create_step", row=lambda step, *_, **__: step["id"])
    update_step = _tracked("update_step", row=lambda step, *_, **__: step["id"])
    delete_step = _tracked("delete_step", row=lambda step_id, *_, **__: step_id)

    async def _create_element(self, element: Any) -> None:
        """Chainlit's, except that a file the store refused or could not take costs one log
        line (Chainlit's own raises in a task nobody awaits: a traceback), and that a file
        attached to a thread's first message finds its thread's row."""
        from reqstudio.web.storage import FileNotStored

        try:
            await self._thread_before_its_element(element)
            await SQLAlchemyDataLayer.create_element(self, element)
        except FileNotStored as refusal:
            log.warning("%s", refusal)

    @contextlib.asynccontextmanager
    async def _in_order(self, key: tuple[str, str] | None) -> AsyncIterator[None]:
        """The writes of one row (a step, an element) one at a time, in the order they were
        started. Chainlit writes each in a task nobody awaits, and a write that awaits more
        first (a file stored, its thread looked up, the thread's row updated before the step)
        could finish after a later one: an uploaded file moved onto another message went back
        to the first (seen on PostgreSQL), and a step's first state could land over its last.
        The lock is taken before anything is awaited: free, taking it does not wait."""
        if key is None:
            yield
            return
        lock, users = self._row_locks.get(key, (asyncio.Lock(), 0))
        self._row_locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._row_locks[key]
            if users == 1:
                del self._row_locks[key]
            else:
                self._row_locks[key] = (lock, users - 1)

    async def _thread_before_its_element(self, element: Any) -> None:
        """A file attached to a thread's first message is written by a task of Chainlit's
        that may run before the thread's row exists (the element's foreign key refused it,
        and the turn was reported unsaved). The session's own thread is written first, with
        its owner, as Chainlit writes it; any other thread is left alone."""
        from chainlit.context import context
        from chainlit.user import PersistedUser

        try:
            session = context.session
        except Exception:  # outside a session (a test, a script): nothing to add
            return
        if not element.thread_id or element.thread_id != session.thread_id:
            return
        if element.thread_id in self._threads_known:
            return
        user = session.user if isinstance(session.user, PersistedUser) else None
        if user is None:
            return
        if not await self.get_thread_author(element.thread_id):  # only a thread not yet made
            await self.update_thread(thread_id=element.thread_id, user_id=user.id)
        self._threads_known.add(element.thread_id)

    create_element = _tracked(
        "create_element", _create_element, row=lambda element, *_, **__: element.id
    )
    delete_element = _tracked("delete_element", row=lambda element_id, *_, **__: element_id)

    async def flush(self, timeout: float = 15.0) -> None:
        """Wait until the writes Chainlit started (and those they start) have finished, and
        give the held ones what is left of `timeout` to land."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if await self._wait_for(lambda: self._writes, timeout):
            log.warning("history: %d write(s) unfinished at shutdown", len(self._writes))
        if len(self.held):
            await self.held.flush(max(0.0, deadline - loop.time()))

    async def flush_thread(self, thread_id: str, timeout: float) -> bool:
        """Wait until the writes started for `thread_id`'s session have finished (at most
        `timeout` s): a turn's answer is in the browser before Chainlit's write of it, which
        runs in a task nobody awaits, has landed. True when none is left unfinished."""
        return not await self._wait_for(lambda: self._writes_of.get(thread_id, set()), timeout)

    async def _wait_for(self, writes: Callable[[], set[asyncio.Task]], timeout: float) -> int:
        """Wait for the tasks `writes()` gives, as long as it gives some and at most `timeout`
        s; returns how many are left."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        await asyncio.sleep(0)  # let writes scheduled just now begin
        current = asyncio.current_task()
        while (pending := writes() - {current}) and loop.time() < deadline:
            await asyncio.wait(pending, timeout=deadline - loop.time())
            await asyncio.sleep(0)
        return len(writes() - {current})

    async def _statement(self, query: str, parameters: dict) -> Any:
        """Chainlit's `execute_sql` (rows or a row count; None when it failed, logged), which
        also notes the error for the write in progress: away or refused.

        Each of Chainlit's statements is a transaction of its own, so it runs in autocommit:
        the statement commits where it runs. In a transaction, SQLite's write lock was held
        from the statement to the COMMIT, across a turn of the event loop in between, which
        under load is where writes queued (at 50 users some waited past the 10 s busy
        timeout); on PostgreSQL it saves the BEGIN and COMMIT round trips."""
        try:
            async with self.engine.connect() as connection:
                await connection.execution_options(isolation_level="AUTOCOMMIT")
                result = await connection.execute(text(query), parameters)
                if result.returns_rows:
                    return self.clean_result([dict(row._mapping) for row in result.fetchall()])
                return result.rowcount
        except Exception as error:  # as Chainlit's: logged, and the write goes on
            _note_error(error)
            log.warning("history: a statement failed: %s", error)
            return None

    async def execute_sql(self, query: str, parameters: dict) -> Any:
        query, upsert_of = _same_thread_upsert(query)
        if self._json_columns:
            parameters = {
                key: json.dumps(value) if isinstance(value, list | dict) else value
                for key, value in parameters.items()
            }
        result = await self._statement(query, parameters)
        self.available = result is not None
        if result is None:
            self._count_failure(_session_thread())
        elif upsert_of and result == 0:
            log.warning(
                "%s %s belongs to another thread: not written", upsert_of, parameters.get("id")
            )
        if self._json_columns and isinstance(result, list):
            for row in result:
                for key in ("tags", "thread_tags", "step_tags"):
                    if key in row:
                        row[key] = _decode_json_list(row[key])
        return result

    async def _save_thread(
        self,
        thread_id: str,
        name: str | None = None,
        user_id: str | None = None,
        metadata: dict | None = None,
        tags: list[str] | None = None,
    ):
        """Chainlit's upsert, except for the session's state and its name.

        A session's state (memory, mode, settings) carries the version it was read at and is
        written only over that version (`_store_state`): Chainlit saves it when a tab
        disconnects, and a tab or instance that fell behind must not put an older state back.

        The session's own thread gets only the name the app gives it (`name_thread`): Chainlit
        names it after the first message's raw text from a task of its own, which can finish
        after the app's name was written and then showed in the history for the whole run.
        Before the app has named it, Chainlit's name is held back (the thread is still made)."""
        if name is not None and thread_id == _session_thread():
            name = _session_thread_title()
        session = _session_on(thread_id)
        if metadata is not None and session is not None and has_read(session):
            # the session's own state, and what it read is known: only its changes are made
            change = StateChange(last_read(session), metadata)
            if (landed := await self._save_state(thread_id, change)) is not None:
                remember(session, landed)
        elif metadata is not None and STATE_VERSION in metadata:
            owner = user_id or _session_user_id()
            await self._store_state(thread_id, unless_behind(thread_id, metadata), owner)
        elif metadata is not None:
            return await super().update_thread(thread_id, name, user_id, metadata, tags)
        if metadata is None or name is not None or user_id is not None or tags is not None:
            await self._save_columns(thread_id, name, user_id, tags)  # a state write: no more

    async def _save_columns(
        self,
        thread_id: str,
        name: str | None = None,
        user_id: str | None = None,
        tags: list[str] | None = None,
    ) -> None:
        """The thread's name, author and tags (those given), the thread made if it is not yet;
        never its metadata.

        Chainlit's upsert writes the metadata back with them, as it read it a moment before:
        a state write that landed in between (Chainlit names the thread from a task of its own
        while the first turn saves the reference it was given, its run's number) was undone,
        and the state's version, which only state writes move, did not show it. The session
        then took in the older state at its next write: SRS lost its reference mid-run, and
        with it the Evaluate button."""
        given = {"name": name, "userId": user_id, "tags": tags}
        if user_id:
            given["userIdentifier"] = await self._get_user_identifer_by_id(user_id)
        given = {key: value for key, value in given.items() if value is not None}
        made = {"id": thread_id, "createdAt": await self.get_current_timestamp(), "metadata": "{}"}
        row = {**made, **given}
        columns = ", ".join(f'"{key}"' for key in row)
        values = ", ".join(f":{key}" for key in row)
        updates = ", ".join(f'"{key}" = EXCLUDED."{key}"' for key in given)
        on_conflict = f"DO UPDATE SET {updates}" if updates else "DO NOTHING"
        await self.execute_sql(
            f'INSERT INTO threads ({columns}) VALUES ({values}) ON CONFLICT ("id") {on_conflict}',
            row,
        )

    update_thread = _tracked("update_thread", _save_thread)

    async def _save_state(self, thread_id: str, change: StateChange) -> ThreadState | None:
        """Write a session's change of its thread's state over the version it read; when
        another tab or instance wrote since, make the change again on what that one wrote.
        Returns the state as stored afterwards (None: the database failed)."""

        def compose(stored: ThreadState) -> dict | None:
            if stored.version != change.base.version:
                log.info(
                    "thread %s: state version %d was written since this session read version "
                    "%d; its change is made again on it",
                    thread_id, stored.version, change.base.version,
                )  # fmt: skip
            return change.onto(stored.values) if change.changed_keys() else None

        user = _session_user_id()
        return await self._store_state(thread_id, compose, user)

    save_state = _tracked("save_state", _save_state)

    async def read_state(self, thread_id: str) -> ThreadState | None:
        """The thread's state as stored now (None: no such thread, or the database failed)."""
        try:
            return await read_stored(self.engine, thread_id)
        except Exception as error:  # a read: the turn's writes say whether it was saved
            log.warning("history: could not read the state of thread %s: %s", thread_id, error)
            return None

    async def _store_state(
        self,
        thread_id: str,
        compose: Callable[[ThreadState], dict | None],
        owner: str | None = None,
    ) -> ThreadState | None:
        """`store_state` (reqstudio/web/thread_versions.py), a thread not made yet made with `owner`;
        None when the database failed (counted, and noted for the write in progress)."""

        async def make_thread() -> None:
            await self._save_columns(thread_id, user_id=owner)

        try:
            stored = await store_state(self.engine, thread_id, compose, make_thread)
        except Exception as error:
            _note_error(error)
            self._count_failure(thread_id)
            self.available = False
            log.warning("history: could not save the state of thread %s: %s", thread_id, error)
            return None
        self.available = True
        return stored

    async def steps_after(self, thread_id: str, step_id: str) -> list[dict]:
        """The thread's steps made after the step `step_id` (id, type, parent), oldest first;
        none when that step is not the thread's."""
        rows = await self.execute_sql(
            'SELECT "id", "type", "parentId" FROM steps WHERE "threadId" = :thread AND '
            '"createdAt" > (SELECT "createdAt" FROM steps WHERE "id" = :step AND '
            '"threadId" = :thread) ORDER BY "createdAt"',
            {"thread": thread_id, "step": step_id},
        )
        return rows if isinstance(rows, list) else []

    async def get_thread_author(self, thread_id: str) -> str:
        """The thread's author, or "" for an unknown thread (Chainlit then answers 404;
        its own raises, which answered 500)."""
        rows = await self.execute_sql(
            'SELECT "userIdentifier" FROM threads WHERE "id" = :id', {"id": thread_id}
        )
        return (rows[0].get("userIdentifier") or "") if isinstance(rows, list) and rows else ""

    async def get_thread(self, thread_id: str):
        thread = await super().get_thread(thread_id)
        metadata = thread.get("metadata") if thread else None
        if isinstance(metadata, str):
            # The browser restores the thread's mode from metadata.chat_profile, which it can
            # only read from an object (SQLite hands the column back as JSON text).
            try:
                thread["metadata"] = json.loads(metadata)
            except json.JSONDecodeError:
                thread["metadata"] = {}
        session = _session_on(thread_id)
        if thread and session is not None and session.thread_id_to_resume == thread_id:
            # Chainlit resumes the session from this (its state becomes the thread's
            # metadata): the state, and its version, that the session's writes start from.
            state = thread["metadata"] if isinstance(thread["metadata"], dict) else {}
            remember(session, snapshot(version_of(state), state))
        if thread and thread.get("elements"):  # each message's files as the app listed them
            thread["elements"] = in_creation_order(thread["elements"])
        for step in (thread or {}).get("steps") or []:
            # The same for each step: its icon is in its metadata (a step without one gets an
            # avatar named after it, which Chainlit refuses with a 400).
            if isinstance(step.get("metadata"), str):
                try:
                    step["metadata"] = json.loads(step["metadata"])
                except json.JSONDecodeError:
                    step["metadata"] = {}
        return thread
