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
