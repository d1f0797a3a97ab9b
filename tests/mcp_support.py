"""`reqstudio mcp` as an MCP client meets it: a real process, reached through the SDK's own client
(`ClientSession` over `stdio_client` or `streamablehttp_client`)."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult

from reqstudio.local_model import free_port
from tests.cli_support import REQSTUDIO, cli_env

PASSWORD = "a-password-of-the-test"


@contextlib.asynccontextmanager
async def stdio_session(env: dict[str, str], cwd: Path) -> AsyncIterator[ClientSession]:
    """A session with `reqstudio mcp` started as the client's child process."""
    params = StdioServerParameters(
        command=REQSTUDIO[0], args=[*REQSTUDIO[1:], "mcp"], env=env, cwd=str(cwd)
    )
    with (cwd / "server-stderr.txt").open("w") as errors:
        async with (
            stdio_client(params, errlog=errors) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


@contextlib.asynccontextmanager
async def http_session(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    """A session over streamable HTTP, its requests carrying `token`; `session.session_id`
    is the server's id for it."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        create_mcp_http_client(headers=headers) as client,
        streamable_http_client(url, http_client=client) as (read, write, session_id),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        session.session_id = session_id()  # type: ignore[attr-defined]
        yield session


def leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


async def client_refusal(url: str, token: str | None) -> int:
    """The HTTP status that ended the SDK client's attempt at a session with `token`."""
    try:
        with anyio.fail_after(30):
            async with http_session(url, token) as session:
                await session.list_tools()
    except BaseException as error:  # the transport's task group raises a group
        statuses = [e.response.status_code for e in leaves(error)
                    if isinstance(e, httpx.HTTPStatusError)]  # fmt: skip
        assert statuses, repr(error)
        return statuses[0]
    raise AssertionError("the server accepted the session")


def status_in_session(url: str, token: str, session_id: str) -> int:
    """The HTTP status of a `tools/list` request in an open session, carrying `token`."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
        "Mcp-Session-Id": session_id,
        "Mcp-Protocol-Version": "2025-06-18",
    }
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}
    return httpx.post(url, json=body, headers=headers, timeout=30).status_code


class HttpMcpServer:
    """`reqstudio mcp --transport http` on a free port of 127.0.0.1, until stopped."""

    def __init__(self, env: dict[str, str], cwd: Path, *extra: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log = cwd / "mcp-http.log"
        command = [*REQSTUDIO, "mcp", "--transport", "http", "--port", str(self.port), *extra]
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        self._wait_listening()

    def _wait_listening(self, within: float = 60) -> None:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the server ended: {self.log.read_text()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                return
            time.sleep(0.05)
        raise AssertionError(f"the server did not listen within {within} s: {self.log.read_text()}")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(15)


@contextlib.contextmanager
def http_server(env: dict[str, str], cwd: Path, *extra: str) -> Iterator[HttpMcpServer]:
    server = HttpMcpServer(env, cwd, *extra)
    try:
        yield server
    finally:
        server.stop()


def add_user(env: dict[str, str], cwd: Path, name: str) -> None:
    done = subprocess.run(
        [*REQSTUDIO, "users", "add", name], input=PASSWORD + "\n", cwd=cwd, env=env,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def token_command(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*REQSTUDIO, "mcp", "token", *args], cwd=cwd, env=env,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def create_token(env: dict[str, str], cwd: Path, user: str) -> tuple[str, str]:
    """A new token of `user`: (its id, the token)."""
    done = token_command(env, cwd, "create", "--user", user)
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    token_id = done.stderr.split()[1]  # "token mcp-xxxx issued to ..."
    return token_id, token


def answer(result: CallToolResult) -> dict[str, Any]:
    """A tool's structured answer (its JSON text block says the same)."""
    assert not result.isError, result.content
    assert result.structuredContent == json.loads(result.content[0].text)
    return result.structuredContent


def error_text(result: CallToolResult) -> str:
    assert result.isError, result.structuredContent
    return result.content[0].text


def env_for(base_url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    return cli_env(base_url, tmp_path, **extra)


def refused_without_session(url: str, token: str | None) -> int:
    """The HTTP status of an `initialize` request with `token` (None: no Authorization)."""
    headers = {"Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    return httpx.post(url, json=body, headers=headers, timeout=30).status_code
