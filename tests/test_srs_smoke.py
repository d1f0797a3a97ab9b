"""Smoke test: `reqstudio srs generate` against the bundled real offline model.

No OPENAI_* variable is set, so the CLI starts the embedded SmolLM2-135M model itself. That model
is weak: only the shape of the outcome is checked, not its quality: a whole SRS, or an honest
failure (exit 1, the fault named, what was produced kept).
"""

from __future__ import annotations

import json
import re

import pytest

from tests.cli_support import run_with_embedded_model
from tests.test_srs_support import E_STORE

pytestmark = pytest.mark.smoke


def test_generate_with_the_embedded_model(tmp_path):
    out, log = tmp_path / "srs.md", tmp_path / "log.json"
    done = run_with_embedded_model(
        tmp_path, "srs", "generate", "--input", E_STORE / "input.md", "--max-iterations", "1",
        "--out", out, "--log", log, timeout=900,
    )  # fmt: skip
    if done.returncode != 0:
        # The 135M model sometimes writes JSON where the SRS should be (with this machine's
        # llama.cpp build it does, every time): the run must then fail as the app promises,
        # never pass it off as an SRS. One line naming the fault, what was produced kept,
        # no srs.md.
        assert done.returncode == 1, done.stderr[-3000:]
        assert "DocGenerate failed" in done.stderr and "not an SRS document" in done.stderr
        assert not out.exists()
        kept = list((tmp_path / "data" / "failed-runs").glob("srs-*"))
        assert {p.suffix for p in kept} >= {".json", ".md"}, kept
        record = json.loads(next(p for p in kept if p.suffix == ".json").read_text("utf-8"))
        assert record["agent"] == "DocGenerate" and record["complete"] is False
        data = json.loads(log.read_text(encoding="utf-8"))  # the log so far, as asked
        assert data["requirements"], "ReqParse/ReqExplore produced no requirement"
        return
    document = out.read_text(encoding="utf-8")
    assert document.strip()
    assert re.search(r"^#{1,6} \S", document, re.MULTILINE), document[:1000]
    data = json.loads(log.read_text(encoding="utf-8"))
    assert data["ablation_used"] == "no-clarify"  # no reference given
    assert [e["agent"] for e in data["logs"]] == ["ReqParse", "ReqExplore", "DocGenerate"]
    assert data["requirements"], "ReqParse/ReqExplore produced no requirement"
