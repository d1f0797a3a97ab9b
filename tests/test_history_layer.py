"""The history data layer on SQLite, the default store (PostgreSQL: tests/test_postgres.py)."""

from __future__ import annotations

from chainlit.user import User

from reqstudio.schema import create_schema
from tests.test_postgres import new_layer, step


async def test_a_reopened_thread_gives_back_each_steps_metadata_as_an_object(tmp_path):
    # SQLite hands JSON columns back as text; the browser reads a step's icon from its
    # metadata object, and without it asks for an avatar named after the step (a 400).
    url = f"sqlite+aiosqlite:///{tmp_path}/history.db"
    await create_schema(url)
    layer = await new_layer(url)
    user = await layer.create_user(User(identifier="local", metadata={}))
    await layer.update_thread("thread-1", name="SRS · 图书馆", user_id=user.id)
    parse = step("thread-1", "已解析 1 条需求", kind="llm")
    parse.update(name="ReqParse · 完成", metadata={"icon": "file-search"})
    await layer.create_step(parse)
    await layer.flush()

    thread = await layer.get_thread("thread-1")
    assert [s["metadata"] for s in thread["steps"]] == [{"icon": "file-search"}]
    assert thread["steps"][0]["name"] == "ReqParse · 完成"
    await layer.engine.dispose()


async def _plan(url: str, query: str) -> str:
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url)
    async with engine.connect() as connection:
        explain = "EXPLAIN QUERY PLAN " if url.startswith("sqlite") else "EXPLAIN "
        rows = (await connection.execute(text(explain + query))).all()
    await engine.dispose()
    return " ".join(str(value) for row in rows for value in row)


async def test_an_older_database_gains_the_indexes_its_lookups_need(tmp_path):
    import sqlite3

    from reqstudio.schema import SCHEMA

    path = tmp_path / "history.db"
    with sqlite3.connect(path) as db:  # as an older ReqStudio left it: tables, no indexes
        for statement in SCHEMA:
            db.execute(statement)
    url = f"sqlite+aiosqlite:///{path}"
    steps_of_a_thread = "SELECT * FROM steps WHERE \"threadId\" = 't'"
    threads_of_a_user = (
        'SELECT * FROM threads WHERE "userId" = \'u\' ORDER BY "createdAt" DESC LIMIT 20'
    )
    assert "SCAN steps" in await _plan(url, steps_of_a_thread)

    await create_schema(url)
    assert "USING INDEX steps_thread_id" in await _plan(url, steps_of_a_thread)
    assert "USING INDEX threads_user_id" in await _plan(url, threads_of_a_user)
    await create_schema(url)  # again at the next start-up: nothing to do, no error


async def layer_with_user(tmp_path, identifier: str):
    """A history layer on a fresh SQLite file, and one signed-up user."""
    url = f"sqlite+aiosqlite:///{tmp_path}/history.db"
    await create_schema(url)
    layer = await new_layer(url)
    return layer, await layer.create_user(User(identifier=identifier, metadata={}))


async def test_an_element_written_twice_keeps_the_later_message_even_if_the_first_is_slower(
    tmp_path,
):
    # Chainlit stores an uploaded file on the question that asked for it, then SRS moves
    # that element onto its "reference read" message: two writes in tasks nobody awaits.
    # The first stores the file more slowly; it must still not land last.
    import asyncio

    from chainlit.element import File

    layer, user = await layer_with_user(tmp_path, "local")
    await layer.update_thread("thread-1", name="SRS · 图书馆", user_id=user.id)
    first_upload_may_finish = asyncio.Event()
    uploads = []

    class SlowFirstStore:
        async def upload_file(self, object_key, data, mime, overwrite=True):
            uploads.append(object_key)
            if len(uploads) == 1:
                await first_upload_may_finish.wait()
            return {"object_key": object_key, "url": f"/files/{object_key}"}

    layer.storage_provider = SlowFirstStore()
    path = tmp_path / "reference.md"
    path.write_text("# Reference SRS\n", encoding="utf-8")

    def chip(for_id: str) -> File:
        element = File(id="file-1", name="reference.md", path=str(path), mime="text/markdown")
        element.thread_id, element.for_id = "thread-1", for_id
        return element

    on_question = asyncio.create_task(layer.create_element(chip("question")))
    on_read = asyncio.create_task(layer.create_element(chip("read")))
    await asyncio.sleep(0.2)  # the later write would have finished by now, were it not held
    first_upload_may_finish.set()
    await asyncio.gather(on_question, on_read)

    thread = await layer.get_thread("thread-1")
    assert [(e["id"], e["forId"]) for e in thread["elements"]] == [("file-1", "read")]
    assert layer._row_locks == {}  # nothing kept once both are written
    await layer.engine.dispose()


async def test_an_element_written_twice_keeps_the_later_message_even_if_its_thread_is_looked_up(
    tmp_path,
):
    # The same two writes, the first one still looking up its thread (the first file of a
    # thread in this process): the second must wait for it, not take the element's lock first
    # (on PostgreSQL the reference's chip stayed on the question).
    import asyncio

    from chainlit.element import File

    layer, user = await layer_with_user(tmp_path, "local")
    await layer.update_thread("thread-1", name="SRS · 图书馆", user_id=user.id)
    path = tmp_path / "reference.md"
    path.write_text("# Reference SRS\n", encoding="utf-8")
    looking_up, may_go_on = asyncio.Event(), asyncio.Event()
    looked_up = []

    async def first_look_up_is_slow(element):
        looked_up.append(element.for_id)
        if len(looked_up) == 1:
            looking_up.set()
            await may_go_on.wait()

    layer._thread_before_its_element = first_look_up_is_slow

    class Store:
        async def upload_file(self, object_key, data, mime, overwrite=True):
            return {"object_key": object_key, "url": f"/files/{object_key}"}

    layer.storage_provider = Store()

    def chip(for_id: str) -> File:
        element = File(id="file-1", name="reference.md", path=str(path), mime="text/markdown")
        element.thread_id, element.for_id = "thread-1", for_id
        return element

    on_question = asyncio.create_task(layer.create_element(chip("question")))
    await looking_up.wait()
    on_read = asyncio.create_task(layer.create_element(chip("read")))
    await asyncio.sleep(0)  # its first step: up to the element's lock (held) or past it
    may_go_on.set()
    await asyncio.gather(on_question, on_read)

    thread = await layer.get_thread("thread-1")
    assert looked_up == ["question", "read"]
    assert [(e["id"], e["forId"]) for e in thread["elements"]] == [("file-1", "read")]
    await layer.engine.dispose()


async def test_a_steps_writes_land_in_the_order_they_were_started(tmp_path):
    # Chainlit writes a step's creation and its update in tasks nobody awaits, each first
    # updating the thread's row: a creation slower there must not land over the update.
    import asyncio

    layer, user = await layer_with_user(tmp_path, "local")
    await layer.update_thread("thread-1", name="SRS · 图书馆", user_id=user.id)
    thread_written, may_go_on = asyncio.Event(), asyncio.Event()
    calls = []
    update_thread = layer.update_thread

    async def first_thread_update_is_slow(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            thread_written.set()
            await may_go_on.wait()
        return await update_thread(*args, **kwargs)

    layer.update_thread = first_thread_update_is_slow

    def step(output: str) -> dict:
        return {"id": "step-1", "threadId": "thread-1", "name": "ReqParse", "type": "llm",
                "output": output, "createdAt": "2026-12-03T10:00:00Z", "streaming": False}  # fmt: skip

    created = asyncio.create_task(layer.create_step(step("running")))
    await thread_written.wait()
    updated = asyncio.create_task(layer.update_step(step("done")))
    # until the update has landed, or waits for the creation
    while (
        not updated.done()
        and getattr(layer, "_row_locks", {}).get(("step", "step-1"), (0, 0))[1] < 2
    ):
        await asyncio.sleep(0)
    may_go_on.set()
    await asyncio.gather(created, updated)

    thread = await layer.get_thread("thread-1")
    assert [(s["id"], s["output"]) for s in thread["steps"]] == [("step-1", "done")]
    assert layer._row_locks == {}
    await layer.engine.dispose()


async def test_a_failed_write_counts_for_its_own_thread_only_and_a_first_file_finds_its_thread(
    tmp_path,
):
    # At 20 users on PostgreSQL one user's failed write made every turn in flight say "not
    # saved" (the count was the process's); and the file attached to a thread's first message
    # was written before the thread's row (a foreign key refused it).
    import asyncio

    from chainlit.context import ChainlitContext, context_var
    from chainlit.element import File
    from chainlit.emitter import BaseChainlitEmitter
    from chainlit.session import HTTPSession
    from chainlit.user import PersistedUser

    layer, user = await layer_with_user(tmp_path, "ann")

    def in_session(thread_id: str) -> None:
        session = HTTPSession(id=f"s-{thread_id}", client_type="webapp", thread_id=thread_id)
        session.user = PersistedUser(id=user.id, identifier="ann", createdAt="", metadata={})
        context_var.set(ChainlitContext(session, BaseChainlitEmitter(session)))

    async def write_as(thread_id: str, query: str) -> None:
        in_session(thread_id)
        await layer.execute_sql(query, {})

    await asyncio.create_task(write_as("thread-a", "INSERT INTO no_such_table VALUES (1)"))
    await asyncio.create_task(write_as("thread-b", "SELECT 1"))
    assert layer.failures_of == {"thread-a": 1}

    class Store:
        async def upload_file(self, object_key, data, mime, overwrite=True):
            return {"object_key": object_key, "url": f"/files/{object_key}"}

    layer.storage_provider = Store()
    path = tmp_path / "reference.md"
    path.write_text("# Reference\n", encoding="utf-8")

    async def attach_first_file() -> None:
        in_session("thread-new")
        element = File(id="file-1", name="reference.md", path=str(path), mime="text/markdown")
        element.thread_id, element.for_id = "thread-new", "message-1"
        await layer.create_element(element)

    await asyncio.create_task(attach_first_file())
    thread = await layer.get_thread("thread-new")
    assert thread is not None and thread["userId"] == user.id  # made with its owner
    assert [e["id"] for e in thread["elements"]] == ["file-1"]
    await layer.engine.dispose()


async def test_a_turn_waits_for_its_own_threads_writes_and_not_for_others(tmp_path):
    # An answer is in the browser before Chainlit's write of it (a task nobody awaits) has
    # landed: the turn's end waits for that write, so "not saved" follows the right turn and a
    # turn that ended was saved. Another user's slow write does not hold this turn.
    import asyncio

    from chainlit.context import ChainlitContext, context_var
    from chainlit.element import File
    from chainlit.emitter import BaseChainlitEmitter
    from chainlit.session import HTTPSession

    layer, user = await layer_with_user(tmp_path, "ann")
    for thread in ("thread-a", "thread-b"):
        await layer.update_thread(thread, name=thread, user_id=user.id)
    may_finish = {"thread-a": asyncio.Event(), "thread-b": asyncio.Event()}

    class HeldStore:
        async def upload_file(self, object_key, data, mime, overwrite=True):
            await may_finish[context_var.get().session.thread_id].wait()
            return {"object_key": object_key, "url": f"/files/{object_key}"}

    layer.storage_provider = HeldStore()
    path = tmp_path / "answer.md"
    path.write_text("# Answer\n", encoding="utf-8")

    async def write_in(thread_id: str) -> None:
        session = HTTPSession(id=f"s-{thread_id}", client_type="webapp", thread_id=thread_id)
        context_var.set(ChainlitContext(session, BaseChainlitEmitter(session)))
        element = File(id=f"file-{thread_id}", name="answer.md", path=str(path))
        element.thread_id, element.for_id = thread_id, "message-1"
        await layer.create_element(element)

    writes = [asyncio.create_task(write_in(t)) for t in ("thread-a", "thread-b")]
    await asyncio.sleep(0.05)
    assert await layer.flush_thread("thread-a", timeout=0.2) is False  # still held: bounded
    waiting = asyncio.create_task(layer.flush_thread("thread-a", timeout=5))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    may_finish["thread-a"].set()
    assert await asyncio.wait_for(waiting, 2) is True  # thread-b's write is still held
    assert not writes[1].done()
    may_finish["thread-b"].set()
    await asyncio.gather(*writes)
    assert layer._writes_of == {}  # nothing kept once written
    await layer.engine.dispose()


async def test_a_write_that_fails_for_another_reason_than_the_database_raises_and_is_not_held(
    tmp_path, monkeypatch
):
    """Only a database that cannot be reached makes a write held (reqstudio/web/held_writes.py); a write
    that raises for another reason goes on raising to its caller, as before, and nothing
    waits to be written again."""
    import pytest
    from chainlit.data.sql_alchemy import SQLAlchemyDataLayer

    url = f"sqlite+aiosqlite:///{tmp_path}/history.db"
    await create_schema(url)
    layer = await new_layer(url)

    async def broken(self, step_id: str) -> None:
        raise RuntimeError("a bug in the write itself")

    monkeypatch.setattr(SQLAlchemyDataLayer, "delete_step", broken)
    with pytest.raises(RuntimeError, match="a bug in the write itself"):
        await layer.delete_step("step-1")
    assert len(layer.held) == 0
    await layer.engine.dispose()


async def test_a_history_statement_holds_the_write_lock_only_while_it_runs(tmp_path):
    """Each of Chainlit's statements is a transaction of its own. Run as one, the statement
    took SQLite's write lock and the COMMIT came after a turn of the event loop: under load
    (50 users) writes queued behind each other's locks, past the busy timeout. Right after
    the statement, before the loop runs again, another writer gets the lock at once."""
    import sqlite3

    from sqlalchemy import event

    path = tmp_path / "history.db"
    url = f"sqlite+aiosqlite:///{path}"
    await create_schema(url)
    layer = await new_layer(url)
    user = await layer.create_user(User(identifier="local", metadata={}))
    await layer.update_thread("thread-1", name="Chat", user_id=user.id)
    await layer.flush()
    locked_out: list[str] = []

    def another_writer(_conn, _cursor, statement: str, *_args: object) -> None:
        if not statement.lstrip().upper().startswith("INSERT INTO STEPS"):
            return
        other = sqlite3.connect(path, timeout=0)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.rollback()
        except sqlite3.OperationalError as error:
            locked_out.append(str(error))
        finally:
            other.close()

    event.listen(layer.engine.sync_engine, "after_cursor_execute", another_writer)
    try:
        await layer.create_step(step("thread-1", "一个回答"))
        await layer.flush()
    finally:
        event.remove(layer.engine.sync_engine, "after_cursor_execute", another_writer)
    assert locked_out == []
    thread = await layer.get_thread("thread-1")
    assert [s["output"] for s in thread["steps"]] == ["一个回答"]
    await layer.engine.dispose()
