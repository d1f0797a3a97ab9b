"""`reqstudio rewrite` whose reviewer answers JSON without its own field:
`{"verdict": "fine", "notes": "looks good"}` is no review. It is asked again within the
review's policy, and the run does not claim success (before, it exited 0 with "complete":
true and "0 issue(s) fixed" after one request)."""

# ruff: noqa: F811 - the fixtures `run` and `inputs` come from test_rewrite_cli
from __future__ import annotations

import json

from reqstudio.calls import policy_for
from tests.rewrite_support import REVIEW, fenced, fill_replies, outline_reply, prompts_for
from tests.scripted_server import Reply
from tests.test_rewrite_cli import inputs, run  # noqa: F401

NO_REVIEW = {"verdict": "fine", "notes": "looks good"}


def test_a_reviewer_answering_without_its_field_is_re_asked_and_the_run_is_not_complete(
    run, inputs, llm_server, tmp_path
):
    tries = policy_for("RewriteReview").attempts
    llm_server.script(
        outline_reply(),
        *fill_replies(),
        *[Reply(content=fenced(NO_REVIEW), match=REVIEW)] * (tries + 1),
    )
    md, js = tmp_path / "new.md", tmp_path / "new.json"
    done = run(
        "--original-doc", inputs[0], "--clarifications", inputs[1],
        "--output-md", md, "--output-json", js,
    )  # fmt: skip
    assert done.returncode != 0, done.stderr
    assert len(prompts_for(llm_server, REVIEW)) == tries  # re-asked, then given up
    assert "0 issue(s) fixed" not in done.stderr and "INFO: Done:" not in done.stderr
    assert "review_revision" in done.stderr.strip().splitlines()[-1]
    assert "issues: Field required" in done.stderr
    for written in tmp_path.glob("*.json"):
        if written.name == inputs[1].name:
            continue
        assert json.loads(written.read_text(encoding="utf-8")).get("complete") is not True
    assert not js.exists() and not md.exists()
