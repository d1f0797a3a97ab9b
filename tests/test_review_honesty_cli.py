# ruff: noqa: F811 - the fixtures `run` and `document` come from test_review_cli
"""`reqstudio review` when the review did not fully happen: a failed red team is
written out but exits 4, finished without a pass; a rejected revision is reported and the run
still ends by its rule."""

from __future__ import annotations

import json

from tests import review_support as review
from tests.scripted_server import Reply
from tests.test_review_cli import document, run  # noqa: F401

LOW_JUDGE = Reply(
    content=review.fenced(
        {
            "prioritized_improvements": [
                {"priority": 3, "agent_id": "sec-03", "task": "polish", "rationale": "x"}
            ],
            "consensus_issues": [],
            "conflicting_views": [],
            "score": 70,
        }
    ),
    match=review.JUDGE,
)


def test_a_failed_red_team_is_written_out_but_exits_4(run, llm_server, document, tmp_path):
    llm_server.script(
        *[Reply(fault="500", match=review.RED)] * 3,
        review.blue_reply(),
        review.client_reply(),
        LOW_JUDGE,
    )
    out, reviews = tmp_path / "improved.md", tmp_path / "reviews.json"
    done = run("--doc", document, "--out", out, "--json", reviews)
    assert done.returncode == 4, done.stderr  # finished without a pass, as the browser's ⚠️
    assert "INFO: Round 1: 1 issue(s); stop (reviewer_failed: red_team: " in done.stderr
    assert "ERROR: The review stopped without a verdict: red_team: " in done.stderr
    assert "WARNING: Not every reviewer could review: round 1 red_team: " in done.stderr
    assert "quality_sufficient" not in done.stderr
    assert out.read_text(encoding="utf-8") == review.DOCUMENT
    data = json.loads(reviews.read_text(encoding="utf-8"))
    assert data["stop_reason"] == "reviewer_failed"
    assert data["outcome"] == "without_pass"
    assert data["stop_detail"].startswith("red_team: ")
    assert data["rounds"][0]["failures"][0]["reviewer"] == "red_team"


def test_a_rejected_revision_is_reported_and_the_run_ends_by_its_rule(
    run,
    llm_server,
    document,
    tmp_path,
):
    llm_server.script(
        *review.panel(review.improvement("sec-01"), review.improvement("sec-04", "medium")),
        review.author_reply("sec-01", '{"improvements": []}'),
        Reply(content='{"improvements": []}', match="YOUR REVISION COULD NOT BE USED"),
        *review.panel(review.improvement("sec-04", "low")),
    )
    reviews = tmp_path / "reviews.json"
    done = run("--doc", document, "--json", reviews)
    assert done.returncode == 0, done.stderr
    assert done.stdout == review.DOCUMENT
    assert (
        "WARNING: Round 1: sec-01 rejected: the answer is JSON, not the section's text"
        in done.stderr.splitlines()
    )
    assert "Round 1 found 2 issues → not fixed (1 rejected)" in done.stderr
    revision = json.loads(reviews.read_text(encoding="utf-8"))["rounds"][0]["revisions"][0]
    assert revision["outcome"] == "rejected"
    assert revision["rejected"] == "the answer is JSON, not the section's text"
    assert revision["after"] == revision["before"]
