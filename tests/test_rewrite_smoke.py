"""Smoke test: `reqstudio rewrite` against the bundled real offline model.

No OPENAI_* variable is set, so the CLI starts the embedded SmolLM2-135M model itself. That model
is weak: only the shape of the outcome is checked (an outline, every section written, a
document and its structure), not its quality.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.smoke

REQSTUDIO = Path(sys.executable).with_name("reqstudio")
DATA = Path(__file__).resolve().parent / "data" / "rewrite"


def test_rewrite_with_the_embedded_model(tmp_path):
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama_cpp is not importable: install '.[local]' to run the embedded model")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REQSTUDIO_"))}
    env.update(
        REQSTUDIO_DATA_DIR=str(tmp_path / "data"),
        REWRITE_MAX_REVIEW_ROUNDS="1",  # one review (and its patches) keeps the run short
        PYTHONIOENCODING="utf-8",
    )
    out_md, out_json = tmp_path / "rewritten.md", tmp_path / "structure.json"
    done = subprocess.run(
        [
            str(REQSTUDIO), "rewrite",
            "--original-doc", str(DATA / "original.md"),
            "--clarifications", str(DATA / "clarifications.json"),
            "--output-md", str(out_md),
            "--output-json", str(out_json),
        ],
        cwd=tmp_path, env=env, capture_output=True, text=True, encoding="utf-8", timeout=900,
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
