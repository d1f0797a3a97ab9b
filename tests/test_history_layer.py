"""The history data layer on SQLite, the default store (PostgreSQL: tests/test_postgres.py)."""

from __future__ import annotations

from chainlit.user import User

from tests.test_postgres import new_layer, step
from ui.history import create_schema


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

    from ui.history import SCHEMA

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
