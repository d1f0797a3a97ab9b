"""MCP tools over long-lived sessions, against real servers started over stdio: the bundled
`mcp-server-time`, and small broken ones."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from langchain_core.tools import ToolException
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from reqstudio.modes.agent import AgentConfig, ReactAgent, ToolCallFinished, ToolCallStarted
from reqstudio.tools import mcp_tools
from reqstudio.tools.mcp_tools import (
    McpConfigError,
    McpToolbox,
    content_to_text,
    read_mcp_config,
    resolve_command,
    tools_from_session,
)
from reqstudio.tools.web_search import WebSearch
from tests.agent_support import calls_at_once
from tests.scripted_server import ToolCallScript

BUNDLED_CONFIG = Path(mcp_tools.__file__).with_name("mcp.json")

DYING_SERVER = '''
import os
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("dying")

@mcp.tool()
def echo(text: str) -> str:
    """Echo the text."""
    return text

@mcp.tool()
def die() -> str:
    """End the server process."""
    os._exit(0)

mcp.run()
'''


def tool_call(name: str, args: dict) -> dict:
    return {"type": "tool_call", "id": "call_1", "name": name, "args": args}


async def test_bundled_config_runs_the_time_server_and_its_tools_answer():
    async with McpToolbox.open(BUNDLED_CONFIG) as toolbox:
        assert [(s.name, s.ok) for s in toolbox.statuses] == [("time", True)]
        tools = {tool.name: tool for tool in toolbox.tools}
        assert {"get_current_time", "convert_time"} <= set(tools)
        assert tools["get_current_time"].metadata["reqstudio_kind"] == "mcp"

        message = await tools["get_current_time"].ainvoke(
            tool_call("get_current_time", {"timezone": "UTC"})
        )
        payload = json.loads(content_to_text(message.content))
        assert payload["timezone"] == "UTC"
        assert payload["datetime"].endswith("+00:00")

        # The session is kept: a second call does not start a new server (fast).
        loop = asyncio.get_running_loop()
        started = loop.time()
        again = await tools["get_current_time"].ainvoke(
            tool_call("get_current_time", {"timezone": "Asia/Shanghai"})
        )
        assert loop.time() - started < 1.0
        assert '"timezone": "Asia/Shanghai"' in content_to_text(again.content)

        # A tool error is a result marked as an error, with the server's words.
        error = await tools["get_current_time"].ainvoke(
            tool_call("get_current_time", {"timezone": "Mars/Olympus"})
        )
        assert error.status == "error" and "Invalid timezone" in content_to_text(error.content)


async def test_a_server_that_fails_to_start_is_reported_and_left_out(tmp_path):
    config = {
        "mcpServers": {
            "time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]},
            "missing": {"command": "/nonexistent/mcp-server", "args": []},
            "crashes": {"command": "python", "args": ["-c", "import sys; sys.exit(3)"]},
        }
    }
    async with McpToolbox.open(config) as toolbox:
        status = {s.name: s for s in toolbox.statuses}
        assert status["time"].ok
        assert not status["missing"].ok and "command not found" in status["missing"].error
        assert not status["crashes"].ok and status["crashes"].error
        assert [s.name for s in toolbox.failed] == ["missing", "crashes"]
        assert {t.name for t in toolbox.tools} == {"get_current_time", "convert_time"}


async def test_a_server_that_never_answers_is_given_up_on():
    # Reads its input and never says a word (it ends when its input closes).
    silent = {"command": "python", "args": ["-c", "import sys; sys.stdin.read()"]}
    config = {"mcpServers": {"silent": silent}}
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with McpToolbox.open(config, start_timeout=1.0) as toolbox:
        assert toolbox.statuses[0].error == "did not answer in time"
        assert toolbox.tools == []
    assert loop.time() - started < 10


async def test_a_server_that_dies_is_reported_and_its_tools_leave(tmp_path):
    script = tmp_path / "dying_server.py"
    script.write_text(DYING_SERVER)
    config = {"mcpServers": {"dying": {"command": sys.executable, "args": [str(script)]}}}
    async with McpToolbox.open(config, call_timeout=10) as toolbox:
        tools = {t.name: t for t in toolbox.tools}
        assert content_to_text(await tools["echo"].ainvoke({"text": "hello"})) == "hello"
        with pytest.raises(ToolException, match="not running any more"):
            await tools["die"].ainvoke({})
        with pytest.raises(ToolException, match="not running any more"):
            await tools["echo"].ainvoke({"text": "again"})
        assert toolbox.statuses[0].ok is False
        assert "stopped" in toolbox.statuses[0].error
        assert toolbox.tools == []


async def test_the_toolbox_can_be_closed_from_another_task():
    # A chat UI opens tools when the chat starts and closes them when it ends, in other tasks.
    toolbox = await asyncio.create_task(McpToolbox.start(BUNDLED_CONFIG))
    assert toolbox.statuses[0].ok
    await asyncio.create_task(toolbox.aclose())
    assert toolbox.tools == []
    await toolbox.aclose()  # twice is fine


async def test_tools_of_an_already_open_session_can_be_added():
    params = StdioServerParameters(
        command=resolve_command("mcp-server-time"), args=["--local-timezone", "UTC"]
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await tools_from_session(session, "ui-time")
        assert {t.name for t in tools} == {"get_current_time", "convert_time"}
        assert tools[0].metadata["mcp_server"] == "ui-time"

        async with McpToolbox.open(None) as toolbox:
            status = await toolbox.add_session("ui-time", session)
            assert status.ok and "get_current_time" in status.tools
            tool = next(t for t in toolbox.tools if t.name == "get_current_time")
            result = await tool.ainvoke({"timezone": "UTC"})
            assert '"timezone": "UTC"' in content_to_text(result)
            toolbox.remove_server("ui-time")
            assert toolbox.tools == []


async def test_the_agent_mixes_web_search_and_mcp_tools_in_one_turn(llm_server, factory):
    calls = [
        ToolCallScript("get_current_time", {"timezone": "UTC"}),
        ToolCallScript("web_search", {"query": "UTC time standard"}),
    ]
    llm_server.script(
        *calls_at_once(
            "I need the time and a source on time zones.",
            calls,
            "Enough.",
            "It is now ... UTC [1][2].",
        )
    )

    def backend(query, max_results):
        return [{"title": "UTC", "href": "https://example.org/utc", "body": "Coordinated time."}]

    async with McpToolbox.open(BUNDLED_CONFIG) as toolbox:
        agent = ReactAgent(
            factory, [WebSearch(backend).as_tool(), *toolbox.tools], AgentConfig(language="en")
        )
        events = [event async for event in agent.run("What time is it in UTC?")]

    started = {e.tool: e.kind for e in events if isinstance(e, ToolCallStarted)}
    assert started == {"get_current_time": "mcp", "web_search": "search"}
    finished = {e.tool: e for e in events if isinstance(e, ToolCallFinished)}
    assert finished["get_current_time"].ok
    assert '"timezone": "UTC"' in finished["get_current_time"].result_text
    # The model was offered both kinds of tools, and the answer model got both results.
    offered = {t["function"]["name"] for t in llm_server.requests[0]["tools"]}
    assert {"web_search", "get_current_time", "convert_time"} <= offered
    answer_request = str(llm_server.requests[-1]["messages"][0]["content"])
    assert "get_current_time" in answer_request and "https://example.org/utc" in answer_request


def test_config_files_in_the_common_shape_are_read(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "local": {"command": "python", "args": ["-m", "x"], "env": {"TOKEN": "t"}},
                    "maps": {"url": "https://example.org/mcp", "transport": "streamable_http"},
                    "remote": {"url": "https://example.org/sse", "transport": "sse"},
                }
            }
        )
    )
    connections = read_mcp_config(path)
    assert connections["local"]["transport"] == "stdio"
    assert connections["local"]["command"] == sys.executable
    assert connections["local"]["env"]["TOKEN"] == "t" and "PATH" in connections["local"]["env"]
    assert connections["maps"] == {"transport": "streamable_http", "url": "https://example.org/mcp"}
    assert connections["remote"]["transport"] == "sse"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not readable JSON"),
        ('{"servers": {}}', "mcpServers"),
        ('{"mcpServers": {"x": {"args": []}}}', "needs a 'command' or a 'url'"),
    ],
)
def test_bad_config_files_are_refused_clearly(tmp_path, content, message):
    path = tmp_path / "mcp.json"
    path.write_text(content)
    with pytest.raises(McpConfigError, match=message):
        read_mcp_config(path)


def test_content_blocks_become_text():
    blocks = [
        {"type": "text", "text": "line one"},
        {"type": "image", "url": "https://example.org/a.png"},
        {"type": "text", "text": "line two"},
    ]
    assert content_to_text(blocks) == "line one\n[image: https://example.org/a.png]\nline two"
    assert content_to_text("plain") == "plain"
    assert content_to_text(None) == ""


def test_mcp_config_resolution(tmp_path, monkeypatch):
    from reqstudio.tools.mcp_tools import BUNDLED_MCP_CONFIG, resolve_mcp_config

    monkeypatch.chdir(tmp_path)
    assert resolve_mcp_config("off") is None
    assert resolve_mcp_config(None) == BUNDLED_MCP_CONFIG  # no ./mcp.json here
    (tmp_path / "mcp.json").write_text('{"mcpServers": {}}')
    assert resolve_mcp_config(None) == Path("mcp.json")
    chosen = tmp_path / "team.json"
    chosen.write_text('{"mcpServers": {}}')
    assert resolve_mcp_config(str(chosen)) == chosen
    with pytest.raises(McpConfigError, match="not found"):
        resolve_mcp_config(str(tmp_path / "missing.json"))


ENVIRONMENT_SERVER = '''
import json
import os
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("environment")

@mcp.tool()
def environment() -> str:
    """The server process's environment variables."""
    return json.dumps(dict(os.environ))

mcp.run()
'''


@pytest.mark.parametrize("env_block", [{"MAPS_TOKEN": "maps-token-123"}, None])
async def test_a_server_gets_its_own_variables_and_a_safe_set_never_provider_keys(
    tmp_path, monkeypatch, env_block
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent-secret")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-parent-deepseek")
    monkeypatch.setenv("REQSTUDIO_USERS", "alice:parent-password")
    script = tmp_path / "environment_server.py"
    script.write_text(ENVIRONMENT_SERVER)
    server: dict = {"command": "python", "args": [str(script)]}
    if env_block is not None:
        server["env"] = env_block
    async with McpToolbox.open({"mcpServers": {"env": server}}) as toolbox:
        assert toolbox.statuses[0].ok, toolbox.statuses
        tool = toolbox.tools[0]
        message = await tool.ainvoke(tool_call("environment", {}))
    seen = json.loads(content_to_text(message.content))
    assert "OPENAI_API_KEY" not in seen and "DEEPSEEK_API_KEY" not in seen
    assert "REQSTUDIO_USERS" not in seen
    assert "sk-parent" not in json.dumps(seen)
    assert seen["PATH"]  # programs can still be found
    if env_block is not None:
        assert seen["MAPS_TOKEN"] == "maps-token-123"


async def test_closing_the_toolbox_does_not_swallow_the_callers_cancellation():
    toolbox = McpToolbox({})
    toolbox.stop_grace = 0.05
    cleanup_started = asyncio.Event()

    async def slow_to_close() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cleanup_started.set()
            await asyncio.Event().wait()  # a session that takes its time to close

    holder = asyncio.create_task(slow_to_close())
    toolbox._holders["slow"] = holder
    await toolbox._start_all()  # registers the closing of the holders
    closing = asyncio.create_task(toolbox.aclose())
    await asyncio.wait_for(cleanup_started.wait(), timeout=10)
    closing.cancel()  # e.g. the chat session ends while the toolbox closes
    with pytest.raises(asyncio.CancelledError):
        await closing
    holder.cancel()
    with pytest.raises(asyncio.CancelledError):
        await holder


def time_servers_running() -> list:
    import psutil

    return [
        child
        for child in psutil.Process().children(recursive=True)
        if "mcp-server-time" in " ".join(child.cmdline()) and child.is_running()
    ]


async def test_configured_servers_are_started_once_per_process_and_shared_by_sessions():
    from reqstudio.tools.mcp_tools import SharedMcpServers

    shared = SharedMcpServers()
    # twenty sessions opening at once, as twenty Agent sockets do
    boxes = [
        McpToolbox.for_session(toolbox)
        for toolbox in await asyncio.gather(*(shared.get(BUNDLED_CONFIG) for _ in range(20)))
    ]
    try:
        assert len(time_servers_running()) == 1
        assert all("get_current_time" in {t.name for t in box.tools} for box in boxes)
        for box in boxes[:10]:  # sessions ending leave the shared server running for the rest
            await box.aclose()
        tool = next(t for t in boxes[-1].tools if t.name == "get_current_time")
        answer = await tool.ainvoke(tool_call("get_current_time", {"timezone": "UTC"}))
        assert "datetime" in content_to_text(answer.content)
        assert len(time_servers_running()) == 1
    finally:
        await shared.aclose()
    for _ in range(50):  # the process is reaped asynchronously once its session closes
        if not time_servers_running():
            break
        await asyncio.sleep(0.1)
    assert time_servers_running() == []


async def test_a_sessions_own_servers_stay_its_own(tmp_path: Path):
    from reqstudio.tools.mcp_tools import SharedMcpServers

    shared = SharedMcpServers()
    base = await shared.get(None)  # no configured servers
    mine, yours = McpToolbox.for_session(base), McpToolbox.for_session(base)
    params = StdioServerParameters(command=resolve_command("mcp-server-time"), args=[])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        status = await mine.add_session("time-ui", session)
        assert status.ok
        assert "get_current_time" in {t.name for t in mine.tools}
        assert yours.tools == []
    await shared.aclose()
