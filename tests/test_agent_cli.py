"""`reqstudio agent "question"` in a real subprocess, against the scripted model server and the
real `mcp-server-time`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from reqstudio.scripted_server import Reply, ScriptedLLMServer, ToolCallScript

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_CONFIG = ROOT / "mcp.json"
# The installed `reqstudio` command. (Not `python -m reqstudio.cli`: that loads the module
# twice, as __main__ and as reqstudio.cli, and its UsageError would not be caught.)
REQSTUDIO = [sys.executable, "-c", "import sys; from reqstudio.cli import main; sys.exit(main())"]


def run_cli(server: ScriptedLLMServer, tmp_path: Path, *args: str, **env: str):
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENT_", "REQSTUDIO_"))
    }
    clean.update(
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY="sk-test-not-a-real-key",
        OPENAI_MODEL="scripted-model",
        OPENAI_MAX_RETRIES="0",
        REQSTUDIO_DATA_DIR=str(tmp_path / "data"),
        **env,
    )
    return subprocess.run(
        [*REQSTUDIO, "agent", *args],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_steps_go_to_stderr_the_answer_to_stdout_and_stats_to_a_file(llm_server, tmp_path):
    llm_server.script(
        Reply(
            content="I will ask the clock.",
            tool_calls=[ToolCallScript("get_current_time", {"timezone": "UTC"})],
            prompt_tokens=200,
            completion_tokens=12,
        ),
        Reply(content="That answers it.", prompt_tokens=260, completion_tokens=5),
        Reply(
            content="It is a Saturday in UTC [1].",
            match="Write the final answer now",
            prompt_tokens=300,
            completion_tokens=9,
        ),
    )
    stats_file = tmp_path / "out" / "stats.json"

    done = run_cli(
        llm_server, tmp_path, "What time is it in UTC?",
        "--stats-json", str(stats_file), "--mcp-config", str(BUNDLED_CONFIG), "--lang", "en",
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout == "It is a Saturday in UTC [1].\n"
    assert "[mcp] time: 2 tool(s)" in done.stderr
    assert "[thinking · scripted-model · round 1] I will ask the clock." in done.stderr
    assert '→ get_current_time (mcp) {"timezone": "UTC"}' in done.stderr
    assert '← get_current_time: { "timezone": "UTC"' in done.stderr
    assert "[answer · scripted-model]" in done.stderr
    stats = json.loads(stats_file.read_text())
    assert stats["ok"] is True
    assert stats["per_model"]["function_call"]["input_tokens"] == 460
    assert stats["per_model"]["answer"]["output_tokens"] == 9
    assert stats["total_tokens"] == 200 + 12 + 260 + 5 + 300 + 9
    assert stats["tool_calls"] == 1
    assert stats["mcp_servers"][0]["name"] == "time" and stats["mcp_servers"][0]["ok"]


def test_a_broken_mcp_server_is_reported_and_the_agent_still_answers(llm_server, tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"maps": {"command": "/nonexistent/maps-mcp"}}}))
    llm_server.script(Reply(content="No tools needed."), Reply(content="Hello."))

    done = run_cli(llm_server, tmp_path, "Hi", REQSTUDIO_MCP_CONFIG=str(config))

    assert done.returncode == 0, done.stderr
    assert "[mcp] maps: left out: command not found" in done.stderr
    assert done.stdout == "Hello.\n"


def test_a_missing_mcp_config_is_a_usage_error(llm_server, tmp_path):
    done = run_cli(llm_server, tmp_path, "Hi", "--mcp-config", str(tmp_path / "nope.json"))
    assert done.returncode == 2
    assert "MCP config file not found" in done.stderr


def test_a_rejected_key_is_explained_and_exits_1(llm_server, tmp_path):
    llm_server.script(Reply(fault="401"))
    done = run_cli(llm_server, tmp_path, "Hi", "--no-mcp", "--lang", "en")
    assert done.returncode == 1
    assert "rejected the API key (401)" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
