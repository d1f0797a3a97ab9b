"""`reqstudio review` as a user runs it: a real process talking HTTP to the scripted server,
progress on stderr, the improved document on stdout or in a file, every review as JSON."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli_support import QUICK, run_reqstudio
from tests.review_support import DOCUMENT, author_reply, improvement, panel

NEW_BOOKING = "Owners book a visit with a vet. Free slots are listed within 2 s.\n"


@pytest.fixture
def document(tmp_path) -> Path:
    path = tmp_path / "clinic.md"
    path.write_text(DOCUMENT, encoding="utf-8")
    return path


@pytest.fixture
def run(llm_server, tmp_path):
    def run_command(*args: str) -> subprocess.CompletedProcess:
        return run_reqstudio(llm_server.base_url, tmp_path, "review", *args, **QUICK)

    return run_command


def test_review_prints_the_improved_document_and_progress(run, llm_server, document):
    llm_server.script(
        *panel(improvement("sec-03"), improvement("sec-04", "medium")),
        author_reply("sec-03", NEW_BOOKING),
        *panel(improvement("sec-04", "low")),
    )
    done = run("--doc", document)
    assert done.returncode == 0, done.stderr
    assert done.stdout == DOCUMENT.replace(
        "Owners book a visit with a vet. The search for free slots is fast.\n", NEW_BOOKING
    )
    lines = done.stderr.splitlines()
    assert "INFO: Round 1: 2 issue(s); revise sec-03" in lines
    assert "INFO: Round 2: 1 issue(s); stop (quality_sufficient)" in lines
    assert (
        "INFO: Trajectory: Round 1 found 2 issues → fixed; round 2 found 1 issue "
        "(none high-priority) → done" in lines
    )


def test_review_writes_files_with_a_round_limit(run, llm_server, document, tmp_path):
    llm_server.script(
        *panel(improvement("sec-03"), improvement("sec-04")),
        author_reply("sec-03", NEW_BOOKING),
        author_reply("sec-04", "SMS reminders go out 24 h before.\n"),
    )
    out, reviews = tmp_path / "improved.md", tmp_path / "reviews.json"
    done = run("--doc", document, "--max-rounds", "1", "--out", out, "--json", reviews)
    # Written, but the version returned holds two open high-priority findings: no pass.
    assert done.returncode == 4, done.stderr
    assert done.stdout == ""
    assert out.read_text(encoding="utf-8") == DOCUMENT  # one round: reviewed, not revised
    data = json.loads(reviews.read_text(encoding="utf-8"))
    assert data["stop_reason"] == "max_rounds"
    assert data["outcome"] == "without_pass"
    assert [i["issue_id"] for i in data["open_findings"]] == ["I-1", "I-2"]
    assert (
        "WARNING: The returned version (reviewed in round 1) still has 2 open high-priority "
        "finding(s): I-1 (sec-03), I-2 (sec-04)" in done.stderr.splitlines()
    )
    assert data["rounds"][0]["red_team"]["critical_issues_count"] == 2
    assert data["rounds"][0]["blue_team"]["keep_as_is"] == []
    assert data["rounds"][0]["judge"]["prioritized_improvements"][0]["agent_id"] == "sec-03"
    assert data["improvement_trajectory"]["round_1"]["status"] == "max_rounds"
    assert llm_server.pending == 2  # the authors were never asked


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--doc", "missing.md"], "reqstudio: --doc: missing.md: the file was not found."),
        (["--doc", "{doc}", "--max-rounds", "0"], "reqstudio: --max-rounds: 0 is not between 1 and 10"),
        (["--doc", "{doc}", "--out", "no/such/dir/x.md"], "reqstudio: --out: the folder no/such/dir does not exist"),
        (["--doc", "{doc}", "--json", "."], "reqstudio: --json: . is a folder, not a file"),
    ],
)  # fmt: skip
def test_bad_arguments_exit_2_with_one_line_before_any_model_call(
    run, llm_server, document, args, message
):
    done = run(*[a.replace("{doc}", str(document)) for a in args])
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[0].startswith(message)
    assert len(done.stderr.strip().splitlines()) == 1
    assert llm_server.requests == []
