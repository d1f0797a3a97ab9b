"""`reqstudio srs ...` as a user runs it: a real process talking HTTP to the scripted server."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from reqstudio.cli import main
from tests import test_srs_support as srs
from tests.cli_support import run_reqstudio
from tests.scripted_server import Reply
from tests.test_srs_support import (
    SRS_TEXT,
    without_matrix,
)

EVALUATION = {
    "metrics": {
        "coverage": 0.5,
        "completeness": 0.5,
        "consistency": 1.0,
        "testability": 0.5,
        "clarity": 0.5,
        "traceability": 0.5,
        "scope_discipline": 1.0,
        "by_category": {"functional": 0.5, "non_functional": 0.5, "constraints": 0.5},
    }
}


@pytest.fixture
def run_cli(llm_server, tmp_path):
    def run(*args: str, **extra_env: str) -> subprocess.CompletedProcess:
        return run_reqstudio(
            llm_server.base_url, tmp_path, "srs", *args, **{"OPENAI_TIMEOUT": "10", **extra_env}
        )

    return run


def script_one_round(server) -> None:
    server.script(
        srs.parse_reply(("FR-01", "Place an order."), ("FR-02", "Track a shipment.")),
        srs.explore_reply(("FR-01", "Place an order."), ("FR-02", "Track a shipment online.")),
        srs.clarify_reply(FR_01=2, FR_02=-2),
        srs.doc_reply(),
    )


def test_generate_writes_the_srs_and_the_log(run_cli, llm_server, tmp_path):
    script_one_round(llm_server)
    out, log = tmp_path / "srs.md", tmp_path / "log.json"
    done = run_cli(
        "generate",
        "--input", str(srs.E_STORE / "input.md"),
        "--reference", str(srs.E_STORE / "reference.md"),
        "--max-iterations", "1",
        "--out", str(out),
        "--log", str(log),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert without_matrix(out.read_text(encoding="utf-8")) == SRS_TEXT
    assert (tmp_path / "srs-trace.csv").read_text(encoding="utf-8").startswith("id,requirement,")
    data = json.loads(log.read_text(encoding="utf-8"))
    assert [e["agent"] for e in data["logs"]] == [
        "ReqParse",
        "ReqExplore",
        "ReqClarify",
        "DocGenerate",
    ]
    assert data["removed_ids"] == ["FR-02"] and data["frozen_ids"] == ["FR-01"]
    assert data["usage"]["calls"] == 4 and data["completed"] is True
    assert "Marvel Electronics" in data["logs"][0]["input_messages"][0]["content"]
    assert "[ReqClarify] round 1" in done.stderr and "removed now FR-02" in done.stderr
    assert "done: 1 requirements" in done.stderr


def test_generate_prints_the_srs_without_out_and_notes_the_missing_reference(run_cli, llm_server):
    llm_server.script(
        srs.parse_reply(("FR-01", "Place an order.")),
        srs.explore_reply(("FR-01", "Place an order.")),
        srs.doc_reply(),
    )
    done = run_cli("generate", "--input", str(srs.E_STORE / "input.md"))
    assert done.returncode == 0, done.stderr
    assert without_matrix(done.stdout) == SRS_TEXT
    assert "no-clarify" in done.stderr
    assert len(llm_server.requests) == 3


def test_generate_reports_a_failure_with_exit_1(run_cli, llm_server):
    llm_server.script(Reply(fault="401", match=srs.PARSE))
    done = run_cli("generate", "--input", str(srs.E_STORE / "input.md"), "--ablation", "no-clarify")
    assert done.returncode == 1
    assert "ReqParse failed" in done.stderr and "401" in done.stderr
    assert done.stdout == ""


def test_generate_missing_input_exits_2_with_one_line(run_cli, tmp_path):
    done = run_cli("generate", "--input", str(tmp_path / "missing.md"))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "missing.md" in done.stderr and "not found" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["generate", "--input", "{input}", "--max-iterations", "0"], "between 1 and 20"),
        (["generate", "--input", "{input}", "--reference", "{missing}"], "--reference"),
        (["generate", "--input", "{input}", "--out", "{missing_dir}/x.md"], "does not exist"),
        (["evaluate", "--reference", "{input}", "--candidate", "{missing}"], "--candidate"),
        (["experiment", "--cases", "{missing}"], "no such folder"),
        (["experiment", "--cases", "{empty_dir}"], "no folder with input.md"),
        (["experiment", "--cases", "{cases}", "--concurrency", "0"], "at least 1"),
        (["generate", "--input", "{binary}"], "not text"),
    ],
)
def test_bad_arguments_exit_2(args, message, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    values = {
        "input": str(srs.E_STORE / "input.md"),
        "missing": str(tmp_path / "missing.md"),
        "missing_dir": str(tmp_path / "nowhere"),
        "empty_dir": str(tmp_path / "empty"),
        "cases": str(srs.E_STORE.parent),
        "binary": str(srs.E_STORE.parent / "uploads" / "binary.txt"),
    }
    assert main(["srs", *(a.format(**values) for a in args)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_evaluate_prints_the_json(run_cli, llm_server, tmp_path):
    candidate = tmp_path / "candidate.md"
    candidate.write_text(srs.SRS_TEXT, encoding="utf-8")
    llm_server.script(Reply(content=json.dumps(EVALUATION), match=srs.EVALUATE))
    done = run_cli(
        "evaluate", "--reference", str(srs.E_STORE / "reference.md"), "--candidate", str(candidate)
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["metrics"]["coverage"] == 0.5
    assert result["Comprehensive_Score_Simple"] == pytest.approx(4.5 / 7, abs=1e-4)
    assert result["parse_method"] == "direct"


def test_experiment_runs_every_case_and_ablation_and_survives_a_failure(
    run_cli, llm_server, tmp_path
):
    cases = tmp_path / "cases"
    shutil.copytree(srs.E_STORE, cases / "e-store")
    (cases / "broken").mkdir()
    (cases / "broken" / "input.md").write_text("BROKEN-CASE: a shop.", encoding="utf-8")
    (cases / "broken" / "reference.md").write_text("# Ref\nA shop.", encoding="utf-8")
    (cases / "notes").mkdir()  # not a case: no input.md
    llm_server.script(
        # the broken case fails at once (401 is not retried); the e-store case succeeds
        Reply(fault="401", match="BROKEN-CASE"),
        Reply(fault="401", match="BROKEN-CASE"),
        srs.parse_reply(("FR-01", "Place an order.")),
        srs.parse_reply(("FR-01", "Place an order.")),
        srs.explore_reply(("FR-01", "Place an order online.")),
        srs.doc_reply(),
        srs.doc_reply(),
        Reply(content=json.dumps(EVALUATION), match=srs.EVALUATE),
        Reply(content="```json\n" + json.dumps(EVALUATION) + "\n```", match=srs.EVALUATE),
    )
    out = tmp_path / "results" / "runs.csv"
    out.parent.mkdir()
    done = run_cli(
        "experiment",
        "--cases", str(cases),
        "--ablations", "no-explore-clarify", "no-clarify",
        "--concurrency", "2",
        "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # one case failed
    with out.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted((r["case"], r["ablation"], r["status"]) for r in rows) == [
        ("broken", "no-clarify", "failed"),
        ("broken", "no-explore-clarify", "failed"),
        ("e-store", "no-clarify", "ok"),
        ("e-store", "no-explore-clarify", "ok"),
    ]
    for row in rows:
        if row["status"] == "ok":
            assert float(row["coverage"]) == 0.5
            assert float(row["Comprehensive_Score_Weighted"]) > 0
            assert int(row["llm_calls"]) in (2, 3) and int(row["tokens"]) > 0
        else:
            assert "401" in row["error"]
    assert (
        tmp_path / "results" / "runs_srs" / "e-store__no-clarify.md"
    ).read_text() == srs.SRS_TEXT
    table = done.stdout.strip().splitlines()
    assert table[0].startswith("| ablation | runs | ok | seconds |")
    assert table[2].startswith("| no-explore-clarify | 2 | 1 |")
    assert table[3].startswith("| no-clarify | 2 | 1 |")
    assert "SRS runs" in done.stderr  # the progress bar
    assert llm_server.pending == 0


SEED_TRAIL_ZH = [
    "[日志] ReqParse：开始解析用户输入",
    "[日志] ReqParse：解析完成，共 2 条需求",
    "[日志] ReqExplore：第 1 轮，根据评分强化挖掘与优化（仅处理未冻结且未移除项）",
    "[日志] ReqExplore：强化挖掘完成，共 2 条；冻结 0 条；已移除 0 条",
    "[日志] ReqClarify：第 1 轮，对需求逐条评分（排除冻结项）",
    "[日志] ReqClarify：标记移除 1 项（-2），累计移除 1 项",
    "[日志] ReqClarify：本轮最高正向分 = 2，新增冻结 1 项；累计冻结 1 项",
    "[日志] ReqClarify：评分记录完成（仅未冻结项）",
    "====== 实时 Markdown SRS 输出（流式） ======",
    "====== 流式输出结束 ======",
    "[日志] DocGenerate：流式输出完成",
]


def generate_one_round(run_cli, tmp_path, *extra: str, **env: str):
    return run_cli(
        "generate",
        "--input", str(srs.E_STORE / "input.md"),
        "--reference", str(srs.E_STORE / "reference.md"),
        "--max-iterations", "2",
        "--out", str(tmp_path / "srs.md"),
        *extra,
        **env,
    )  # fmt: skip


def test_generate_prints_every_line_of_the_seeds_trail_in_chinese(run_cli, llm_server, tmp_path):
    script_one_round(llm_server)
    done = generate_one_round(run_cli, tmp_path, LC_ALL="", LC_MESSAGES="", LANG="zh_CN.UTF-8")
    assert done.returncode == 0, done.stderr
    trail = [line for line in done.stderr.splitlines() if line.startswith(("[日志]", "======"))]
    assert trail == SEED_TRAIL_ZH


def test_generate_prints_the_trail_in_english_for_an_english_user(run_cli, llm_server, tmp_path):
    script_one_round(llm_server)
    done = generate_one_round(run_cli, tmp_path, LC_ALL="en_US.UTF-8")
    assert done.returncode == 0, done.stderr
    assert "[log] ReqClarify: scores recorded (unfrozen items only)" in done.stderr
    assert "====== End of streamed output ======" in done.stderr
    assert "[日志]" not in done.stderr


def test_generate_quiet_prints_nothing_on_success(run_cli, llm_server, tmp_path):
    script_one_round(llm_server)
    done = generate_one_round(run_cli, tmp_path, "--quiet", "--lang", "zh")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert without_matrix((tmp_path / "srs.md").read_text(encoding="utf-8")) == SRS_TEXT


def test_generate_names_each_retry_on_stderr(run_cli, llm_server, tmp_path):
    llm_server.script(Reply(fault="500", match=srs.PARSE))
    script_one_round(llm_server)
    done = generate_one_round(run_cli, tmp_path, REQSTUDIO_RETRY_BACKOFF_SCALE="0.01")
    assert done.returncode == 0, done.stderr
    assert re.search(r"ReqParse: try 1 of 3 failed \(\w+ 500\); trying again", done.stderr)


def test_generate_out_a_folder_exits_2_before_any_model_call(run_cli, llm_server, tmp_path):
    script_one_round(llm_server)
    folder = tmp_path / "out"
    folder.mkdir()
    done = run_cli("generate", "--input", str(srs.E_STORE / "input.md"), "--out", str(folder))
    assert done.returncode == 2
    assert "is a folder" in done.stderr and done.stderr.count("\n") == 1
    assert llm_server.requests == []


async def test_generate_saves_the_srs_elsewhere_when_the_out_file_cannot_be_written(
    llm_server, factory, tmp_path, capsys
):
    from reqstudio.modes.srs.cli import _generate
    from reqstudio.modes.srs.engine import SrsRequest

    llm_server.script(srs.parse_reply(("FR-01", "Place an order.")), srs.doc_reply())
    gone = tmp_path / "removed-during-the-run" / "srs.md"  # its folder vanished meanwhile
    request = SrsRequest(user_input="A shop.", ablation="no-explore-clarify")
    code = await _generate(factory, request, gone, None, fallback_dir=tmp_path / "data")
    assert code == 1
    err = capsys.readouterr().err
    saved = next((tmp_path / "data").glob("srs-*.md"))
    assert without_matrix(saved.read_text(encoding="utf-8")) == SRS_TEXT
    assert f"could not write {gone}" in err and f"the SRS is saved in {saved}" in err


# --- a failed run keeps what it produced ----------------------------------

KEPT_PREFIX = "reqstudio: what the run produced is kept (not complete) in "
LONG_DOC = srs.SRS_TEXT + "\n## 2. Overall description\n\n" + "Customers browse and buy. " * 30


def kept_files(stderr: str) -> list[Path]:
    lines = [line for line in stderr.splitlines() if line.startswith(KEPT_PREFIX)]
    assert len(lines) == 1, stderr
    return [Path(p) for p in lines[0].removeprefix(KEPT_PREFIX).split(", ")]


def script_until_docgenerate_breaks(server) -> None:
    server.script(
        srs.parse_reply(("FR-01", "Place an order."), ("FR-02", "Track a shipment.")),
        srs.explore_reply(("FR-01", "Place an order."), ("FR-02", "Track a shipment online.")),
        srs.clarify_reply(FR_01=0, FR_02=0),
        *[srs.doc_reply(LONG_DOC, fault="truncated") for _ in range(2)],
    )


def test_a_failed_run_without_log_keeps_the_log_and_the_partial_document(
    run_cli, llm_server, tmp_path
):
    script_until_docgenerate_breaks(llm_server)
    done = run_cli(
        "generate", "--input", str(srs.E_STORE / "input.md"), "--reference",
        str(srs.E_STORE / "reference.md"), "--max-iterations", "2", "--lang", "en",
        OPENAI_MAX_RETRIES="1",
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stdout == ""
    assert "DocGenerate failed: The model's answer broke off" in done.stderr
    record_path, document_path = kept_files(done.stderr)
    assert record_path.parent == (tmp_path / "data" / "failed-runs").resolve()
    record = json.loads(record_path.read_text(encoding="utf-8"))
    assert record["mode"] == "srs" and record["complete"] is False
    assert record["agent"] == "DocGenerate" and "中断" in record["error_zh"]
    assert [r["id"] for r in record["log"]["requirements"]] == ["FR-01", "FR-02"]
    assert [e["agent"] for e in record["log"]["logs"]] == ["ReqParse", "ReqExplore", "ReqClarify"]
    assert document_path.name.endswith(".partial.md")
    partial = document_path.read_text(encoding="utf-8")
    assert partial and LONG_DOC.startswith(partial) and len(partial) < len(LONG_DOC)


def test_a_failed_run_with_log_writes_it_there_and_keeps_only_the_partial_document(
    run_cli, llm_server, tmp_path
):
    script_until_docgenerate_breaks(llm_server)
    log = tmp_path / "srs-log.json"
    done = run_cli(
        "generate", "--input", str(srs.E_STORE / "input.md"), "--reference",
        str(srs.E_STORE / "reference.md"), "--max-iterations", "2", "--log", str(log),
        OPENAI_MAX_RETRIES="1",
    )  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert len(json.loads(log.read_text(encoding="utf-8"))["logs"]) == 3
    record_path, document_path = kept_files(done.stderr)
    assert "log" not in json.loads(record_path.read_text(encoding="utf-8"))
    assert LONG_DOC.startswith(document_path.read_text(encoding="utf-8"))


def test_a_run_failing_before_anything_was_produced_keeps_no_file(run_cli, llm_server, tmp_path):
    llm_server.script(*[Reply(fault="500", match=srs.PARSE) for _ in range(2)])
    done = run_cli("generate", "--input", str(srs.E_STORE / "input.md"), OPENAI_MAX_RETRIES="1")
    assert done.returncode == 1 and done.stdout == ""
    assert KEPT_PREFIX not in done.stderr
    assert not (tmp_path / "data" / "failed-runs").exists()


def test_a_list_cut_at_the_length_limit_every_time_is_named_not_called_unparseable(
    run_cli, llm_server
):
    llm_server.script(
        *[Reply(content='```json\n[{"id": "FR-01", "con', finish_reason="length", match=srs.PARSE)]
        * 2
    )
    done = run_cli(
        "generate", "--input", str(srs.E_STORE / "input.md"), "--lang", "en", OPENAI_MAX_RETRIES="1"
    )
    assert done.returncode == 1 and done.stdout == ""
    assert "ReqParse failed" in done.stderr
    assert "finish_reason: length" in done.stderr
    assert "unparseable" not in done.stderr


def test_evaluate_refuses_a_reference_larger_than_the_models_context(run_cli, llm_server, tmp_path):
    reference = tmp_path / "reference.md"
    reference.write_text("# 参考 SRS\n" + "系统应当在两秒内返回搜索结果。" * 200, encoding="utf-8")
    candidate = tmp_path / "candidate.md"
    candidate.write_text(srs.SRS_TEXT, encoding="utf-8")
    done = run_cli(
        "evaluate", "--reference", str(reference), "--candidate", str(candidate),
        OPENAI_CONTEXT_TOKENS="2000",
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "more than the evaluation model's context of 2000 tokens" in lines[0]
    assert "reference ~3" in lines[0] and "it was not sent" in lines[0]
    assert llm_server.requests == []  # refused before any call
