"""User B tries every route the app and Chainlit expose against user A's thread (issue 21,
items 5 and 10): the real app over real HTTP and its real Socket.IO endpoint, two password
users. A's thread is made as her browser makes it (a message with an uploaded file, an
answer, her feedback). Every attempt is refused with nothing of hers in the answer, and her
thread, steps, files and feedback are the same afterwards.

The routes are Chainlit's (chainlit/server.py, chainlit/socket.py) and the app's own; each
attempt names what it tries."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import socketio

from reqstudio.scripted_server import Reply, ScriptedLLMServer
from tests.apps import AppProcess
from tests.browser_support import provider_env
from tests.socket_support import ChatSocket, sign_in_cookie

SECRET = "ALICE-ONLY-4f1c"  # in A's message, her file and the answer to her
PASSWORDS = {"alice": "alice-pass", "bob": "bob-pass"}


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as scripted:
        yield scripted


@pytest.fixture(scope="module")
def app(server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory):
    env = provider_env(server) | {"REQSTUDIO_USERS": "alice:alice-pass,bob:bob-pass"}
    process = AppProcess(tmp_path_factory.mktemp("cross") / "data", env).start()
    yield process
    process.stop()


def cookie_of(app: AppProcess, user: str) -> str:
    return sign_in_cookie(app.url, user, PASSWORDS[user])


def http_as(app: AppProcess, user: str) -> httpx.Client:
    return httpx.Client(base_url=app.url, timeout=20, headers={"Cookie": cookie_of(app, user)})


def rows(app: AppProcess, query: str, *args: str) -> list[tuple]:
    with sqlite3.connect(Path(app.data_dir) / "history.db") as db:
        return db.execute(query, args).fetchall()


def snapshot(app: AppProcess, thread: str) -> dict[str, list[tuple]]:
    """Everything stored of A's thread: the thread, its steps, elements and feedback."""
    return {
        "thread": rows(app, 'SELECT "id", "name", "userIdentifier", "metadata" FROM threads '
                       'WHERE "id" = ?', thread),
        "steps": rows(app, 'SELECT "id", "threadId", "type", "output" FROM steps '
                      'WHERE "threadId" = ? ORDER BY "id"', thread),
        "elements": rows(app, 'SELECT "id", "threadId", "forId", "name", "objectKey", "url" '
                         'FROM elements WHERE "threadId" = ? ORDER BY "id"', thread),
        "feedbacks": rows(app, 'SELECT "id", "forId", "value", "comment" FROM feedbacks '
                          'WHERE "threadId" = ?', thread),
    }  # fmt: skip


async def until(condition, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.1)


async def make_thread(app: AppProcess, server: ScriptedLLMServer, user: str, text: str):
    """A thread as a browser makes it: a message with a file, the answer; returns the socket."""
    server.script(Reply(content=f"answer to {user}: {text}"))
    chat = await ChatSocket(app.url, cookie_of(app, user)).connect()
    file_id = await chat.upload(f"{user}-notes.md", f"# {user}\n\n{text}\n".encode())
    await chat.send(text, [file_id])
    await chat.wait_until_idle()
    thread = chat.thread_id
    assert thread
    # Chainlit writes steps and elements in tasks of their own: wait until they are stored
    await until(lambda: len(rows(app, 'SELECT 1 FROM elements WHERE "threadId" = ?', thread)))
    await until(lambda: len(rows(app, 'SELECT 1 FROM steps WHERE "threadId" = ?', thread)) >= 2)
    return chat


async def refused_socket(app: AppProcess, cookie: str, auth: dict) -> str:
    client = socketio.AsyncClient(reconnection=False)
    try:
        await client.connect(
            app.url, socketio_path="/ws/socket.io", transports=["websocket"],
            headers={"Cookie": cookie}, auth=auth,
        )  # fmt: skip
    except socketio.exceptions.ConnectionError as refusal:
        return str(refusal)
    await client.disconnect()
    return "connected"


async def test_user_b_gets_nothing_of_user_as_thread_and_changes_nothing(app, server):
    alice_chat = await make_thread(app, server, "alice", f"the secret is {SECRET}")
    bob_chat = await make_thread(app, server, "bob", "bob's own question")
    a_thread, b_thread = alice_chat.thread_id, bob_chat.thread_id
    a_user_id = rows(app, 'SELECT "id" FROM users WHERE "identifier" = ?', "alice")[0][0]
    a_steps = [r[0] for r in snapshot(app, a_thread)["steps"]]
    a_user_step = rows(app, 'SELECT "id" FROM steps WHERE "threadId" = ? AND "type" = ?',
                       a_thread, "user_message")[0][0]  # fmt: skip
    a_element, a_key = rows(app, 'SELECT "id", "objectKey" FROM elements WHERE "threadId" = ?',
                            a_thread)[0]  # fmt: skip
    alice = http_as(app, "alice")
    own = alice.put("/feedback", json={"feedback": {"forId": a_steps[-1], "value": 1,
                    "comment": f"{SECRET} feedback"}, "sessionId": alice_chat.session_id})  # fmt: skip
    assert own.status_code == 200, own.text
    a_feedback = own.json()["feedbackId"]
    # Her file as she reads it: through the signed link in her thread
    a_thread_json = alice.get(f"/project/thread/{a_thread}").json()
    a_file_url = next(e["url"] for e in a_thread_json["elements"] if e["id"] == a_element)
    assert SECRET in alice.get(a_file_url).text
    before = snapshot(app, a_thread)
    assert before["steps"] and before["elements"] and before["feedbacks"]

    bob = http_as(app, "bob")
    b_session = bob_chat.session_id
    custom = {"id": a_element, "threadId": a_thread, "forId": a_user_step, "type": "custom",
              "name": "pwned", "display": "inline", "props": {"x": 1}}  # fmt: skip
    listing = {"pagination": {"first": 50}, "filter": {"userId": a_user_id}}
    attempts = {
        "read her thread": bob.get(f"/project/thread/{a_thread}"),
        "read her element": bob.get(f"/project/thread/{a_thread}/element/{a_element}"),
        "her element under his thread": bob.get(f"/project/thread/{b_thread}/element/{a_element}"),
        "read her thread as shared": bob.get(f"/project/share/{a_thread}"),
        "her file, unsigned": bob.get(f"/reqstudio/files/{a_key}"),
        "her file, forged signature": bob.get(
            f"/reqstudio/files/{a_key}", params={"expires": "9999999999", "signature": "0" * 64}
        ),
        "rate her answer": bob.put("/feedback", json={"feedback": {"forId": a_steps[-1],
                                   "value": 0}, "sessionId": b_session}),
        "overwrite her feedback": bob.put("/feedback", json={"feedback": {"id": a_feedback,
                                          "forId": a_steps[-1], "value": 0}, "sessionId": b_session}),
        "delete her feedback": bob.request("DELETE", "/feedback", json={"feedbackId": a_feedback}),
        "rename her thread": bob.put("/project/thread", json={"threadId": a_thread, "name": "x"}),
        "share her thread": bob.put("/project/thread/share",
                                    json={"threadId": a_thread, "isShared": True}),
        "delete her thread": bob.request("DELETE", "/project/thread", json={"threadId": a_thread}),
        "replace her element": bob.put("/project/element",
                                       json={"element": custom, "sessionId": b_session}),
        "delete her element": bob.request("DELETE", "/project/element",
                                          json={"element": custom, "sessionId": b_session}),
        "resume her SRS run": bob.post("/project/action", json={"sessionId": b_session, "action": {
            "id": str(uuid.uuid4()), "name": "srs_resume", "payload": {"run": f"{a_thread}:1"}}}),
        "resume her Rewrite run": bob.post("/project/action", json={"sessionId": b_session, "action": {
            "id": str(uuid.uuid4()), "name": "rewrite_resume", "payload": {"run": f"{a_thread}:rewrite:1"}}}),
        "resume her Review run": bob.post("/project/action", json={"sessionId": b_session, "action": {
            "id": str(uuid.uuid4()), "name": "review_resume", "payload": {"run": f"{a_thread}:review:1"}}}),
        "an action in her session": bob.post("/project/action", json={
            "sessionId": alice_chat.session_id, "action": {"id": "a", "name": "srs_evaluate", "payload": {}}}),
        "upload into her session": bob.post("/project/file", params={"session_id": alice_chat.session_id},
                                            files={"file": ("x.md", b"x", "text/markdown")}),
        "read her session's file": bob.get(f"/project/file/{a_element}",
                                           params={"session_id": alice_chat.session_id}),
        "her session's MCP": bob.post("/mcp", json={"sessionId": alice_chat.session_id, "name": "time"}),
        "close her session's MCP": bob.request("DELETE", "/mcp", json={
            "sessionId": alice_chat.session_id, "name": "time"}),
    }  # fmt: skip
    listed = bob.post("/project/threads", json=listing)

    # the sockets: her thread to resume, her session to take over
    bob_cookie = cookie_of(app, "bob")
    socket_attempts = {
        "resume her thread": await refused_socket(app, bob_cookie, {
            "sessionId": str(uuid.uuid4()), "clientType": "webapp", "threadId": a_thread}),
        "take over her session": await refused_socket(app, bob_cookie, {
            "sessionId": alice_chat.session_id, "clientType": "webapp"}),
    }  # fmt: skip
    # a message of his own whose id is her message's: the upsert must not move or change hers
    server.script(Reply(content="answer to bob again"))
    await bob_chat.send("my message, her id", message_id=a_user_step)
    await bob_chat.wait_until_idle()
    await asyncio.sleep(0)  # (the writes run in their own tasks; `until` below waits on them)

    codes = {name: reply.status_code for name, reply in attempts.items()}
    allowed = {401, 403, 404}
    assert {name: code for name, code in codes.items() if code not in allowed} == {}, codes
    for name, reply in attempts.items():
        assert SECRET not in reply.text and a_key not in reply.text, name
    assert listed.status_code == 200
    assert a_thread not in listed.text and SECRET not in listed.text
    assert all(result != "connected" for result in socket_attempts.values()), socket_attempts
    assert SECRET not in bob_chat.received_text()

    await until(lambda: rows(app, 'SELECT 1 FROM steps WHERE "threadId" = ? AND "output" LIKE ?',
                             b_thread, "answer to bob again%"))  # fmt: skip
    assert snapshot(app, a_thread) == before
    assert SECRET in alice.get(a_file_url).text  # her file is still there for her
    assert alice.get(f"/project/thread/{a_thread}").status_code == 200
    log = app.log()
    assert "belongs to another thread" in log
    for chat in (alice_chat, bob_chat):
        await chat.close()
    print(json.dumps(codes, indent=1))
