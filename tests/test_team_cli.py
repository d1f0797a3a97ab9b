"""`reqstudio team "TASK"` in a real subprocess against the scripted model server."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest

from tests.cli_support import REQSTUDIO, ROOT, cli_env, ctrl_c, run_reqstudio
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.test_team_run import answer, role, send, spawn, turn


def run_cli(server: ScriptedLLMServer, tmp_path: Path, *args: str):
    return run_reqstudio(server.base_url, tmp_path, "team", *args, cwd=ROOT, OPENAI_MAX_RETRIES="0")


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


def test_a_limit_ends_the_run_with_exit_code_4_and_says_which(llm_server, tmp_path):
    llm_server.script(Reply(match="你的 ID：root；", content="想想", delay=5))
    result = run_cli(llm_server, tmp_path, "写 SRS", "--time-limit", "1")
    assert result.returncode == 4  # finished without a pass, as the browser's ⚠️
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


# --- what the user sees, and how every run ends -----------------------------------


def test_two_refused_answers_then_one_delivered_print_that_answer_once_and_exit_0(
    llm_server, tmp_path
):
    llm_server.script(
        Reply(match="你的 ID：root；", chunk_delay=0.001, tool_calls=[
            send("users", "status_report", "错误答复甲", {"status": "done"})]),
        Reply(match="你的 ID：root；", chunk_delay=0.001, tool_calls=[
            send("user", "status_report", "错误答复乙", {"status": "finished"})]),
        Reply(match="你的 ID：root；", chunk_delay=0.001, tool_calls=[
            send("user", "status_report", "最终答复：FR-1 登录。", {"status": "done"})] * 3),
    )  # fmt: skip
    result = run_cli(llm_server, tmp_path, "写登录需求")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "最终答复：FR-1 登录。\n"
    assert "[refused] root send_message: unknown_contact" in result.stderr
    assert "[refused] root send_message: invalid_payload" in result.stderr


def test_a_childs_failure_is_one_line_without_a_traceback(llm_server, tmp_path):
    llm_server.script(
        *turn("root", role("分析师"), spawn("分析师")),
        Reply(match="你的 ID：agent-1；", fault="401"),
        answer("分析师失败，需求未完成。"),
    )
    result = run_cli(llm_server, tmp_path, "写 SRS")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    failed = [line for line in lines if line.startswith("[failed]")]
    assert failed == [
        "[failed] agent-1: The model provider rejected the API key (401). "
        "Check OPENAI_API_KEY and OPENAI_BASE_URL."
    ]
    # root heard of it in one message, and no other line speaks of it
    about = [line for line in lines if "401" in line and not line.startswith("[failed]")]
    assert len(about) == 1 and about[0].startswith("[message] agent-1 → root status_report")
    assert result.stdout == "分析师失败，需求未完成。\n"


@pytest.mark.parametrize(
    ("reply", "reason", "code"),
    [
        (Reply(match="你的 ID：root；", content="想想", delay=5), "time", 4),
        (Reply(match="你的 ID：root；", fault="401"), "failed", 1),
        (Reply(match="你的 ID：root；", content="我不答复用户。"), "idle", 4),
    ],
)
def test_every_ending_prints_one_end_line_and_writes_the_log(
    llm_server, tmp_path, reply, reason, code
):
    llm_server.script(reply)
    log = tmp_path / "team.json"
    result = run_cli(llm_server, tmp_path, "写 SRS", "--time-limit", "1", "--log", str(log))
    assert result.returncode == code, result.stderr
    ends = [line for line in result.stderr.splitlines() if line.startswith("[end] ")]
    assert len(ends) == 1 and ends[0].startswith(f"[end] {reason}: ")
    assert "Traceback" not in result.stderr
    record = json.loads(log.read_text())
    assert record["reason"] == reason and record["events"][-1]["type"] == "run_finished"
    assert result.stdout == ""


def test_ctrl_c_stops_the_team_writes_the_log_and_exits_130(llm_server, tmp_path):
    llm_server.script(Reply(match="你的 ID：root；", content="想很久", delay=30))
    log = tmp_path / "team.json"
    process = subprocess.Popen(
        [*REQSTUDIO, "team", "写 SRS", "--log", str(log)],
        cwd=ROOT,
        env=cli_env(llm_server.base_url, tmp_path, OPENAI_MAX_RETRIES="0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watchdog = threading.Timer(60, process.kill)
    watchdog.start()
    try:
        seen = []
        for line in process.stderr:  # the run has started once root's turn has
            seen.append(line)
            if line.startswith("[spawn] root"):
                break
        assert seen and seen[-1].startswith("[spawn] root"), seen
        ctrl_c(process)
        stdout, rest = process.communicate(timeout=60)
    finally:
        watchdog.cancel()
    stderr = "".join(seen) + rest
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and stdout == ""
    ends = [line for line in stderr.splitlines() if line.startswith("[end] ")]
    assert len(ends) == 1 and ends[0].startswith("[end] stopped: ")
    record = json.loads(log.read_text())
    assert record["reason"] == "stopped" and record["events"][-1]["type"] == "run_finished"
    assert f"[record] {log}" in stderr
