"""The workspace's buttons (tests and matrix, confirm a suspect test, store a ReqIF import) as
user B presses them against user A's project, over the app's real Socket.IO endpoint and its
real action route, two password users: B reaches only B's own project (A's test stays
suspect, nothing of A's text reaches B), a forged import key stores nothing, and B cannot
press a button in A's session (no session of his: 404). A pressing the same button confirms her test."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reqstudio.workspace.acceptance import AcceptanceTest
from reqstudio.workspace.acceptance_store import AcceptanceTests
from reqstudio.workspace.items import items_from_text
from reqstudio.workspace.store import WorkspaceStore
from tests.apps import AppProcess, running_app
from tests.browser_support import provider_env
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.socket_support import ChatSocket, sign_in_cookie

PASSWORDS = {"alice": "alice-pass", "bob": "bob-pass"}
SECRET = "ALICE-ONLY-7d2e"
BEFORE = f"# Alice\n\n- REQ-1 The system shall answer within 2 s ({SECRET}).\n"
AFTER = f"# Alice\n\n- REQ-1 The system shall answer within 5 s ({SECRET}).\n"


@pytest.fixture
def app(llm_server: ScriptedLLMServer, tmp_path: Path) -> Iterator[AppProcess]:
    env = provider_env(llm_server) | {"REQSTUDIO_USERS": "alice:alice-pass,bob:bob-pass"}
    with running_app(tmp_path / "data", env) as process:
        yield process


async def alices_suspect_test(data_dir: Path) -> WorkspaceStore:
    """Alice's default project: REQ-1, its test, and a baseline in which REQ-1 changed."""
    store = WorkspaceStore(f"sqlite+aiosqlite:///{data_dir.resolve()}/history.db")
    project = await store.default_project("alice")
    stored = await store.store_items(project, items_from_text(BEFORE, "alice"))
    [requirement] = [i for i in stored.items if i.id == "REQ-1"]
    test = AcceptanceTest("AT-REQ-1-1", str(uuid.uuid4()), "REQ-1", requirement.uid, "Fast",
                          "a request", "it is sent", "the answer comes in time",
                          list(requirement.section), requirement.text)  # fmt: skip
    await AcceptanceTests(store).add(project, [test])
    await store.store_items(project, items_from_text(AFTER, "alice"))
    baseline = await store.create_baseline(project, "v2", "alice")
    assert baseline.suspect_tests == ("AT-REQ-1-1",)
    return store


async def suspect(store: WorkspaceStore) -> bool:
    [test] = await AcceptanceTests(store).tests(await store.default_project("alice"))
    return test.suspect is not None


async def chat_of(app: AppProcess, llm_server: ScriptedLLMServer, user: str) -> ChatSocket:
    llm_server.script(Reply(content=f"hello {user}"))
    chat = await ChatSocket(app.url, sign_in_cookie(app.url, user, PASSWORDS[user])).connect()
    await chat.send("hello")
    await chat.wait_until_idle()
    return chat


async def press(app: AppProcess, chat: ChatSocket, name: str, payload: dict, *,
                session: str | None = None) -> int:  # fmt: skip
    """Press the button `name` as `chat`'s browser does (in `session`, default its own), and
    wait for what it does; the HTTP status of the press."""
    chat._sent_at = len(chat.events)
    action = {"name": name, "payload": payload, "label": name, "id": str(uuid.uuid4())}
    async with httpx.AsyncClient(base_url=app.url, timeout=30) as http:
        reply = await http.post(
            "/project/action",
            json={"sessionId": session or chat.session_id, "action": action},
            headers={"Cookie": chat.cookie},
        )
    if reply.status_code == 200:
        await chat.wait_until_idle()
    return reply.status_code


async def says(chat: ChatSocket, since: int, text: str, timeout: float = 30) -> bool:
    """Whether `chat` is told `text` after event `since`, within `timeout` s: a button's work
    runs as a task of its own, so its message may come after the press's task has ended."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            while text not in said(chat, since):
                chat._changed.clear()
                await chat._changed.wait()
    return text in said(chat, since)


def said(chat: ChatSocket, since: int) -> str:
    return " ".join(
        str(data.get("output", "")) for event, data in chat.events[since:]
        if event in ("new_message", "update_message") and isinstance(data, dict)
    )  # fmt: skip


async def test_b_reaches_only_bs_project_and_a_confirms_her_test(app, llm_server):
    store = await alices_suspect_test(app.data_dir)
    alice = await chat_of(app, llm_server, "alice")
    bob = await chat_of(app, llm_server, "bob")
    try:
        start = len(bob.events)
        assert await press(app, bob, "tests_confirm", {"test": "AT-REQ-1-1"}) == 200
        assert await says(bob, start, "has no acceptance test AT-REQ-1-1"), said(bob, start)
        assert await suspect(store)

        start = len(bob.events)
        assert await press(app, bob, "tests_show", {}) == 200
        assert await says(bob, start, "holds no requirement yet"), said(bob, start)

        start = len(bob.events)
        assert await press(app, bob, "reqif_store", {"import": "0123456789abcdef"}) == 200
        assert await says(bob, start, "no longer in the session"), said(bob, start)
        assert await store.items(await store.default_project("bob")) == []

        # a button in alice's session, pressed with bob's sign-in: no session of his (the
        # action route of reqstudio/web/ownership.py)
        assert await press(app, bob, "tests_confirm", {"test": "AT-REQ-1-1"},
                           session=alice.session_id) == 404  # fmt: skip
        assert await suspect(store)
        assert SECRET not in bob.received_text()

        start = len(alice.events)
        assert await press(app, alice, "tests_show", {}) == 200
        shown = said(alice, start)
        assert "AT-REQ-1-1" in shown and "its meaning changed" in shown and SECRET in shown
        start = len(alice.events)
        assert await press(app, alice, "tests_confirm", {"test": "AT-REQ-1-1"}) == 200
        assert await says(
            alice, start, "AT-REQ-1-1 confirmed: it verifies REQ-1 as it now reads."
        ), said(alice, start)
        assert not await suspect(store)
    finally:
        await alice.close()
        await bob.close()
        await store.aclose()
