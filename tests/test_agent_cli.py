"""`reqstudio agent "question"` in a real subprocess, against the scripted model server and the
real `mcp-server-time`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_support import ROOT, run_reqstudio
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript

BUNDLED_CONFIG = ROOT / "reqstudio" / "tools" / "mcp.json"


def run_cli(server: ScriptedLLMServer, tmp_path: Path, *args: str, **env: str):
    return run_reqstudio(
        server.base_url, tmp_path, "agent", *args, cwd=ROOT, **{"OPENAI_MAX_RETRIES": "0", **env}
    )


def assert_answered(done, answer: str, *progress: str) -> None:
    """The run ended well with `answer` on stdout, and stderr shows each of `progress`."""
    assert done.returncode == 0, done.stderr
    assert done.stdout == answer + "\n"
    for line in progress:
        assert line in done.stderr


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

    assert_answered(
        done,
        "It is a Saturday in UTC [1].",
        "[mcp] time: 2 tool(s)",
        "[thinking · scripted-model · round 1] I will ask the clock.",
        '→ get_current_time (mcp) {"timezone": "UTC"}',
        '← get_current_time: { "timezone": "UTC"',
        "[answer · scripted-model]",
    )
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

    assert_answered(done, "Hello.", "[mcp] maps: left out: command not found")


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
    assert "is kept" not in done.stderr  # nothing was produced, no file is left behind
    assert not (tmp_path / "data" / "failed-runs").exists()


def test_verbose_shows_the_agents_trace_on_stderr(llm_server, tmp_path):
    llm_server.script(
        Reply(content="Look it up.", tool_calls=[ToolCallScript("web_search", {"query": "EARS"})]),
        Reply(content="Enough."),
        Reply(content="EARS has five patterns [1].", match="Write the final answer now"),
    )

    done = run_cli(
        llm_server, tmp_path, "What is EARS?", "--no-mcp", "--lang", "en",
        AGENT_VERBOSE="true", REQSTUDIO_SEARCH_BACKEND="tests.fake_search:five_results",
    )  # fmt: skip

    assert_answered(
        done,
        "EARS has five patterns [1].",
        "[trace] agent round 1 thought: Look it up.",
        '[trace] agent tool call web_search {"query": "EARS"}',
        "[trace] agent tool result web_search ok=True",
        "[trace] agent answer: EARS has five patterns [1].",
    )

    # (a real answer: the server's default echo would give back the answer prompt, no answer)
    llm_server.script(Reply(content="No tools."), Reply(content="Hello.", match="final answer"))
    quiet = run_cli(llm_server, tmp_path, "Hi", "--no-mcp", "--no-search", AGENT_VERBOSE="false")
    assert quiet.returncode == 0, quiet.stderr
    assert "[trace]" not in quiet.stderr


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AGENT_PRICES", '{"gpt-4o": [0.1, 0.2]'),
        ("AGENT_FUNCTION_CALL_MODEL", '{"model": "m", "api_key": "sk-in-bad-json",}'),
        ("AGENT_ANSWER_MODEL", "not json"),
    ],
)
def test_invalid_json_in_a_setting_is_one_line_naming_it(llm_server, tmp_path, name, value):
    done = run_cli(llm_server, tmp_path, "Hi", "--no-mcp", **{name: value})
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"reqstudio: Invalid setting {name}: not valid JSON (")
    assert "Traceback" not in done.stderr and "sk-in-bad-json" not in done.stderr


def test_an_unsupported_provider_is_refused_in_one_line(llm_server, tmp_path):
    spec = '{"provider": "anthropic", "model": "claude-x", "api_key": "sk-ant-secret"}'
    done = run_cli(llm_server, tmp_path, "Hi", "--no-mcp", AGENT_FUNCTION_CALL_MODEL=spec)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        'reqstudio: Invalid setting AGENT_FUNCTION_CALL_MODEL="anthropic" (field provider): '
        "provider 'anthropic' is not supported (use one of: openai, deepseek)"
    ]
    assert llm_server.requests == []  # nothing was sent over the OpenAI protocol


def test_a_retried_answer_reaches_stdout_once_and_whole(llm_server, tmp_path):
    whole = "ISO/IEC/IEEE 29148 replaced IEEE 830 [1]; it covers requirements processes."
    answer = "Write the final answer now"
    llm_server.script(
        Reply(content="No tools needed."),
        Reply(content=whole, match=answer, fault="truncated", chunk_chars=8),
        Reply(content=whole, match=answer),
    )
    stats_file = tmp_path / "stats.json"

    done = run_cli(
        llm_server, tmp_path, "Q", "--no-mcp", "--no-search", "--stats-json", str(stats_file),
        OPENAI_MAX_RETRIES="1",
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout == whole + "\n"
    assert json.loads(stats_file.read_text())["ok"] is True
    assert "Agent answer model: try 1 of 2 failed" in done.stderr


def test_an_answer_cut_after_the_retries_is_not_ok_and_says_so(llm_server, tmp_path):
    whole = "ISO/IEC/IEEE 29148 replaced IEEE 830 [1]; it covers requirements processes."
    answer = "Write the final answer now"
    llm_server.script(
        Reply(content="No tools needed."),
        *[Reply(content=whole, match=answer, fault="truncated", chunk_chars=8) for _ in range(2)],
    )
    stats_file = tmp_path / "stats.json"

    done = run_cli(
        llm_server, tmp_path, "Q", "--no-mcp", "--no-search", "--stats-json", str(stats_file),
        "--lang", "en", OPENAI_MAX_RETRIES="1",
    )  # fmt: skip

    assert done.returncode == 1
    assert done.stdout == ""  # nothing shorter passed off as the answer
    assert "broke off before it finished, still after retries" in done.stderr
    assert "partial answer (not complete): ISO/IEC" in done.stderr
    assert "[answer] try 2: the broken try is dropped" in done.stderr
    assert json.loads(stats_file.read_text())["ok"] is False
    # what the run produced is kept in a file named in one line
    prefix = "reqstudio: what the run produced is kept (not complete) in "
    named = [line for line in done.stderr.splitlines() if line.startswith(prefix)]
    assert len(named) == 1, done.stderr
    record = json.loads(Path(named[0].removeprefix(prefix)).read_text())
    assert record["mode"] == "agent" and record["complete"] is False
    assert record["question"] == "Q" and whole.startswith(record["partial_answer"])
    assert record["partial_answer"] and "broke off" in record["error"]


def test_an_answer_that_gives_back_the_apps_instructions_is_not_printed(llm_server, tmp_path):
    echoed = (
        "No research results: no tool was needed. Answer from what you know, without citation "
        "numbers. Write the final answer now."
    )
    llm_server.script(
        Reply(content="No tools needed."),
        Reply(content=echoed, match="Write the final answer now"),
    )
    done = run_cli(llm_server, tmp_path, "Q", "--no-mcp", "--no-search", "--lang", "en")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "gave back the app's own instructions" in done.stderr


def test_a_provider_that_echoes_its_last_user_message_never_shows_the_app_s_wording(
    llm_server, tmp_path
):
    """The answer model's last user turn is the user's question, so an echo
    gives the question back, never the research hand-over the app wrote for the model."""
    from reqstudio.modes.agent.checks import instruction_fragments

    llm_server.script(  # research notes the function-call model wrote, then echoes only
        Reply(content="Research notes: IEEE 830 was replaced by ISO/IEC/IEEE 29148."),
    )
    result = run_cli(llm_server, tmp_path, "Which standard replaced IEEE 830?",
                     REQSTUDIO_MCP_CONFIG="off")  # fmt: skip
    answer = result.stdout.strip()
    assert answer == "Echo: Which standard replaced IEEE 830?", result.stderr
    squashed = " ".join(answer.split()).casefold()
    assert not [f for f in instruction_fragments() if f in squashed]
    for said in ("Research results", "Research notes", "Write the final answer now"):
        assert said not in answer
    last = llm_server.requests[-1]["messages"][-1]
    assert last == {"role": "user", "content": "Which standard replaced IEEE 830?"}
