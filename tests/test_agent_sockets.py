"""An outsider cannot make the app start processes without limit: twenty Agent sockets on the
real app share one set of the configured MCP servers."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import httpx
import psutil
import socketio

from tests.apps import AppProcess
from tests.browser_support import provider_env
from tests.scripted_server import ScriptedLLMServer


def time_servers_of(pid: int) -> list[psutil.Process]:
    return [
        child
        for child in psutil.Process(pid).children(recursive=True)
        if "mcp-server-time" in " ".join(child.cmdline())
    ]


async def open_agent_socket(url: str, cookie: str) -> tuple[socketio.AsyncClient, asyncio.Event]:
    client = socketio.AsyncClient(reconnection=False)
    introduced = asyncio.Event()

    @client.on("new_message")
    async def on_message(message: dict) -> None:
        if "web_search" in str(message.get("output", "")):
            introduced.set()  # the Agent's intro lists its tools: its toolbox is open

    await client.connect(
        url,
        socketio_path="/ws/socket.io",
        transports=["websocket"],
        headers={"Cookie": cookie},
        auth={"sessionId": str(uuid.uuid4()), "clientType": "webapp", "chatProfile": "Agent"},
    )
    await client.emit("connection_successful")
    return client, introduced


async def test_twenty_agent_sockets_start_the_configured_servers_once(tmp_path: Path):
    with ScriptedLLMServer() as server:
        app = AppProcess(tmp_path / "data", provider_env(server)).start()
        try:
            with httpx.Client(base_url=app.url) as http:
                http.get("/user")  # the local user's sign-in cookie
                cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
            sockets = [await open_agent_socket(app.url, cookie) for _ in range(20)]
            await asyncio.wait_for(
                asyncio.gather(*(introduced.wait() for _, introduced in sockets)), 90
            )
            assert len(time_servers_of(app.process.pid)) == 1  # mcp.json has one server
            for client, _ in sockets:
                await client.disconnect()
        finally:
            app.stop()


async def test_servers_connected_from_the_ui_are_capped_per_user(tmp_path: Path):
    with ScriptedLLMServer() as server:
        env = provider_env(server) | {"REQSTUDIO_MCP_USER_SERVERS": "2"}
        app = AppProcess(tmp_path / "data", env).start()
        try:
            async with httpx.AsyncClient(base_url=app.url, timeout=60) as http:
                await http.get("/user")
                cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
                sockets = [await open_agent_socket(app.url, cookie) for _ in range(3)]
                session_ids = [client.connection_auth["sessionId"] for client, _ in sockets]
                replies = [
                    await http.post("/mcp", json={"sessionId": sid, "name": "time"})
                    for sid in session_ids
                ]
                # the same name again in a session that holds it replaces it: not one more
                again = await http.post("/mcp", json={"sessionId": session_ids[0], "name": "time"})
                processes = len(time_servers_of(app.process.pid))
                for client, _ in sockets:
                    await client.disconnect()
        finally:
            app.stop()
    assert [r.status_code for r in replies] == [200, 200, 429]
    assert "MCP" in replies[2].json()["detail"]
    assert again.status_code == 200
    assert processes <= 1 + 2  # mcp.json's shared server and the two UI connections
    assert "MCP connection refused for 'local': 2 held" in app.log()
