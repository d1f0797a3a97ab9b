"""Smoke test: `reqstudio review` against the bundled real offline model.

No OPENAI_* variable is set, so the CLI starts the embedded SmolLM2-135M model itself. That model
is weak: only the shape of the outcome is checked (one round that ends cleanly with a named stop,
the four reviewers' answers readable or named as unreadable, a whole document), not its
quality."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reqstudio.document_model import parse_markdown

pytestmark = pytest.mark.smoke

REQSTUDIO = Path(sys.executable).with_name("reqstudio")
DOCUMENT = Path(__file__).resolve().parent / "data" / "review" / "clinic.md"


def test_one_review_round_with_the_embedded_model(tmp_path):
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama_cpp is not importable: install '.[local]' to run the embedded model")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REQSTUDIO_"))}
    env.update(REQSTUDIO_DATA_DIR=str(tmp_path / "data"), PYTHONIOENCODING="utf-8")
    out, reviews = tmp_path / "improved.md", tmp_path / "reviews.json"
    done = subprocess.run(
        [str(REQSTUDIO), "review", "--doc", str(DOCUMENT), "--max-rounds", "1",
         "--out", str(out), "--json", str(reviews)],
        cwd=tmp_path, env=env, capture_output=True, text=True, encoding="utf-8", timeout=1500,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(reviews.read_text(encoding="utf-8"))
    assert data["stop_reason"] in ("quality_sufficient", "max_rounds")
    (record,) = data["rounds"]
    answered = [r for r in ("red_team", "blue_team", "client", "judge") if record[r] is not None]
    failed = [f["reviewer"] for f in record["failures"]]
    assert sorted(answered + failed) == sorted(["red_team", "blue_team", "client", "judge"])
    assert record["red_team"] is not None or record["judge"] is not None
    improved = out.read_text(encoding="utf-8")
    # One round reviews and does not revise: the document comes back as it went in.
    assert improved == DOCUMENT.read_text(encoding="utf-8")
    assert [s.title for s in parse_markdown(improved).sections] == [
        "1. Users",
        "2. Booking",
        "3. Reminders",
    ]
    assert "INFO: Trajectory: Round 1 found" in done.stderr
