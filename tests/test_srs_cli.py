"""`reqstudio srs ...` as a user runs it: a real process talking HTTP to the scripted server."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reqstudio.cli import main
from reqstudio.scripted_server import Reply
from tests.test_srs_support import (
    E_STORE,
    EVALUATE,
    PARSE,
    SRS_TEXT,
    clarify_reply,
    doc_reply,
    explore_reply,
    parse_reply,
)

REQSTUDIO = Path(sys.executable).with_name("reqstudio")
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
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REQSTUDIO_"))}
    env.update(
        OPENAI_BASE_URL=llm_server.base_url,
        OPENAI_API_KEY="sk-test-not-a-real-key",
        OPENAI_MODEL="scripted-model",
        OPENAI_TIMEOUT="10",
        REQSTUDIO_DATA_DIR=str(tmp_path / "data"),
        PYTHONIOENCODING="utf-8",
    )

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(REQSTUDIO), "srs", *args],
            cwd=tmp_path,  # no stray .env is read
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
        )

    return run


def script_one_round(server) -> None:
    server.script(
        parse_reply(("FR-01", "Place an order."), ("FR-02", "Track a shipment.")),
        explore_reply(("FR-01", "Place an order."), ("FR-02", "Track a shipment online.")),
        clarify_reply(FR_01=2, FR_02=-2),
        doc_reply(),
    )


def test_generate_writes_the_srs_and_the_log(run_cli, llm_server, tmp_path):
    script_one_round(llm_server)
    out, log = tmp_path / "srs.md", tmp_path / "log.json"
    done = run_cli(
        "generate",
        "--input", str(E_STORE / "input.md"),
        "--reference", str(E_STORE / "reference.md"),
        "--max-iterations", "1",
        "--out", str(out),
        "--log", str(log),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert out.read_text(encoding="utf-8") == SRS_TEXT
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
        parse_reply(("FR-01", "Place an order.")),
        explore_reply(("FR-01", "Place an order.")),
        doc_reply(),
    )
    done = run_cli("generate", "--input", str(E_STORE / "input.md"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == SRS_TEXT
    assert "no-clarify" in done.stderr
    assert len(llm_server.requests) == 3


def test_generate_reports_a_failure_with_exit_1(run_cli, llm_server):
    llm_server.script(Reply(fault="401", match=PARSE))
    done = run_cli("generate", "--input", str(E_STORE / "input.md"), "--ablation", "no-clarify")
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
        "input": str(E_STORE / "input.md"),
        "missing": str(tmp_path / "missing.md"),
        "missing_dir": str(tmp_path / "nowhere"),
        "empty_dir": str(tmp_path / "empty"),
        "cases": str(E_STORE.parent),
        "binary": str(E_STORE.parent / "uploads" / "binary.txt"),
    }
    assert main(["srs", *(a.format(**values) for a in args)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_evaluate_prints_the_json(run_cli, llm_server, tmp_path):
    candidate = tmp_path / "candidate.md"
    candidate.write_text(SRS_TEXT, encoding="utf-8")
    llm_server.script(Reply(content=json.dumps(EVALUATION), match=EVALUATE))
    done = run_cli(
        "evaluate", "--reference", str(E_STORE / "reference.md"), "--candidate", str(candidate)
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
    shutil.copytree(E_STORE, cases / "e-store")
    (cases / "broken").mkdir()
    (cases / "broken" / "input.md").write_text("BROKEN-CASE: a shop.", encoding="utf-8")
    (cases / "broken" / "reference.md").write_text("# Ref\nA shop.", encoding="utf-8")
    (cases / "notes").mkdir()  # not a case: no input.md
    llm_server.script(
        # the broken case fails at once (401 is not retried); the e-store case succeeds
        Reply(fault="401", match="BROKEN-CASE"),
        Reply(fault="401", match="BROKEN-CASE"),
        parse_reply(("FR-01", "Place an order.")),
        parse_reply(("FR-01", "Place an order.")),
        explore_reply(("FR-01", "Place an order online.")),
        doc_reply(),
        doc_reply(),
        Reply(content=json.dumps(EVALUATION), match=EVALUATE),
        Reply(content="```json\n" + json.dumps(EVALUATION) + "\n```", match=EVALUATE),
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
    assert (tmp_path / "results" / "runs_srs" / "e-store__no-clarify.md").read_text() == SRS_TEXT
    table = done.stdout.strip().splitlines()
    assert table[0].startswith("| ablation | runs | ok | seconds |")
    assert table[2].startswith("| no-explore-clarify | 2 | 1 |")
    assert table[3].startswith("| no-clarify | 2 | 1 |")
    assert "SRS runs" in done.stderr  # the progress bar
    assert llm_server.pending == 0
