"""User B tries every route the app and Chainlit expose against user A's thread: the real app over real HTTP and its real Socket.IO endpoint, two password
users. A's thread is made as her browser makes it (a message with an uploaded file, an
answer, her feedback). Every attempt is refused with nothing of hers in the answer, and her
thread, steps, files and feedback are the same afterwards. Run on one instance with SQLite,
and on two instances sharing one PostgreSQL (A on one, B on the other).

The routes are Chainlit's (chainlit/server.py, chainlit/socket.py) and the app's own; each
attempt names what it tries."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import socketio

from tests.apps import AppProcess
from tests.browser_support import provider_env
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.socket_support import ChatSocket, sign_in_cookie

SECRET = "ALICE-ONLY-4f1c"  # in A's message, her file and the answer to her
PASSWORDS = {"alice": "alice-pass", "bob": "bob-pass"}


SHARED_SECRET = "cross-user-shared-secret-" + "y" * 40


@dataclass
class Deployment:
    a: AppProcess  # where alice works
    b: AppProcess  # where bob works (the same app on SQLite, another instance on PostgreSQL)
    database: str  # sqlite file path or libpq URL

    def rows(self, query: str, *args: str) -> list[tuple]:
        if self.database.startswith("postgresql://"):
            import psycopg

            with psycopg.connect(self.database) as db:
                return [tuple(row) for row in db.execute(query.replace("?", "%s"), args)]
        with sqlite3.connect(self.database) as db:
            return db.execute(query, args).fetchall()


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as scripted:
        yield scripted


@pytest.fixture(params=["sqlite", "postgres"])
def deployment(request, server: ScriptedLLMServer, tmp_path: Path) -> Iterator[Deployment]:
    env = provider_env(server) | {"REQSTUDIO_USERS": "alice:alice-pass,bob:bob-pass"}
    if request.param == "sqlite":
        app = AppProcess(tmp_path / "data", env).start()
        yield Deployment(app, app, str(tmp_path / "data" / "history.db"))
        app.stop()
        return
    server_pg = request.getfixturevalue("postgres_server")
    url = request.getfixturevalue("postgres_url")
    env |= {"REQSTUDIO_DATABASE_URL": url, "CHAINLIT_AUTH_SECRET": SHARED_SECRET}
    first = AppProcess(tmp_path / "a", env).start()
    second = AppProcess(tmp_path / "b", env).start()
    yield Deployment(first, second, server_pg.libpq_url(url.rsplit("/", 1)[1]))
    first.stop()
    second.stop()


def cookie_of(app: AppProcess, user: str) -> str:
    return sign_in_cookie(app.url, user, PASSWORDS[user])


def http_as(app: AppProcess, user: str) -> httpx.Client:
    return httpx.Client(base_url=app.url, timeout=20, headers={"Cookie": cookie_of(app, user)})


def snapshot(db: Deployment, thread: str) -> dict[str, list[tuple]]:
    """Everything stored of A's thread: the thread, its steps, elements and feedback."""
    return {
        "thread": db.rows('SELECT "id", "name", "userIdentifier", "metadata" FROM threads '
                       'WHERE "id" = ?', thread),
        "steps": db.rows('SELECT "id", "threadId", "type", "output" FROM steps '
                      'WHERE "threadId" = ? ORDER BY "id"', thread),
        "elements": db.rows('SELECT "id", "threadId", "forId", "name", "objectKey", "url" '
                         'FROM elements WHERE "threadId" = ? ORDER BY "id"', thread),
        "feedbacks": db.rows('SELECT "id", "forId", "value", "comment" FROM feedbacks '
                          'WHERE "threadId" = ?', thread),
    }  # fmt: skip


async def until(condition, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.1)


async def make_thread(db: Deployment, app: AppProcess, server: ScriptedLLMServer, user: str,
                      text: str):  # fmt: skip
    """A thread as a browser makes it: a message with a file, the answer; returns the socket."""
    server.script(Reply(content=f"answer to {user}: {text}"))
    chat = await ChatSocket(app.url, cookie_of(app, user)).connect()
    file_id = await chat.upload(f"{user}-notes.md", f"# {user}\n\n{text}\n".encode())
    await chat.send(text, [file_id])
    await chat.wait_until_idle()
    thread = chat.thread_id
    assert thread
    # Chainlit writes steps and elements in tasks of their own: wait until they are stored
    await until(lambda: len(db.rows('SELECT 1 FROM elements WHERE "threadId" = ?', thread)))
    await until(lambda: len(db.rows('SELECT 1 FROM steps WHERE "threadId" = ?', thread)) >= 2)
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


async def test_user_b_gets_nothing_of_user_as_thread_and_changes_nothing(deployment, server):
    db, app_a, app = deployment, deployment.a, deployment.b  # `app`: where bob works
    alice_chat = await make_thread(db, app_a, server, "alice", f"the secret is {SECRET}")
    bob_chat = await make_thread(db, app, server, "bob", "bob's own question")
    a_thread, b_thread = alice_chat.thread_id, bob_chat.thread_id
    a_user_id = db.rows('SELECT "id" FROM users WHERE "identifier" = ?', "alice")[0][0]
    a_steps = [r[0] for r in snapshot(db, a_thread)["steps"]]
    a_user_step = db.rows('SELECT "id" FROM steps WHERE "threadId" = ? AND "type" = ?',
                       a_thread, "user_message")[0][0]  # fmt: skip
    a_element, a_key = db.rows('SELECT "id", "objectKey" FROM elements WHERE "threadId" = ?',
                            a_thread)[0]  # fmt: skip
    alice = http_as(app_a, "alice")
    own = alice.put("/feedback", json={"feedback": {"forId": a_steps[-1], "value": 1,
                    "comment": f"{SECRET} feedback"}, "sessionId": alice_chat.session_id})  # fmt: skip
    assert own.status_code == 200, own.text
    a_feedback = own.json()["feedbackId"]
    # Her file as she reads it: through the signed link in her thread
    a_thread_json = alice.get(f"/project/thread/{a_thread}").json()
    a_file_url = next(e["url"] for e in a_thread_json["elements"] if e["id"] == a_element)
    assert SECRET in alice.get(a_file_url).text
    before = snapshot(db, a_thread)
    assert before["steps"] and before["elements"] and before["feedbacks"]

    bob = http_as(app, "bob")
    # her session lives on her instance: the attempts on it go there (the same app on SQLite)
    bob_where_she_is = http_as(app_a, "bob")
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
        "an action in her session": bob_where_she_is.post("/project/action", json={
            "sessionId": alice_chat.session_id, "action": {"id": "a", "name": "srs_evaluate", "payload": {}}}),
        "upload into her session": bob_where_she_is.post("/project/file", params={"session_id": alice_chat.session_id},
                                            files={"file": ("x.md", b"x", "text/markdown")}),
        "read her session's file": bob_where_she_is.get(f"/project/file/{a_element}",
                                           params={"session_id": alice_chat.session_id}),
        "her session's MCP": bob_where_she_is.post("/mcp", json={"sessionId": alice_chat.session_id, "name": "time"}),
        "close her session's MCP": bob_where_she_is.request("DELETE", "/mcp", json={
            "sessionId": alice_chat.session_id, "name": "time"}),
    }  # fmt: skip
    listed = bob.post("/project/threads", json=listing)

    # the sockets: her thread to resume, her session to take over
    bob_cookie = cookie_of(app, "bob")
    socket_attempts = {
        "resume her thread": await refused_socket(app, bob_cookie, {
            "sessionId": str(uuid.uuid4()), "clientType": "webapp", "threadId": a_thread}),
        "resume her thread where she is": await refused_socket(app_a, bob_cookie, {
            "sessionId": str(uuid.uuid4()), "clientType": "webapp", "threadId": a_thread}),
        "take over her session": await refused_socket(app_a, bob_cookie, {
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

    await until(lambda: db.rows('SELECT 1 FROM steps WHERE "threadId" = ? AND "output" LIKE ?',
                             b_thread, "answer to bob again%"))  # fmt: skip
    assert snapshot(db, a_thread) == before
    assert SECRET in alice.get(a_file_url).text  # her file is still there for her
    assert alice.get(f"/project/thread/{a_thread}").status_code == 200
    assert "belongs to another thread" in app.log()
    for chat in (alice_chat, bob_chat):
        await chat.close()
    print(json.dumps(codes, indent=1))
