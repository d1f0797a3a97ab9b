"""`reqstudio team "TASK"` in a real subprocess against the scripted model server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from reqstudio.scripted_server import Reply, ScriptedLLMServer
from tests.test_team_run import answer, role, send, spawn, turn

ROOT = Path(__file__).resolve().parent.parent
REQSTUDIO = [sys.executable, "-c", "import sys; from reqstudio.cli import main; sys.exit(main())"]


def run_cli(server: ScriptedLLMServer, tmp_path: Path, *args: str):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "AGENT_", "REQSTUDIO_", "TEAM_"))
    }
    env.update(
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY="sk-test-not-a-real-key",
        OPENAI_MODEL="scripted-model",
        OPENAI_MAX_RETRIES="0",
        REQSTUDIO_DATA_DIR=str(tmp_path / "data"),
    )
    return subprocess.run(
        [*REQSTUDIO, "team", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_events_on_stderr_the_answer_on_stdout_and_the_record_in_a_file(llm_server, tmp_path):
    llm_server.script(
        *turn("root", role("分析师"), spawn("分析师")),
        *turn("agent-1", send("root", "status_report", "FR-1 发布商品", {"status": "done"})),
        answer("SRS 初稿：FR-1 发布商品。"),
    )
    log = tmp_path / "team.json"
    result = run_cli(llm_server, tmp_path, "写 SRS；约束：Python 后端", "--log", str(log))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "SRS 初稿：FR-1 发布商品。"
    assert "[spawn] root → agent-1 (分析师)" in result.stderr
    assert "constraints: 静态网页前端; Python 后端" in result.stderr
    assert "[message] agent-1 → root status_report: FR-1 发布商品" in result.stderr
    assert "[end] answered" in result.stderr
    record = json.loads(log.read_text())
    assert record["task"] == "写 SRS；约束：Python 后端" and record["reason"] == "answered"
    assert any(e["type"] == "message_delivered" for e in record["events"])
    assert "sk-test-not-a-real-key" not in log.read_text() + result.stderr
    # the same record is in the data directory's SQLite database
    assert (tmp_path / "data" / "team.db").exists()


def test_a_limit_ends_the_run_with_exit_code_1_and_says_which(llm_server, tmp_path):
    llm_server.script(Reply(match="你的 ID：root；", content="想想", delay=5))
    result = run_cli(llm_server, tmp_path, "写 SRS", "--time-limit", "1")
    assert result.returncode == 1
    assert "[end] time" in result.stderr
    assert result.stdout == ""


def test_bad_arguments_exit_2_with_one_line(llm_server, tmp_path):
    for args, words in [
        (["写 SRS", "--max-agents", "abc"], "--max-agents must be a number"),
        (["写 SRS", "--max-agents", "1"], "--max-agents must be between 2 and 32"),
        (["  "], "the task is empty"),
        (["写 SRS", "--log", str(tmp_path / "no" / "t.json")], "does not exist"),
    ]:
        result = run_cli(llm_server, tmp_path, *args)
        assert result.returncode == 2, (args, result.stderr)
        assert words in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
