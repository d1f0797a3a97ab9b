"""Exit codes equal verdicts: a run the browser marks ⚠️ ("finished
without a pass") exits 4, written where asked, its JSON saying which stop; only a pass exits 0.
Each test runs the command in a real process against the scripted server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import review_support as review
from tests.cli_support import QUICK, REQSTUDIO, cli_env, run_reqstudio
from tests.rewrite_support import (
    fill_replies,
    outline_reply,
    placement_reply,
    review_reply,
    write_inputs,
)
from tests.scripted_server import Reply

PLACEMENT = "SECTION IDS NEEDED"  # Review's question about findings naming no section
NEW_BOOKING = "Owners book a visit with a vet. Free slots are listed within 2 s.\n"


@pytest.fixture
def document(tmp_path) -> Path:
    path = tmp_path / "clinic.md"
    path.write_text(review.DOCUMENT, encoding="utf-8")
    return path


def run(server, tmp_path: Path, *args: object, **env: str) -> subprocess.CompletedProcess:
    return run_reqstudio(server.base_url, tmp_path, *args, **QUICK, **env)


# --- review ---------------------------------------------------------------------------------


def test_high_priority_findings_naming_no_section_exit_4(llm_server, tmp_path, document):
    appendix = review.improvement("Appendix Z", "high", "no refund rule", "state the refund rule")
    llm_server.script(
        review.red_reply(appendix),
        Reply(content=review.fenced({"placements": []}), match=PLACEMENT),
        review.blue_reply(),
        review.client_reply(),
        review.judge_low(),
    )
    reviews = tmp_path / "reviews.json"
    done = run(llm_server, tmp_path, "review", "--doc", document, "--json", reviews)
    assert done.returncode == 4, done.stderr
    assert done.stdout == review.DOCUMENT  # the result is written all the same
    data = json.loads(reviews.read_text(encoding="utf-8"))
    assert data["stop_reason"] == "unplaced_issues" and data["outcome"] == "without_pass"
    assert "finding(s): I-1 (document-wide)" in done.stderr


def test_only_persisting_high_priority_findings_exit_4(llm_server, tmp_path, document):
    speed = review.improvement("sec-03", "high", "the search for free slots has no time limit")
    llm_server.script(
        *review.panel(speed),
        review.author_reply("sec-03", NEW_BOOKING),
        *review.panel({**speed, "issue_id": "I-1"}),  # raised again: persisting
    )
    reviews = tmp_path / "reviews.json"
    done = run(llm_server, tmp_path, "review", "--doc", document, "--json", reviews)
    assert done.returncode == 4, done.stderr
    data = json.loads(reviews.read_text(encoding="utf-8"))
    assert data["stop_reason"] == "no_new_high_priority"
    assert [i["issue_id"] for i in data["open_findings"]] == ["I-1"]


def test_a_reviewer_that_failed_in_a_round_that_passed_by_rule_exits_4(
    llm_server, tmp_path, document
):
    llm_server.script(
        review.red_reply(review.improvement("sec-03", "low")),
        review.blue_reply(),
        *[Reply(fault="500", match=review.CLIENT)] * 3,
        review.judge_low(),
    )
    reviews = tmp_path / "reviews.json"
    done = run(llm_server, tmp_path, "review", "--doc", document, "--json", reviews)
    assert done.returncode == 4, done.stderr
    assert "WARNING: Not every reviewer could review: round 1 client: " in done.stderr
    data = json.loads(reviews.read_text(encoding="utf-8"))
    assert data["stop_reason"] == "quality_sufficient"  # the rule held, the panel did not
    assert data["outcome"] == "without_pass"


# --- rewrite --------------------------------------------------------------------------------


@pytest.fixture
def inputs(tmp_path) -> tuple[Path, Path]:
    return write_inputs(tmp_path)


def rewrite(server, tmp_path: Path, inputs, *args: object, **extra: str):
    env = cli_env(server.base_url, tmp_path, **QUICK, **extra)
    for name in [k for k in env if k.startswith(("LC_", "LANG"))]:
        del env[name]
    return run_reqstudio(
        server.base_url, tmp_path, "--original-doc", inputs[0], "--clarifications", inputs[1],
        *args, env=env, command=[*REQSTUDIO, "rewrite"],
    )  # fmt: skip


def test_a_panel_whose_red_team_failed_exits_4_and_is_not_complete(llm_server, tmp_path, inputs):
    llm_server.script(
        outline_reply(),
        *fill_replies(),
        *[Reply(fault="500", match=review.RED)] * 3,
        review.blue_reply(),
        review.client_reply(),
        review.judge_low(),
    )
    md, js = tmp_path / "new.md", tmp_path / "new.json"
    done = rewrite(
        llm_server, tmp_path, inputs, "--output-md", md, "--output-json", js,
        REWRITE_REVIEWER="panel",
    )  # fmt: skip
    assert done.returncode == 4, done.stderr
    assert md.exists()  # the document is whole: written where asked
    data = json.loads(js.read_text(encoding="utf-8"))
    assert data["complete"] is False and data["stop_reason"] == "reviewer_failed"
    assert data["review_rounds"][0]["failed_reviewers"][0]["reviewer"] == "red_team"
    assert "WARNING: review round 1: red_team could not review: " in done.stderr
    assert "0 issue(s) found" in done.stderr and "No issues" not in done.stderr


def test_review_issues_no_section_fits_exit_4(llm_server, tmp_path, inputs):
    llm_server.script(
        outline_reply(),
        *fill_replies(),
        review_reply(("Appendix Z", "No refund rule for cancelled visits.")),
        placement_reply(),
    )
    js = tmp_path / "new.json"
    done = rewrite(llm_server, tmp_path, inputs, "--output-json", js)
    assert done.returncode == 4, done.stderr
    data = json.loads(js.read_text(encoding="utf-8"))
    assert data["stop_reason"] == "unplaced_issues" and data["complete"] is True
    assert (
        "WARNING: review round 1: this issue names no section and was not patched: "
        "“Appendix Z”: No refund rule for cancelled visits." in done.stderr
    )


def test_python_m_agents_rewrite_exits_the_same(llm_server, tmp_path, inputs):
    llm_server.script(
        outline_reply(),
        *fill_replies(),
        review_reply(("Appendix Z", "No refund rule for cancelled visits.")),
        placement_reply(),
    )
    env = cli_env(llm_server.base_url, tmp_path, **QUICK)
    done = run_reqstudio(
        llm_server.base_url, tmp_path, "--original-doc", inputs[0], "--clarifications",
        inputs[1], env=env, command=[sys.executable, "-m", "reqstudio.modes.rewrite"],
    )  # fmt: skip
    assert done.returncode == 4, done.stderr
