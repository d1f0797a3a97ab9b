"""The checker on every generated SRS: its summary in `reqstudio srs generate --log` under
"check", and its score beside the judge's in the experiment's CSV. A real process talking HTTP
to the scripted server."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from reqstudio.check.engine import check_document
from tests import test_srs_support as srs
from tests.scripted_server import Reply
from tests.test_srs_cli import EVALUATION, run_cli  # noqa: F401  (the fixture)

GENERATED = (
    "# Software Requirements Specification\n\n"
    "## 3. Specific Requirements\n\n"
    "- FR-01: The system shall let the customer place an order.\n"
    "- FR-02: The system shall display detailed product information.\n"
    "- NFR-01: The system shall respond quickly.\n"
)


def test_the_generate_log_carries_the_checkers_summary(run_cli, llm_server, tmp_path):  # noqa: F811
    llm_server.script(
        srs.parse_reply(("FR-01", "Place an order."), ("FR-02", "See product details.")),
        srs.explore_reply(("FR-01", "Place an order."), ("FR-02", "See product details.")),
        srs.clarify_reply(FR_01=2, FR_02=1),
        srs.doc_reply(GENERATED),
    )
    log = tmp_path / "log.json"
    done = run_cli(
        "generate",
        "--input", str(srs.E_STORE / "input.md"),
        "--reference", str(srs.E_STORE / "reference.md"),
        "--max-iterations", "1",
        "--out", str(tmp_path / "srs.md"),
        "--log", str(log),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(log.read_text(encoding="utf-8"))
    check = data["check"]
    # the SRS as written (the document and its traceability matrix), checked with the request
    written = (tmp_path / "srs.md").read_text(encoding="utf-8")
    request = (srs.E_STORE / "input.md").read_text(encoding="utf-8")
    assert check == check_document(written, request=request).summary()
    assert check["requirements"] == 3 and check["with_findings"] == 2
    untraced = check["by_rule"].pop("SRS-untraced-request")
    assert untraced == len(check["trace"]["untraced"]) == check["trace"]["request_sentences"] - 1
    # "detailed" is ambiguous; so is "quickly", an adverb of manner (ISO's ambiguous adverbs)
    assert check["by_rule"] == {
        "ISO29148-ambiguous": 2,
        "SRS-nfr-unmeasured": 1,
    }
    assert check["ears"]["by_template"] == {"ubiquitous": 3}
    # the keys that were there before are unchanged
    assert {"logs", "requirements", "frozen_ids", "removed_ids", "usage"} <= set(data)


def test_the_experiment_csv_has_the_checkers_columns(run_cli, llm_server, tmp_path):  # noqa: F811
    cases = tmp_path / "cases"
    shutil.copytree(srs.E_STORE, cases / "e-store")
    llm_server.script(
        srs.parse_reply(("FR-01", "Place an order.")),
        srs.doc_reply(GENERATED),
        Reply(content=json.dumps(EVALUATION), match=srs.EVALUATE),
    )
    out = tmp_path / "runs.csv"
    done = run_cli(
        "experiment", "--cases", str(cases), "--ablations", "no-explore-clarify",
        "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with out.open(encoding="utf-8") as handle:
        [row] = list(csv.DictReader(handle))
    summary = check_document(GENERATED).summary()
    assert float(row["check_score"]) == summary["score"] == round(1 / 3, 3)
    assert int(row["check_findings"]) == summary["findings"] == 3
    assert float(row["check_ears_share"]) == 1.0
    assert float(row["coverage"]) == 0.5  # the judge's columns as before
    # the summary: on stdout after the means, and beside the CSV
    summary = (tmp_path / "runs_summary.md").read_text(encoding="utf-8")
    assert "| no-explore-clarify | 1 | 1 | 0 | Comprehensive_Score_Weighted |" in summary
    assert summary.strip() in done.stdout


def _prompts(server) -> dict[str, str]:
    """The text sent to the model by each agent, by a word of its prompt."""
    found = {}
    for body in server.requests:
        text = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        for agent in ("Requirement Exploration Agent", "Document Generation Agent"):
            if agent in text:
                found[agent] = text
    return found


def test_the_ears_style_reaches_req_explore_and_doc_generate(run_cli, llm_server, tmp_path):  # noqa: F811
    for style in ("ears", "plain"):
        llm_server.reset()
        llm_server.script(
            *srs.one_requirement_run(
                "Place an order.",
                "When the customer confirms, the system shall place the order.",
                GENERATED,
            ),
        )
        done = run_cli(
            "generate",
            "--input", str(srs.E_STORE / "input.md"),
            "--reference", str(srs.E_STORE / "reference.md"),
            "--max-iterations", "2",
            "--out", str(tmp_path / f"srs-{style}.md"),
            SRS_REQUIREMENT_STYLE=style,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        prompts = _prompts(llm_server)
        explore = prompts["Requirement Exploration Agent"]
        document = prompts["Document Generation Agent"]
        if style == "ears":
            assert "[Requirement Style: EARS]" in explore
            assert "When <trigger>, the <system> shall <response>." in explore
            assert "如果<触发>，那么<系统>应<响应>" in explore
            assert "Phrase every functional requirement in one of the EARS templates" in document
        else:
            assert "EARS" not in explore and "EARS" not in document


# --- the experiment's summary on a fixed CSV --------------------------------------------

FIXED_CSV = srs.E_STORE.parent / "experiment-fixed.csv"


def test_the_summary_of_a_fixed_csv():
    from reqstudio.modes.srs.experiment_summary import read_rows, summarize, summary_table

    rows = read_rows(FIXED_CSV)
    baseline, none = summarize(rows, ["no-clarify", "none"])
    assert (baseline.runs, baseline.ok, baseline.failed) == (4, 4, 0)
    assert (none.runs, none.ok, none.failed) == (4, 3, 1)  # the failed run is left out
    simple = baseline.metrics["Comprehensive_Score_Simple"]
    assert simple.n == 4 and simple.mean == pytest.approx(0.55)
    assert simple.sd == pytest.approx((0.05 / 3) ** 0.5)  # sample sd of .5 .6 .4 .7
    assert simple.difference is None  # the baseline itself
    # weighted: none beats no-clarify by exactly 0.10 on each of the three paired cases
    weighted = none.metrics["Comprehensive_Score_Weighted"]
    assert weighted.pairs == 3 and weighted.difference == pytest.approx(0.10)
    assert weighted.low == pytest.approx(0.10) and weighted.high == pytest.approx(0.10)
    # simple: differences +0.05, +0.15, -0.05: the interval holds the mean, within the range
    simple = none.metrics["Comprehensive_Score_Simple"]
    assert simple.difference == pytest.approx(0.05)
    assert -0.05 - 1e-9 <= simple.low < 0.05 < simple.high <= 0.15 + 1e-9
    assert summarize(rows, ["no-clarify", "none"]) == [baseline, none]  # seeded: repeatable
    table = summary_table([baseline, none])
    assert (
        "| none | 4 | 3 | 1 | Comprehensive_Score_Weighted | 0.600 ± 0.100 | +0.100 [+0.100, +0.100] | 3 |"
        in table
    )
    assert (
        "| no-clarify | 4 | 4 | 0 | Comprehensive_Score_Simple | 0.550 ± 0.129 | (baseline) | - |"
        in table
    )


def test_the_bootstrap_interval_matches_a_direct_computation():
    import random

    from reqstudio.modes.srs.experiment_summary import bootstrap_interval

    differences = [0.12, -0.03, 0.08, 0.20, 0.01, 0.05, -0.07, 0.15]
    generator = random.Random(0)
    means = sorted(
        sum(generator.choice(differences) for _ in differences) / len(differences)
        for _ in range(2000)
    )
    assert bootstrap_interval(differences) == (means[49], means[1949])
    low, high = bootstrap_interval(differences)
    assert low < sum(differences) / len(differences) < high
