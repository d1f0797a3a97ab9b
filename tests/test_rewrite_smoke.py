"""Smoke test: `reqstudio rewrite` against the bundled real offline model.

No OPENAI_* variable is set, so the CLI starts the embedded SmolLM2-135M model itself. That model
is weak: only the shape of the outcome is checked (an outline, every section written, a
document and its structure), not its quality.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_support import run_with_embedded_model

pytestmark = pytest.mark.smoke

DATA = Path(__file__).resolve().parent / "data" / "rewrite"


def test_rewrite_with_the_embedded_model(tmp_path):
    out_md, out_json = tmp_path / "rewritten.md", tmp_path / "structure.json"
    done = run_with_embedded_model(
        tmp_path, "rewrite", "--original-doc", DATA / "original.md",
        "--clarifications", DATA / "clarifications.json",
        "--output-md", out_md, "--output-json", out_json,
        timeout=900,
        REWRITE_MAX_REVIEW_ROUNDS="1",  # one review (and its patches) keeps the run short
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    for stage in ("outline_generation", "content_filling", "review_revision"):
        assert f"INFO: Stage end: {stage}." in done.stderr
    data = json.loads(out_json.read_text(encoding="utf-8"))
    sections = data["structured_document"]["sections"]
    assert sections, "the outline had no section"
    assert all(s["title"].strip() and s["goal"].strip() for s in sections)
    assert all(s["content"].strip() for s in sections), "a section was left empty"
    markdown = out_md.read_text(encoding="utf-8")
    assert markdown == data["rewritten_content"]
    assert all(f"## {s['title']}" in markdown or s["level"] != 2 for s in sections)
