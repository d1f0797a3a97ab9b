"""Every mode's CLI against a provider whose every answer has the same fault.

Each of the six commands (`chat`, `agent`, `srs generate`, `review`, `rewrite`, `team`) runs
in a real process against the scripted server, which answers every request with one fault: a
stream that stops before its finish reason (`cut`), a `length` finish, a `content_filter`
finish, HTTP 500, an empty answer, and for the modes that read JSON, text that is no JSON. None
of these runs may exit 0, and stdout, where a script reads the result, must hold nothing: no
partial answer, no half document.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_support import QUICK, run_reqstudio
from tests.scripted_server import Reply, ScriptedLLMServer

# What a faulty answer carries: text that must never reach stdout.
PARTIAL = "PARTIAL-7f3a 部分回答：系统应当在两秒内响应用户的每一次查询，并且"
# Enough faulty replies for every try of every call a run can make before it gives up.
REPLIES = 80

FAULTS: dict[str, Reply] = {
    "cut": Reply(content=PARTIAL, fault="truncated", chunk_chars=6),  # no finish reason
    "length": Reply(content=PARTIAL, finish_reason="length", chunk_chars=6),
    "content_filter": Reply(content=PARTIAL, finish_reason="content_filter", chunk_chars=6),
    "500": Reply(fault="500"),
    "empty": Reply(content=""),
    "bad_json": Reply(content=PARTIAL + ' {"requirements": [oops', chunk_chars=6),
}
JSON_MODES = {"srs", "review", "rewrite"}
MODES = ("chat", "agent", "srs", "review", "rewrite", "team")

DOCUMENT = """# 宠物医院预约系统

## 1. 引言

本系统让宠物主人在线预约兽医。

## 2. 功能需求

FR-1 主人可以查看空闲时段。
FR-2 主人可以预约、改约和取消。
"""
CLARIFICATIONS = [{"question": "谁使用系统？", "answer": "宠物主人和前台。"}]

# Cells that fail today because of another branch's bug: {(mode, fault): reason}.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}


def command(mode: str, tmp_path: Path) -> list[str]:
    document = tmp_path / "doc.md"
    document.write_text(DOCUMENT, encoding="utf-8")
    clarifications = tmp_path / "clarifications.json"
    clarifications.write_text(json.dumps(CLARIFICATIONS, ensure_ascii=False), encoding="utf-8")
    notes = str(clarifications)
    return {
        "chat": ["chat", "什么是好的需求？"],
        "agent": ["agent", "什么是好的需求？", "--no-mcp", "--no-search"],
        "srs": ["srs", "generate", "--input", str(document), "--max-iterations", "2"],
        "review": ["review", "--doc", str(document), "--max-rounds", "1"],
        "rewrite": ["rewrite", "--original-doc", str(document), "--clarifications", notes],
        "team": ["team", "为宠物医院预约系统写需求", "--time-limit", "60"],
    }[mode]


def run_cli(server: ScriptedLLMServer, tmp_path: Path, args: list[str]):
    # two tries per call: the fault is met again, quickly
    return run_reqstudio(server.base_url, tmp_path, *args, **QUICK, OPENAI_MAX_RETRIES="1")


def cells() -> list:
    params = []
    for mode in MODES:
        for fault in FAULTS:
            if fault == "bad_json" and mode not in JSON_MODES:
                continue
            marks = []
            if (mode, fault) in KNOWN_FAILURES:
                marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[mode, fault]))
            params.append(pytest.param(mode, fault, id=f"{mode}-{fault}", marks=marks))
    return params


@pytest.mark.parametrize(("mode", "fault"), cells())
def test_a_provider_that_always_fails_the_same_way_never_exits_0(llm_server, tmp_path, mode, fault):
    llm_server.script(*[FAULTS[fault]] * REPLIES)
    done = run_cli(llm_server, tmp_path, command(mode, tmp_path))
    assert done.returncode != 0, f"exit 0\nstdout: {done.stdout!r}\nstderr: {done.stderr[-2000:]}"
    assert done.returncode == 1, done.stderr[-2000:]  # a failed run, not a usage error
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert PARTIAL[:12] not in done.stdout  # no partial answer, no half document
    assert done.stdout == "", done.stdout
    assert llm_server.requests, "the run never asked the model"


def test_the_matrix_has_the_issues_33_cells():
    assert len(cells()) == 33
