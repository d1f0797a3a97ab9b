"""Hostile input over real HTTP: upload names that try to leave the
storage folder, and MCP connections from the UI that try to start a program, reach another
host or take a configured server's name. The real app, its real Socket.IO session."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import httpx
import psutil

from tests.apps import AppProcess
from tests.browser_support import provider_env
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.socket_support import ChatSocket, sign_in_cookie

HOSTILE_NAMES = [
    "../../../../escaped-relative.md",
    "/tmp/escaped-absolute.md",
    "nul\x00byte.md",
    "长" * 200 + ".md",
]


def children(pid: int) -> set[int]:
    return {child.pid for child in psutil.Process(pid).children(recursive=True)}


async def test_hostile_upload_names_stay_in_the_storage_folder(tmp_path: Path):
    data = tmp_path / "deep" / "er" / "data"
    with ScriptedLLMServer() as server:
        app = AppProcess(data, provider_env(server)).start()
        try:
            server.script(Reply(content="收到。"))
            chat = await ChatSocket(app.url, sign_in_cookie(app.url)).connect()
            ids = [
                await chat.upload(name, f"# {n}\n".encode()) for n, name in enumerate(HOSTILE_NAMES)
            ]
            await chat.send("看看这些文件", ids)
            await chat.wait_until_idle()
            await chat.close()
            async with asyncio.timeout(30):  # the elements are stored in tasks of their own
                while len(sqlite3.connect(data / "history.db").execute(
                    'SELECT 1 FROM elements WHERE "objectKey" IS NOT NULL').fetchall()) < 4:  # fmt: skip
                    await asyncio.sleep(0.1)
            with sqlite3.connect(data / "history.db") as db:
                stored = db.execute('SELECT "name", "objectKey" FROM elements').fetchall()
        finally:
            app.stop()
    assert len(stored) == 4
    for name, key in stored:
        assert "/" not in name and "\x00" not in name and ".." not in key, (name, key)
        assert len(name.encode()) <= 255
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and all(p.resolve().is_relative_to(data.resolve()) for p in written), written
    assert not Path("/tmp/escaped-absolute.md").exists()
    assert not list((tmp_path / "deep").glob("escaped*"))


async def test_hostile_mcp_connections_from_the_ui_are_refused_with_one_line(tmp_path: Path):
    with ScriptedLLMServer() as server:
        app = AppProcess(tmp_path / "data", provider_env(server)).start()
        try:
            cookie = sign_in_cookie(app.url)
            chat = await ChatSocket(app.url, cookie).connect()  # Chat: starts no server
            before = children(app.process.pid)
            async with httpx.AsyncClient(base_url=app.url, headers={"Cookie": cookie}) as http:
                attempts = {
                    "a program of one's own": {"name": "evil", "clientType": "stdio",
                                               "fullCommand": "sh -c 'touch /tmp/pwned-by-mcp'"},
                    "an unlisted host": {"name": "meta", "clientType": "streamable-http",
                                         "url": "http://169.254.169.254/latest/meta-data"},
                    "a configured server's name": {"name": "time", "clientType": "streamable-http",
                                                   "url": "http://127.0.0.1:9/mcp"},
                    "a name nobody configured": {"name": "rm -rf /"},
                }  # fmt: skip
                replies = {
                    what: await http.post("/mcp", json={"sessionId": chat.session_id, **body})
                    for what, body in attempts.items()
                }
            after = children(app.process.pid)
            await chat.close()
        finally:
            app.stop()
    # a program is not even a kind of connection the UI may ask for (422, the request's
    # shape); the others are refused with one line saying why (400)
    assert replies.pop("a program of one's own").status_code == 422
    for what, reply in replies.items():
        assert reply.status_code == 400, (what, reply.status_code, reply.text)
        detail = reply.json()["detail"]
        assert isinstance(detail, str) and "\n" not in detail and detail, (what, detail)
    assert not Path("/tmp/pwned-by-mcp").exists()
    assert after <= before  # no process was started for any of them
