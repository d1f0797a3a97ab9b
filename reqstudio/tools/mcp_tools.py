"""MCP tools for the agent, over long-lived sessions.

The config file has the common shape:

    {"mcpServers": {
        "time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"], "env": {}},
        "maps": {"url": "https://example.com/mcp", "transport": "streamable_http"}}}

Each server's session is opened once (`client.session(name)` from langchain-mcp-adapters) and
kept while the toolbox is open, so a tool call costs milliseconds instead of a new process.
A server that fails to start is reported in `statuses` and left out; the others still work.

Each session lives in a task of its own: anyio requires a session to be closed by the task
that opened it, and a chat UI opens the toolbox in one handler and closes it in another.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import shutil
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
from langchain_core.tools import BaseTool, ToolException
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp import ClientSession
from mcp.shared.exceptions import McpError

log = logging.getLogger("reqstudio.agent.mcp")

DEFAULT_START_TIMEOUT = 20.0
DEFAULT_CALL_TIMEOUT = 60.0


class McpConfigError(ValueError):
    """The MCP config file cannot be read or does not have the `mcpServers` shape."""


@dataclass
class McpServerStatus:
    name: str
    ok: bool
    error: str | None = None
    tools: list[str] = field(default_factory=list)


def content_to_text(content: Any) -> str:
    """MCP results arrive as content blocks ([{"type": "text", "text": ...}, ...]): as text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        kind = content.get("type")
        if kind == "text" or "text" in content:
            return str(content.get("text", ""))
        if kind in {"image", "file", "audio"}:
            where = content.get("url") or content.get("mime_type") or "inline data"
            return f"[{kind}: {where}]"
        return json.dumps(dict(content), ensure_ascii=False, default=str)
    if isinstance(content, list | tuple):
        return "\n".join(part for part in (content_to_text(item) for item in content) if part)
    text = getattr(content, "text", None)
    if isinstance(text, str):
        return text
    return str(content)


BUNDLED_MCP_CONFIG = Path(str(resources.files(__package__) / "mcp.json"))  # package data
MCP_OFF = ("off", "none")


def resolve_mcp_config(chosen: str | Path | None) -> Path | None:
    """Which MCP config file to use: the one chosen (a flag or REQSTUDIO_MCP_CONFIG; "off" for
    none), else ./mcp.json, else the bundled one. A chosen file that is missing is an error."""
    if isinstance(chosen, str) and chosen.strip().lower() in MCP_OFF:
        return None
    if chosen:
        path = Path(chosen)
        if not path.is_file():
            raise McpConfigError(f"MCP config file not found: {path}")
        return path
    for candidate in (Path("mcp.json"), BUNDLED_MCP_CONFIG):
        if candidate.is_file():
            return candidate
    return None


def read_mcp_config(source: Path | str | Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The servers of a config file (or an already-parsed dict), as adapter connections."""
    if isinstance(source, Mapping):
        data: Any = source
        where = "MCP config"
    else:
        path = Path(source)
        where = str(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise McpConfigError(f"MCP config file not found: {path}") from None
        except (OSError, json.JSONDecodeError) as exc:
            raise McpConfigError(f"MCP config {path} is not readable JSON: {exc}") from None
    servers = data.get("mcpServers") if isinstance(data, Mapping) else None
    if not isinstance(servers, Mapping):
        raise McpConfigError(f'{where}: expected an object {{"mcpServers": {{name: server}}}}')
    return {str(name): connection_for(str(name), spec, where) for name, spec in servers.items()}


def connection_for(name: str, spec: Any, where: str = "MCP config") -> dict[str, Any]:
    if not isinstance(spec, Mapping):
        raise McpConfigError(f"{where}: server {name!r} must be an object")
    if "url" in spec:
        transport = str(spec.get("transport") or spec.get("type") or "streamable_http")
        transport = {"http": "streamable_http", "streamable-http": "streamable_http"}.get(
            transport, transport
        )
        connection: dict[str, Any] = {"transport": transport, "url": str(spec["url"])}
        if spec.get("headers"):
            connection["headers"] = dict(spec["headers"])
        return connection
    if "command" in spec:
        args = spec.get("args") or []
        if not isinstance(args, list):
            raise McpConfigError(f"{where}: server {name!r}: args must be a list")
        connection = {
            "transport": "stdio",
            "command": resolve_command(str(spec["command"])),
            "args": [str(a) for a in args],
        }
        env = spec.get("env") or {}
        if not isinstance(env, Mapping):
            raise McpConfigError(f"{where}: server {name!r}: env must be an object")
        # A minimal safe set plus the server's own variables; never the rest of our
        # environment (provider keys such as OPENAI_API_KEY stay with ReqStudio).
        connection["env"] = {**safe_environment(), **{str(k): str(v) for k, v in env.items()}}
        if spec.get("cwd"):
            connection["cwd"] = str(spec["cwd"])
        return connection
    raise McpConfigError(f"{where}: server {name!r} needs a 'command' or a 'url'")


# What a server process may inherit from ours: enough to find programs, a home and a locale.
SAFE_ENV_NAMES = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "USERPROFILE")


def safe_environment() -> dict[str, str]:
    return {name: os.environ[name] for name in SAFE_ENV_NAMES if name in os.environ}


def resolve_command(command: str) -> str:
    """`python` means this interpreter; a script missing from PATH is looked for next to it
    (the virtualenv's bin directory, where `mcp-server-time` is installed)."""
    if command in {"python", "python3"}:
        return sys.executable
    if os.sep in command or shutil.which(command):
        return command
    beside = Path(sys.executable).parent / command
    return str(beside) if beside.exists() else command


def describe_start_error(error: BaseException) -> str:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, FileNotFoundError):
        return f"command not found ({error.filename or error})"
    if isinstance(error, TimeoutError):
        return "did not answer in time"
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def mark_mcp_tools(tools: list[BaseTool], server_name: str) -> list[BaseTool]:
    for tool in tools:
        tool.metadata = {
            **(tool.metadata or {}),
            "reqstudio_kind": "mcp",
            "mcp_server": server_name,
        }
    return tools


async def tools_from_session(session: ClientSession, server_name: str) -> list[BaseTool]:
    """LangChain tools for an MCP session someone else opened and keeps open (e.g. the one
    Chainlit's MCP button creates). The tools are usable while that session lives."""
    return mark_mcp_tools(await load_mcp_tools(session, server_name=server_name), server_name)


async def settle(tasks: list[asyncio.Task[Any]]) -> None:
    """Wait until `tasks` are done, ignoring how they ended (their failures are reported
    elsewhere). Unlike `suppress(BaseException)` around an await, this does not swallow the
    cancellation of the task that waits: a caller that is cancelled stays cancelled."""
    if not tasks:
        return
    await asyncio.wait(tasks)
    for task in tasks:
        if not task.cancelled():
            task.exception()  # retrieved, so asyncio does not log it as never retrieved


class McpToolbox:
    """The MCP tools of one chat session, with the state of each configured server."""

    stop_grace = 5.0
    """Seconds a server's session may take to close before it is cancelled."""

    def __init__(
        self,
        connections: Mapping[str, dict[str, Any]] | None = None,
        *,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
    ):
        self.connections: dict[str, dict[str, Any]] = dict(connections or {})
        self.start_timeout = start_timeout
        self.call_timeout = call_timeout
        self.statuses: list[McpServerStatus] = []
        self.shared: McpToolbox | None = None  # the process's configured servers (for_session)
        self._tools: dict[str, list[BaseTool]] = {}
        self._holders: dict[str, asyncio.Task[None]] = {}
        self._stop = asyncio.Event()
        self._stack = AsyncExitStack()

    # --- opening and closing -----------------------------------------------------

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls,
        config: Path | str | Mapping[str, Any] | None,
        *,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> AsyncIterator[McpToolbox]:
        """`async with McpToolbox.open("mcp.json") as toolbox: toolbox.tools ...`

        `config=None` gives an empty toolbox (MCP off). A bad config file raises
        `McpConfigError`; a server that does not start is only reported.
        """
        toolbox = await cls.start(config, start_timeout=start_timeout, call_timeout=call_timeout)
        try:
            yield toolbox
        finally:
            await toolbox.aclose()

    @classmethod
    def for_session(cls, shared: McpToolbox) -> McpToolbox:
        """One chat session's toolbox: the `shared` servers' tools, which it neither starts nor
        stops, plus the sessions it is handed (`add_session`, e.g. connected in the UI)."""
        toolbox = cls(None, start_timeout=shared.start_timeout, call_timeout=shared.call_timeout)
        toolbox.shared = shared
        return toolbox

    @classmethod
    async def start(
        cls,
        config: Path | str | Mapping[str, Any] | None,
        *,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> McpToolbox:
        """Open every configured server (concurrently); close later with `aclose()`."""
        connections = read_mcp_config(config) if config is not None else {}
        toolbox = cls(connections, start_timeout=start_timeout, call_timeout=call_timeout)
        await toolbox._start_all()
        return toolbox

    async def _start_all(self) -> None:
        self._stack.push_async_callback(self._stop_holders)
        client = MultiServerMCPClient(
            {
                name: {**conn, "session_kwargs": {"read_timeout_seconds": self._call_timeout()}}
                for name, conn in self.connections.items()
            }
        )
        results = await asyncio.gather(
            *(self._start_server(client, name) for name in self.connections)
        )
        self.statuses = list(results)

    def _call_timeout(self) -> timedelta:
        return timedelta(seconds=self.call_timeout)

    async def _start_server(self, client: MultiServerMCPClient, name: str) -> McpServerStatus:
        ready: asyncio.Future[list[BaseTool]] = asyncio.get_running_loop().create_future()
        holder = asyncio.create_task(self._hold_session(client, name, ready), name=f"mcp:{name}")
        self._holders[name] = holder
        try:
            tools = await asyncio.wait_for(asyncio.shield(ready), self.start_timeout)
        except asyncio.CancelledError:
            holder.cancel()  # the caller gave up: do not leave the server starting
            self._holders.pop(name, None)
            raise
        except Exception as exc:
            holder.cancel()
            await settle([holder])
            self._holders.pop(name, None)
            reason = describe_start_error(exc)
            log.warning("MCP server %r left out: %s", name, reason)
            return McpServerStatus(name=name, ok=False, error=reason)
        self._tools[name] = tools
        log.info("MCP server %r: %d tool(s)", name, len(tools))
        return McpServerStatus(name=name, ok=True, tools=[t.name for t in tools])

    async def _hold_session(
        self, client: MultiServerMCPClient, name: str, ready: asyncio.Future[list[BaseTool]]
    ) -> None:
        try:
            async with client.session(name) as session:
                tools = mark_mcp_tools(await load_mcp_tools(session, server_name=name), name)
                for tool in tools:
                    self._report_when_down(tool, name)
                ready.set_result(tools)
                await self._stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except Exception as exc:  # includes the ExceptionGroups anyio raises
            if not ready.done():
                ready.set_exception(exc)
            else:
                self._mark_down(name, describe_start_error(exc))

    def _report_when_down(self, tool: BaseTool, server: str) -> None:
        """A call on a dead session fails at once: mark the server down (its tools leave the
        toolbox) and let the call fail with a sentence the agent can read."""
        call = getattr(tool, "coroutine", None)
        if call is None:
            return

        @functools.wraps(call)
        async def call_or_report(*args: Any, **kwargs: Any) -> Any:
            try:
                return await call(*args, **kwargs)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, McpError) as exc:
                if isinstance(exc, McpError) and "closed" not in str(exc).lower():
                    raise
                self._mark_down(server, "the server process ended")
                raise ToolException(
                    f"MCP server {server!r} is not running any more; its tools are unavailable."
                ) from exc

        tool.coroutine = call_or_report

    def _mark_down(self, name: str, reason: str) -> None:
        log.warning("MCP server %r stopped: %s", name, reason)
        self._tools.pop(name, None)
        for status in self.statuses:
            if status.name == name:
                status.ok, status.error = False, f"stopped: {reason}"

    async def _stop_holders(self) -> None:
        self._stop.set()
        holders = list(self._holders.values())
        self._holders.clear()
        if not holders:
            return
        _, still_running = await asyncio.wait(holders, timeout=self.stop_grace)
        for task in still_running:
            task.cancel()
        await settle(holders)

    async def aclose(self) -> None:
        """Close every session this toolbox opened (safe to call from any task, and twice)."""
        await self._stack.aclose()
        self._tools = {n: t for n, t in self._tools.items() if n in self._external}

    # --- sessions opened elsewhere -------------------------------------------------

    @property
    def _external(self) -> set[str]:
        return {s.name for s in self.statuses if s.name not in self.connections}

    async def add_session(self, name: str, session: ClientSession) -> McpServerStatus:
        """Add the tools of an already-open session (its owner keeps it open and closes it)."""
        try:
            tools = await tools_from_session(session, name)
        except Exception as exc:
            status = McpServerStatus(name=name, ok=False, error=describe_start_error(exc))
        else:
            self._tools[name] = tools
            status = McpServerStatus(name=name, ok=True, tools=[t.name for t in tools])
        self.statuses = [s for s in self.statuses if s.name != name] + [status]
        return status

    def remove_server(self, name: str) -> None:
        """Forget a server's tools (e.g. the user disconnected it in the UI)."""
        self._tools.pop(name, None)
        self.statuses = [s for s in self.statuses if s.name != name]

    # --- reading -------------------------------------------------------------------

    @property
    def tools(self) -> list[BaseTool]:
        seen: set[str] = set()
        tools: list[BaseTool] = []
        servers = {**(self.shared._tools if self.shared else {}), **self._tools}
        for server, server_tools in servers.items():
            for tool in server_tools:
                if tool.name in seen:
                    log.warning("MCP tool %r of %r hidden: the name is taken", tool.name, server)
                    continue
                seen.add(tool.name)
                tools.append(tool)
        return tools

    @property
    def failed(self) -> list[McpServerStatus]:
        shared = self.shared.statuses if self.shared else []
        return [s for s in [*shared, *self.statuses] if not s.ok]


class SharedMcpServers:
    """The MCP servers of the app's own configuration, started once per process at the first
    Agent session that needs them and shared by every session after it (a server per socket
    let anyone who reached the app start processes without limit). Closed at app shutdown."""

    def __init__(self, **toolbox_options: Any):
        self.toolbox_options = toolbox_options
        self._started: dict[str, McpToolbox] = {}
        self._lock = asyncio.Lock()

    async def get(self, config: Path | None) -> McpToolbox:
        """The shared toolbox for `config` (None: no configured servers). A bad config file
        raises `McpConfigError` each time it is asked for."""
        key = str(config) if config is not None else ""
        async with self._lock:
            if key not in self._started:
                self._started[key] = await McpToolbox.start(config, **self.toolbox_options)
            return self._started[key]

    async def aclose(self) -> None:
        started, self._started = list(self._started.values()), {}
        for toolbox in started:
            await toolbox.aclose()
