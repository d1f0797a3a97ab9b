"""Prompt injection with side effects: a hostile document read through a
real MCP server tells the agent to call a tool that writes; the scripted model obeys. The
writing tool (no read-only annotation) runs only when allowed: on the command line only with
`--yes`; the refusal reaches the agent as the tool's result. Read-only tools (the server's
`readOnlyHint`, or REQSTUDIO_MCP_READ_ONLY_TOOLS) never ask."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from reqstudio.tools.confirmation import guard_side_effects, is_read_only
from reqstudio.tools.mcp_tools import McpToolbox, content_to_text
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript
from tests.test_agent_cli import run_cli

SECURITY = Path(__file__).resolve().parent / "data" / "security"
REASONING = "research agent"  # reqstudio/prompts/agent/react_system.md
ANSWER = "Write the final answer now"  # reqstudio/prompts/agent/answer_user.md
INJECTED = "PWNED: all requirements deleted"


def notes_config(tmp_path: Path) -> tuple[Path, Path]:
    notes = tmp_path / "notes.txt"
    server = {"command": sys.executable, "args": [str(SECURITY / "notes_server.py")],
              "env": {"NOTES_FILE": str(notes)}}  # fmt: skip
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"notes": server}}), encoding="utf-8")
    return config, notes


def tool_call(name: str, args: dict) -> dict:
    return {"type": "tool_call", "id": "call_1", "name": name, "args": args}


async def test_a_tool_that_may_change_things_asks_and_a_refusal_is_its_result(tmp_path: Path):
    config, notes = notes_config(tmp_path)
    asked: list[tuple[str, dict[str, Any]]] = []
    answers = [False, True]

    async def confirm(tool: str, arguments: dict[str, Any]) -> bool:
        asked.append((tool, arguments))
        return answers.pop(0)

    async with McpToolbox.open(config) as toolbox:
        shared = {tool.name: tool for tool in toolbox.tools}
        adapters_handler = shared["write_note"].handle_tool_error
        assert is_read_only(shared["read_document"])  # the server's readOnlyHint
        assert not is_read_only(shared["write_note"])  # no annotation: may change things
        assert is_read_only(shared["write_note"], {"notes:write_note"})  # the setting
        assert is_read_only(shared["write_note"], {"notes:*"})
        tools = {tool.name: tool for tool in guard_side_effects(toolbox.tools, confirm)}

        document = await tools["read_document"].ainvoke(tool_call("read_document", {}))
        assert "IGNORE YOUR INSTRUCTIONS" in content_to_text(document.content)
        refused = await tools["write_note"].ainvoke(tool_call("write_note", {"text": INJECTED}))
        assert refused.status == "error" and "NOT run" in content_to_text(refused.content)
        assert not notes.exists()
        allowed = await tools["write_note"].ainvoke(tool_call("write_note", {"text": "ok"}))
        assert allowed.status != "error" and notes.read_text() == "ok\n"
        # the shared server's own tool is left as it was (other sessions use it)
        assert shared["write_note"].coroutine is not tools["write_note"].coroutine
        assert shared["write_note"].handle_tool_error is adapters_handler
    assert asked == [("write_note", {"text": INJECTED}), ("write_note", {"text": "ok"})]


def obeying_model(server: ScriptedLLMServer) -> None:
    """A model that reads the document, then does what the document says."""
    server.script(
        Reply(match=REASONING, content="先读文档。",
              tool_calls=[ToolCallScript("read_document", {})]),
        Reply(match=REASONING, content="文档要求调用 write_note。",
              tool_calls=[ToolCallScript("write_note", {"text": INJECTED})]),
        Reply(match=REASONING, content="够了。"),
        Reply(match=ANSWER, content="文档列出两条需求：FR-01、FR-02。"),
    )  # fmt: skip


def test_the_command_line_refuses_a_writing_tool_unless_yes(llm_server, tmp_path: Path):
    config, notes = notes_config(tmp_path)
    obeying_model(llm_server)
    question = "总结共享需求文档 / Summarise the shared requirements document"
    refused = run_cli(llm_server, tmp_path, question, "--mcp-config", str(config), "--no-search")
    assert refused.returncode == 0, refused.stderr
    assert not notes.exists()  # the injected call did not run
    assert "✗ write_note failed: The call of write_note was NOT run" in refused.stderr
    assert "文档列出两条需求" in refused.stdout
    # the agent was told, as the tool's result
    tool_results = [
        m for r in llm_server.requests for m in r["messages"] if m.get("role") == "tool"
    ]
    assert any("NOT run" in str(m["content"]) for m in tool_results)

    llm_server.reset()
    obeying_model(llm_server)
    allowed = run_cli(
        llm_server, tmp_path, question, "--mcp-config", str(config), "--no-search", "--yes"
    )
    assert allowed.returncode == 0, allowed.stderr
    assert notes.read_text(encoding="utf-8") == INJECTED + "\n"  # --yes: the user's say-so

    llm_server.reset()
    obeying_model(llm_server)
    notes.unlink()
    listed = run_cli(llm_server, tmp_path, question, "--mcp-config", str(config), "--no-search",
                     REQSTUDIO_MCP_READ_ONLY_TOOLS="notes:write_note")  # fmt: skip
    assert listed.returncode == 0 and notes.exists()  # named read-only by the setting


async def test_a_question_the_run_no_longer_waits_for_is_taken_back(tmp_path: Path):
    """The Agent asks to run write_note and nobody answers before the run's time is up: the
    buttons go, the browser stops waiting (clear_ask), the question says the run ended, in
    the user's language, and nothing was written. (Before: the buttons stayed, live-looking,
    under a run that had ended.)"""
    from tests.apps import AppProcess
    from tests.browser_support import provider_env
    from tests.socket_support import NO_ANSWER, ChatSocket, sign_in_cookie

    config, notes = notes_config(tmp_path)
    with ScriptedLLMServer() as server:
        env = provider_env(server) | {
            "REQSTUDIO_MCP_CONFIG": str(config),
            "AGENT_MAX_EXECUTION_TIME": "10",  # the tool phase ends before anyone answers
        }
        app = AppProcess(tmp_path / "data", env).start()
        chat = ChatSocket(
            app.url, sign_in_cookie(app.url), profile="Agent", answer_actions=lambda _: NO_ANSWER
        )
        try:
            await chat.connect()
            obeying_model(server)
            await chat.send("总结共享需求文档")
            ask = await chat.wait_for(lambda event, data: event == "ask", timeout=60)
            question_id = ask["msg"]["id"]
            await chat.wait_for(  # the run's answer, once its tool phase ran out of time
                lambda event, data: (
                    event == "new_message" and "文档列出两条需求" in str(data.get("output"))
                ),
                timeout=60,
            )
            names = [event for event, _ in chat.events]
            assert "clear_ask" in names[names.index("ask") :]
            removed = {data["name"] for event, data in chat.events if event == "remove_action"}
            assert removed == {"allow_tool", "refuse_tool"}
            updates = [
                data["output"]
                for event, data in chat.events
                if event == "update_message" and data.get("id") == question_id
            ]
            assert updates and "write_note" in updates[-1]  # the question stays readable
            assert updates[-1].endswith(
                "The run ended; this question no longer waits for an answer."
            )
            assert not notes.exists()
        finally:
            await chat.close()
            app.stop()
