"""Everything that persists, against a real PostgreSQL server (tests/postgres_support.py):
chat history through Chainlit's data layer, SRS checkpoints, Team records, the schema made by
instances starting together, and the database going away and coming back."""

from __future__ import annotations

import asyncio
import uuid

from chainlit.context import init_http_context
from chainlit.types import Pagination, ThreadFilter
from chainlit.user import User

from reqstudio.modes.srs.engine import pending_resume, run_srs
from reqstudio.modes.srs.events import NodeStarted
from reqstudio.modes.team import EventStore, TeamConfig, TeamRun
from reqstudio.modes.team.events import RunFinished as TeamFinished
from reqstudio.persistence import libpq_conninfo, open_checkpointer, prepare_checkpoints
from reqstudio.schema import create_schema
from reqstudio.settings import load_settings
from reqstudio.web.history import HistoryDataLayer
from tests import test_srs_support as srs
from tests.postgres_support import PostgresServer
from tests.test_srs_resume import REQUEST, stop_when
from tests.test_team_run import answer


def pg_settings(settings, url: str):
    return settings.model_copy(update={"database_url": url})


_clock = iter(range(10, 60))


def step(thread_id: str, text: str, kind: str = "user_message") -> dict:
    at = f"2026-11-22T10:00:{next(_clock):02d}Z"  # steps list in the order they were made
    return {
        "id": str(uuid.uuid4()), "threadId": thread_id, "name": "user", "type": kind,
        "output": text, "streaming": False, "createdAt": at,
        "start": at, "end": at, "metadata": {},
        "tags": ["t"], "modes": {"mode": "Chat"}, "isError": False, "showInput": "json",
    }  # fmt: skip


async def new_layer(url: str) -> HistoryDataLayer:
    init_http_context()  # Chainlit's data layer reads its context when saving steps
    return HistoryDataLayer(url)


def test_the_url_users_write_becomes_a_libpq_connection_string():
    assert (
        libpq_conninfo("postgresql+asyncpg://ann:p%40ss@db.example:6543/req?ssl=require")
        == "postgresql://ann:p%40ss@db.example:6543/req?sslmode=require"
    )
    assert load_settings(REQSTUDIO_DATABASE_URL="postgresql+asyncpg://u@h/d").database_url


async def test_instances_starting_together_make_the_schema_once(postgres_url, settings):
    pg = pg_settings(settings, postgres_url)
    # three instances start at the same moment against an empty database
    await asyncio.gather(*(create_schema(postgres_url) for _ in range(3)))
    await asyncio.gather(*(prepare_checkpoints(pg) for _ in range(3)))
    layer = await new_layer(postgres_url)
    user = await layer.create_user(User(identifier="ann", metadata={"provider": "credentials"}))
    assert user is not None and (await layer.get_user("ann")).id == user.id
    # the lookups on every thread open and history listing have their indexes
    from sqlalchemy import text

    async with layer.engine.connect() as connection:
        rows = await connection.execute(text("SELECT indexname FROM pg_indexes"))
        names = {row[0] for row in rows}
    assert {"steps_thread_id", "threads_user_id", "feedbacks_thread_id"} <= names
    await layer.engine.dispose()


async def test_history_round_trip_and_each_user_sees_only_their_threads(postgres_url):
    await create_schema(postgres_url)
    writer = await new_layer(postgres_url)
    alice = await writer.create_user(User(identifier="alice", metadata={}))
    bob = await writer.create_user(User(identifier="bob", metadata={}))
    await writer.update_thread(
        "thread-a", name="alice 的库存需求", user_id=alice.id, tags=["srs"],
        metadata={"chat_profile": "SRS", "memory": [{"role": "user", "content": "库存"}]},
    )  # fmt: skip
    await writer.create_step(step("thread-a", "库存需要每日盘点"))
    await writer.update_thread("thread-b", name="bob 的报表需求", user_id=bob.id)
    await writer.engine.dispose()

    reader = await new_layer(postgres_url)  # another instance, another connection pool
    thread = await reader.get_thread("thread-a")
    assert thread["name"] == "alice 的库存需求" and thread["tags"] == ["srs"]
    assert thread["metadata"]["chat_profile"] == "SRS"  # the mode comes back on resume
    assert thread["metadata"]["memory"] == [{"role": "user", "content": "库存"}]
    assert [s["output"] for s in thread["steps"]] == ["库存需要每日盘点"]
    alices = await reader.list_threads(Pagination(first=20), ThreadFilter(userId=alice.id))
    assert [t["id"] for t in alices.data] == ["thread-a"]
    assert await reader.get_thread_author("thread-b") == "bob"
    await reader.engine.dispose()


async def test_the_steps_an_edit_discards_are_those_made_after_its_message(postgres_url):
    await create_schema(postgres_url)
    layer = await new_layer(postgres_url)
    await layer.update_thread("thread-e", name="edited")
    earlier, question, thought, answer = (
        step("thread-e", "第一轮"),
        step("thread-e", "哪个标准定义了 SRS？"),
        step("thread-e", "不需要工具。", kind="llm"),
        step("thread-e", "IEEE 830", kind="assistant_message"),
    )
    other = step("thread-f", "another thread's step, made later", kind="llm")
    for each in (earlier, question, thought, answer, other):
        await layer.create_step(each)
    after = await layer.steps_after("thread-e", question["id"])
    assert [(s["id"], s["type"]) for s in after] == [
        (thought["id"], "llm"),
        (answer["id"], "assistant_message"),
    ]
    assert await layer.steps_after("thread-f", question["id"]) == []  # not that thread's
    await layer.engine.dispose()


async def test_srs_run_stopped_on_one_instance_resumes_on_another(
    postgres_url, settings, llm_server, factory
):
    pg = pg_settings(settings, postgres_url)
    await prepare_checkpoints(pg)
    llm_server.script(
        srs.parse_reply(("FR-01", "Place an order."), ("FR-02", "Cancel an order.")),
        srs.explore_reply(("FR-01", "Place an order."), ("FR-02", "Cancel an order.")),
        srs.clarify_reply(FR_01=2, FR_02=0),
        srs.explore_reply(("FR-02", "never seen"), delay=1),  # round 2 is running at stop
        srs.explore_reply(("FR-02", "Cancel an order before it ships."), ("NFR-01", "Log it.")),
        srs.clarify_reply(FR_02=1, NFR_01=0),
        srs.doc_reply(),
    )
    async with open_checkpointer(pg) as saver:  # instance A
        assert type(saver).__name__ == "AsyncPostgresSaver"
        seen = await stop_when(
            run_srs(REQUEST, factory, checkpointer=saver, thread_id="t-pg"),
            lambda e: isinstance(e, NodeStarted) and e.agent == "ReqExplore" and e.round == 2,
            then=lambda: len(llm_server.requests) == 4,
        )
    assert srs.node_sequence(seen) == ["ReqParse", "ReqExplore", "ReqClarify"]

    before = len(llm_server.requests)
    async with open_checkpointer(pg) as saver:  # instance B: its own connection
        assert await pending_resume(saver, "t-pg") == "ReqClarify"
        events = await srs.collect_resumed(factory, saver, "t-pg")
        assert await pending_resume(saver, "t-pg") is None
    assert srs.node_sequence(events) == ["ReqExplore", "ReqClarify", "DocGenerate"]
    assert not srs.prompts_for(llm_server.requests[before:], srs.PARSE)
    result = srs.finished(events)
    assert result.srs_markdown == srs.SRS_TEXT
    assert [r.id for r in result.requirements] == ["FR-01", "FR-02", "NFR-01"]


async def test_team_record_is_saved_in_postgres_and_read_by_another_instance(
    postgres_url, factory, llm_server
):
    llm_server.script(answer("团队答复：FR-1 用户登录。", "列出登录需求"))
    store = EventStore.at(libpq_conninfo(postgres_url))
    run = TeamRun(factory, TeamConfig(), store=store)
    events = [e async for e in run.events("列出登录需求")]
    assert isinstance(events[-1], TeamFinished) and events[-1].reason == "answered"
    await store.flush()
    await asyncio.to_thread(store.close)

    other = EventStore.at(libpq_conninfo(postgres_url))
    try:
        assert other.run_ids() == [run.run_id]
        record = other.export(run.run_id)
    finally:
        other.close()
    assert record["reason"] == "answered" and record["task"] == "列出登录需求"
    assert record["events"][-1]["type"] == "run_finished"
    assert [e["seq"] for e in record["events"]] == sorted(e["seq"] for e in record["events"])


async def test_writes_made_while_the_database_is_away_land_in_order_once_it_is_back(
    postgres_server: PostgresServer, postgres_url
):
    """Nothing saved before is lost; a turn written while the database is away is held and
    written once it is back, before the turns made after it, and the thread's state is the
    newest one (an older state held during the outage does not land over it)."""
    from reqstudio.web.thread_versions import NOTHING_READ, StateChange, ThreadState

    await create_schema(postgres_url)
    layer = await new_layer(postgres_url)
    user = await layer.create_user(User(identifier="ann", metadata={}))
    await layer.update_thread("t-1", name="审批流程", user_id=user.id)
    await layer.create_step(step("t-1", "审批需要两级审核"))
    assert layer.available and layer.failures == 0 and len(layer.held) == 0

    await asyncio.to_thread(postgres_server.stop)
    try:
        await layer.create_step(step("t-1", "这一轮数据库不在"))
        outage = {"memory": "outage"}
        await layer.save_state("t-1", StateChange(NOTHING_READ, outage))  # a session's turn
        assert not layer.available and layer.failures >= 1  # and the app can tell the user
        assert len(layer.held) == 2  # held, not dropped
        assert await layer.get_thread("t-1") is None  # reads fail the same way, no crash
    finally:
        await asyncio.to_thread(postgres_server.start)

    # the next write queues behind the held ones and wakes them: all land, in order
    # the session's next turn, from what it holds (its write held, reqstudio/web/thread_state.py)
    await layer.save_state("t-1", StateChange(ThreadState(0, outage), {"memory": "back"}))
    await layer.create_step(step("t-1", "数据库回来了"))
    await layer.flush(timeout=30)
    assert len(layer.held) == 0 and layer.held.written == 4 and layer.held.lost == 0
    assert layer.available
    await layer.engine.dispose()

    reader = await new_layer(postgres_url)
    thread = await reader.get_thread("t-1")
    assert [s["output"] for s in thread["steps"]] == [
        "审批需要两级审核", "这一轮数据库不在", "数据库回来了",
    ]  # fmt: skip
    assert thread["metadata"]["memory"] == "back"
    await reader.engine.dispose()


async def test_a_held_write_the_database_refuses_once_back_is_given_up_not_retried(
    postgres_server: PostgresServer, postgres_url
):
    await create_schema(postgres_url)
    layer = await new_layer(postgres_url)
    user = await layer.create_user(User(identifier="bo", metadata={}))
    await layer.update_thread("t-2", name="库存", user_id=user.id)
    await asyncio.to_thread(postgres_server.stop)
    try:
        bad = step("t-2", "no name") | {"name": None}  # "name" is NOT NULL: refused
        await layer.create_step(bad)
        await layer.create_step(step("t-2", "数据库不在时的一轮"))
        assert len(layer.held) == 2
    finally:
        await asyncio.to_thread(postgres_server.start)
    await layer.flush(timeout=30)
    assert (len(layer.held), layer.held.written, layer.held.lost) == (0, 1, 1)
    thread = await layer.get_thread("t-2")
    assert [s["output"] for s in thread["steps"]] == ["数据库不在时的一轮"]
    await layer.engine.dispose()
