"""A thread's state versions come from the database (reqstudio/web/thread_versions.py): a write lands only
over the version it read, and a write that finds another one landed since makes its change
again on it. The history layer on SQLite and on PostgreSQL; the sessions that write through
it as Chainlit runs them (a context per session, resumed from the stored thread)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from chainlit.user import User
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from reqstudio.schema import SCHEMA, create_schema, for_dialect
from reqstudio.web.history import HistoryDataLayer
from tests.postgres_support import PostgresServer
from tests.test_postgres import new_layer


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path}/history.db"
    return request.getfixturevalue("postgres_url")


async def layer_with_thread(url: str, thread_id: str = "t") -> HistoryDataLayer:
    await create_schema(url)
    layer = await new_layer(url)
    user = await layer.create_user(User(identifier="local", metadata={}))
    await layer.update_thread(thread_id, name="对话", user_id=user.id)
    return layer


def adding(turn: str) -> Callable[[list | None], list]:
    """A memory's merger: the turn added to whatever memory is stored."""
    return lambda stored: [*(stored or []), turn]


async def stored_row(layer: HistoryDataLayer, thread_id: str = "t") -> tuple[dict, int]:
    from reqstudio.web.thread_versions import read_stored

    state = await read_stored(layer.engine, thread_id)
    return state.values, state.version


async def test_two_writers_from_one_version_both_keep_their_turn(database_url: str, caplog):
    from reqstudio.web.thread_versions import NOTHING_READ, StateChange

    caplog.set_level(logging.INFO, logger="reqstudio")
    layer = await layer_with_thread(database_url)
    first = await layer.save_state(
        "t", StateChange(NOTHING_READ, {"chat_memory": ["问1"], "chat_profile": "Chat"})
    )
    assert first.version == 1 and first.values["state_version"] == 1

    # two tabs (or instances) read version 1; each adds its turn, one also a setting
    tab_a = StateChange(first, {**first.values, "chat_memory": ["问1", "A"]},
                        {"chat_memory": adding("A")})  # fmt: skip
    tab_b = StateChange(first, {**first.values, "chat_memory": ["问1", "B"], "chat_settings": {"x": 1}},
                        {"chat_memory": adding("B")})  # fmt: skip
    saved = await asyncio.gather(layer.save_state("t", tab_a), layer.save_state("t", tab_b))
    assert sorted(s.version for s in saved) == [2, 3]
    values, version = await stored_row(layer)
    assert version == 3 and values["state_version"] == 3
    assert sorted(values["chat_memory"][1:]) == ["A", "B"] and values["chat_memory"][0] == "问1"
    assert values["chat_settings"] == {"x": 1} and values["chat_profile"] == "Chat"
    assert "was written since this session read version 1" in caplog.text

    # a tab that fell behind (version 1), saved at its disconnect by Chainlit with only its
    # version: an older state is not put back
    await layer.update_thread("t", metadata={**first.values, "chat_profile": "SRS"})
    assert await stored_row(layer) == (values, 3)
    assert "state version 1 not saved over version 3" in caplog.text
    # one up to date (version 3) is saved; a save that changes nothing writes nothing
    await layer.update_thread("t", metadata={**values, "chat_settings": {"x": 2}})
    values, version = await stored_row(layer)
    assert (values["chat_settings"], version) == ({"x": 2}, 4)
    await layer.update_thread("t", metadata=values)
    assert (await stored_row(layer))[1] == 4
    # Chainlit's writes without a state (a rename) are untouched and leave the version
    await layer.update_thread("t", name="改名")
    thread = await layer.get_thread("t")
    assert thread["name"] == "改名" and thread["metadata"]["chat_settings"] == {"x": 2}
    assert (await stored_row(layer))[1] == 4
    await layer.engine.dispose()


async def test_a_rename_does_not_put_back_the_state_it_read_before_a_state_write(
    database_url: str, monkeypatch
):
    """Chainlit's thread upsert (a name, its author, its tags) wrote back the metadata it had
    read a moment before: a state write that landed in between was undone, and the version
    did not show it. Seen in the browser under load: Chainlit names a new thread from a task
    of its own while the first turn saves the reference SRS it was given; the reference was
    gone when the run ended, and with it the Evaluate button."""
    from reqstudio.web.thread_versions import compare_and_set

    layer = await layer_with_thread(database_url)
    real_statement = layer._statement
    landed = []

    async def state_written_meanwhile(query: str, parameters: dict):
        if "INSERT INTO threads" in query and not landed:  # the rename's own write
            reference = {"srs_reference": {"name": "reference.md"}}
            landed.append(await compare_and_set(layer.engine, "t", 0, reference))
        return await real_statement(query, parameters)

    monkeypatch.setattr(layer, "_statement", state_written_meanwhile)
    await layer.update_thread("t", name="SRS · 在线电子商店", tags=["SRS"])
    assert landed and landed[0] is not None  # the state write landed before the rename's
    values, version = await stored_row(layer)
    assert (values.get("srs_reference"), version) == ({"name": "reference.md"}, 1)
    thread = await layer.get_thread("t")
    assert (thread["name"], thread["tags"]) == ("SRS · 在线电子商店", ["SRS"])
    # a thread not made yet is made by the same write, with no state
    await layer.update_thread("t-new", name="新对话")
    assert (await layer.get_thread("t-new"))["name"] == "新对话"
    assert await stored_row(layer, "t-new") == ({}, 0)
    await layer.engine.dispose()


async def test_a_value_set_while_the_session_s_write_was_on_its_way_stays_the_session_s(
    tmp_path: Path, monkeypatch
):
    """A session's write returns the state as stored; taking that in must not undo what
    another task of the session set meanwhile, and the next write carries it."""
    import chainlit as cl
    import chainlit.data
    from chainlit.context import ChainlitContext, context_var
    from chainlit.emitter import BaseChainlitEmitter
    from chainlit.session import HTTPSession
    from chainlit.user_session import user_sessions

    from reqstudio.web.thread_state import persist_thread_state

    layer = await layer_with_thread(f"sqlite+aiosqlite:///{tmp_path}/history.db")
    monkeypatch.setattr(chainlit.data, "_data_layer", layer)
    monkeypatch.setattr(chainlit.data, "_data_layer_initialized", True)
    real_save = layer.save_state
    on_its_way, go_on = asyncio.Event(), asyncio.Event()

    async def slow_save(thread_id, change):
        on_its_way.set()
        await go_on.wait()
        return await real_save(thread_id, change)

    monkeypatch.setattr(layer, "save_state", slow_save)

    async def turn() -> None:
        session = HTTPSession(id="tab", client_type="webapp", thread_id="t")
        context_var.set(ChainlitContext(session, BaseChainlitEmitter(session)))
        cl.user_session.set("srs_run_seq", 1)
        write = asyncio.create_task(persist_thread_state())
        await on_its_way.wait()
        cl.user_session.set("srs_reference", {"name": "reference.md"})  # meanwhile
        go_on.set()
        await write
        assert cl.user_session.get("srs_reference") == {"name": "reference.md"}
        await persist_thread_state()

    try:
        await asyncio.create_task(turn())
        values, _ = await stored_row(layer)
        assert values["srs_run_seq"] == 1 and values["srs_reference"] == {"name": "reference.md"}
    finally:
        user_sessions.pop("tab", None)
        await layer.engine.dispose()


async def test_a_write_lands_only_over_the_version_it_read(database_url: str):
    from reqstudio.web.thread_versions import compare_and_set, read_stored

    layer = await layer_with_thread(database_url)
    read = await read_stored(layer.engine, "t")
    assert read.version == 0  # never written: a row from before versions counts as 0
    assert (await compare_and_set(layer.engine, "t", 0, {"memory": ["a"]})).version == 1
    assert await compare_and_set(layer.engine, "t", 0, {"memory": ["b"]}) is None  # too late
    assert await stored_row(layer) == ({"memory": ["a"], "state_version": 1}, 1)
    await layer.engine.dispose()


async def test_a_change_is_made_again_over_a_value_another_tab_deleted_or_changed():
    from reqstudio.web.thread_versions import StateChange, ThreadState

    base = ThreadState(4, {"srs_offer": {"ids": [1]}, "title": "x", "chat_memory": ["q"]})
    change = StateChange(
        base,
        {"srs_offer": {"ids": [1]}, "title": "y", "chat_memory": ["q", "mine"], "id": "tab-2"},
        {"chat_memory": adding("mine")},
    )
    stored = {"title": "x", "chat_memory": ["q", "theirs"], "team_run": "r", "id": "tab-1"}
    assert change.onto(stored) == {
        "title": "y",  # changed here
        "chat_memory": ["q", "theirs", "mine"],  # this turn added to theirs
        "team_run": "r",  # theirs, untouched here
        "id": "tab-2",  # the session's own
    }  # the offer the other tab deleted stays deleted: this tab did not change it
    assert StateChange(base, dict(base.values)).changed_keys() == set()

    def unreadable(stored: object) -> list:
        raise ValueError("not a memory")

    broken = StateChange(base, {**base.values, "chat_memory": ["q", "mine"]},
                         {"chat_memory": unreadable})  # fmt: skip
    assert broken.onto({"chat_memory": "garbage"})["chat_memory"] == ["q", "mine"]


async def test_a_database_from_the_previous_version_keeps_its_threads_state(database_url: str):
    """Rows as the previous version left them: a thread saved with a tab's counter (7, in its
    metadata and its `stateVersion`) and one saved before there were versions (neither)."""
    from reqstudio.web.thread_versions import StateChange, ThreadState

    engine = create_async_engine(database_url)
    async with engine.begin() as connection:
        for statement in SCHEMA:  # the tables, then the column, as the previous version made
            postgres = database_url.startswith("postgresql")
            await connection.execute(text(for_dialect(statement, postgres)))
        await connection.execute(text('ALTER TABLE threads ADD COLUMN "stateVersion" BIGINT'))
        for thread_id, metadata, version in (
            ("counted", '{"state_version": 7, "chat_memory": ["q1", "a1"]}', 7),
            ("older", '{"chat_memory": ["q0"]}', None),
        ):
            await connection.execute(
                text('INSERT INTO threads ("id", "name", "metadata", "stateVersion") '
                     "VALUES (:id, :id, :metadata, :version)"),
                {"id": thread_id, "metadata": metadata, "version": version},
            )  # fmt: skip
    await engine.dispose()

    await create_schema(database_url)  # the new version starts on it: nothing to change
    layer = await new_layer(database_url)
    for thread_id, turns in (("counted", ["q1", "a1"]), ("older", ["q0"])):
        thread = await layer.get_thread(thread_id)  # as a tab resumes it
        read = ThreadState(thread["metadata"].get("state_version", 0), thread["metadata"])
        change = StateChange(read, {"chat_memory": [*turns, "q2"]}, {"chat_memory": adding("q2")})
        saved = await layer.save_state(thread_id, change)
        assert saved.values["chat_memory"] == [*turns, "q2"]
        assert saved.version == read.version + 1
    # a tab of the previous version's state, saved late, does not put it back
    await layer.update_thread("counted", metadata={"state_version": 7, "chat_memory": ["q1"]})
    assert (await stored_row(layer, "counted"))[0]["chat_memory"] == ["q1", "a1", "q2"]
    await layer.engine.dispose()


async def test_runs_started_in_two_tabs_of_one_thread_get_their_own_numbers(
    tmp_path: Path, monkeypatch
):
    """A run's key (its checkpoints' thread) is numbered per thread: two tabs that opened the
    thread at one version each start a run, and the second does not reuse the first's key."""
    import chainlit.data
    from chainlit.context import ChainlitContext, context_var
    from chainlit.emitter import BaseChainlitEmitter
    from chainlit.session import HTTPSession
    from chainlit.user_session import user_sessions

    from reqstudio.web.session import start_run

    url = f"sqlite+aiosqlite:///{tmp_path}/history.db"
    layer = await layer_with_thread(url)
    monkeypatch.setattr(chainlit.data, "_data_layer", layer)
    monkeypatch.setattr(chainlit.data, "_data_layer_initialized", True)

    async def first_run() -> None:
        session = HTTPSession(id="opener", client_type="webapp", thread_id="t")
        context_var.set(ChainlitContext(session, BaseChainlitEmitter(session)))
        await start_run("srs")

    await asyncio.create_task(first_run())
    sessions = {}

    async def resume(name: str) -> None:
        """As Chainlit resumes a thread: the stored metadata becomes the session's state."""
        session = HTTPSession(id=name, client_type="webapp", thread_id="t")
        context_var.set(ChainlitContext(session, BaseChainlitEmitter(session)))
        thread = await layer.get_thread("t")
        user_sessions[session.id] = dict(thread["metadata"])
        sessions[name] = session

    async def run_in(name: str) -> str:
        session = sessions[name]
        context_var.set(ChainlitContext(session, BaseChainlitEmitter(session)))
        return await start_run("srs")

    for name in ("tab-a", "tab-b"):
        await asyncio.create_task(resume(name))
    key_a = await asyncio.create_task(run_in("tab-a"))
    key_b = await asyncio.create_task(run_in("tab-b"))
    assert (key_a, key_b) == ("t:2", "t:3")
    values = (await layer.get_thread("t"))["metadata"]
    assert values["srs_run_seq"] == 3 and values["srs_active_run"] == "t:3"
    for name in ("opener", "tab-a", "tab-b"):
        user_sessions.pop(name, None)
    await layer.engine.dispose()


def test_an_agent_turn_is_added_again_to_another_tabs_memory_with_its_tool_records():
    from reqstudio.modes.agent.state import AgentMemory, ToolResult
    from reqstudio.web.agent import turns_added_again

    def result(query: str) -> ToolResult:
        return ToolResult(call_id=query, tool="web_search", arguments={"query": query}, ok=True,
                          text=f"hit for {query}")  # fmt: skip

    opened = AgentMemory()
    opened.record("q1", "a1", [result("one")])
    opened.tag_turns_since(0, "m1")
    theirs, mine = AgentMemory.load(opened.dump()), AgentMemory.load(opened.dump())
    theirs.record("q-theirs", "a-theirs", [result("theirs")])
    theirs.tag_turns_since(1, "m-theirs")
    mine.record("q-mine", "a-mine", [result("mine-1"), result("mine-2")])
    mine.tag_turns_since(1, "m-mine")

    merged = AgentMemory.load(turns_added_again(mine, 1, "m-mine")(theirs.dump()))
    assert [t.question for t in merged.turns] == ["q1", "q-theirs", "q-mine"]
    assert [(r.turn, r.arguments["query"]) for r in merged.tool_records] == [
        (1, "one"), (2, "theirs"), (3, "mine-1"), (3, "mine-2"),
    ]  # fmt: skip
    # over the memory it started from, it is this tab's own memory
    assert turns_added_again(mine, 1, "m-mine")(opened.dump()) == mine.dump()
    # an edited question: the memory rewinds to it, in the other tab's memory too
    edited = AgentMemory.load(theirs.dump())
    edited.rewind_to("m1")
    edited.record("q1 edited", "a1'", [])
    edited.tag_turns_since(0, "m1")
    again = AgentMemory.load(turns_added_again(edited, 0, "m1")(theirs.dump()))
    assert [t.question for t in again.turns] == ["q1 edited"] and again.tool_records == []


async def test_held_writes_land_in_order_without_clobbering_another_instances(
    postgres_server: PostgresServer, postgres_url: str, caplog
):
    """Instance A's turn is held while the database is away; once it is back, instance B
    saves its turn first (it read the same version), then A's held write and A's next turn
    land behind it: the memory has every turn, in the order they were saved."""
    from reqstudio.web.thread_versions import NOTHING_READ, StateChange, ThreadState

    caplog.set_level(logging.INFO, logger="reqstudio")
    layer_a = await layer_with_thread(postgres_url)
    layer_b = await new_layer(postgres_url)
    opened = await layer_a.save_state("t", StateChange(NOTHING_READ, {"memory": ["q1"]}))
    layer_a.held.retry_s = layer_a.held.max_retry_s = 60  # tried again when a write comes

    await asyncio.to_thread(postgres_server.stop)
    try:
        turn_a = {"memory": ["q1", "A"]}
        held = await layer_a.save_state("t", StateChange(opened, turn_a, {"memory": adding("A")}))
        assert held is None and len(layer_a.held) == 1
    finally:
        await asyncio.to_thread(postgres_server.start)

    saved_b = await layer_b.save_state(
        "t", StateChange(opened, {"memory": ["q1", "B"]}, {"memory": adding("B")})
    )
    assert saved_b.values["memory"] == ["q1", "B"]
    # A goes on from what it holds (as reqstudio/web/thread_state.py does when a write is held)
    after_held = ThreadState(opened.version, turn_a)
    next_a = StateChange(after_held, {"memory": ["q1", "A", "A2"]}, {"memory": adding("A2")})
    assert await layer_a.save_state("t", next_a) is None  # queued behind the held one
    await layer_a.flush(timeout=30)
    assert (len(layer_a.held), layer_a.held.written, layer_a.held.lost) == (0, 2, 0)
    values, version = await stored_row(layer_a)
    assert values["memory"] == ["q1", "B", "A", "A2"] and version == 4
    await layer_a.engine.dispose()
    await layer_b.engine.dispose()
