"""`reqstudio chat "message"` in a real subprocess against the scripted model server: stdout
holds exactly the final answer, once; a failed run keeps what arrived in a file it names."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli_support import QUICK, run_reqstudio
from tests.scripted_server import Reply, ScriptedLLMServer

WHOLE = (
    "一条好的需求应当可测试、无歧义、可追溯，并且只描述一件事；例如：搜索结果在 2 秒内返回。" * 4
)
KEPT = re.compile(r"^reqstudio: what the run produced is kept \(not complete\) in (\S+)$", re.M)


def run_chat(server: ScriptedLLMServer, tmp_path: Path, message: str, **env: str):
    return run_reqstudio(server.base_url, tmp_path, "chat", message, **{**QUICK, **env})


def test_a_retried_answer_reaches_stdout_once_and_whole(llm_server, tmp_path):
    llm_server.script(
        Reply(content=WHOLE, fault="truncated", chunk_chars=7),  # half of it, then the close
        Reply(content=WHOLE[:30], finish_reason="content_filter"),
        Reply(content=WHOLE, chunk_chars=7),
    )
    done = run_chat(llm_server, tmp_path, "什么是好的需求？")
    assert done.returncode == 0, done.stderr
    assert done.stdout == WHOLE + "\n"  # not the broken tries before it
    assert "try 2" in done.stderr and "try 3" in done.stderr
    assert "content filter" in done.stderr
    assert len(llm_server.requests) == 3
    assert not (tmp_path / "data" / "failed-runs").exists()


def test_an_answer_cut_every_time_exits_1_with_nothing_on_stdout_and_keeps_it(llm_server, tmp_path):
    llm_server.script(*[Reply(content=WHOLE, fault="truncated", chunk_chars=7)] * 2)
    done = run_chat(llm_server, tmp_path, "什么是好的需求？", OPENAI_MAX_RETRIES="1")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "broke off before it finished, still after retries" in done.stderr
    assert "partial answer (not complete): 一条好的需求" in done.stderr
    named = KEPT.findall(done.stderr)
    assert len(named) == 1, done.stderr
    record = json.loads(Path(named[0]).read_text(encoding="utf-8"))
    assert Path(named[0]).parent == (tmp_path / "data" / "failed-runs").resolve()
    assert record["complete"] is False and record["mode"] == "chat"
    assert record["question"] == "什么是好的需求？" and record["fault"] == "cut"
    assert 0 < len(record["partial_answer"]) < len(WHOLE)
    assert WHOLE.startswith(record["partial_answer"])
    assert "中断" in record["error_zh"]


def test_an_empty_answer_every_time_exits_1_and_keeps_no_file(llm_server, tmp_path):
    llm_server.script(*[Reply(content="")] * 2)
    done = run_chat(llm_server, tmp_path, "hi", OPENAI_MAX_RETRIES="1")
    assert done.returncode == 1 and done.stdout == ""
    assert "empty answer (no text, no tool call)" in done.stderr
    assert not KEPT.search(done.stderr)  # nothing arrived, nothing to keep
    assert not (tmp_path / "data" / "failed-runs").exists()
