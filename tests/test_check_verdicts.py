"""A user's verdicts on the checker's findings: `reqstudio check --verdicts FILE` (JSON or
TOML) stops reporting what was judged wrong, says how many it suppressed, lists them with
`--show-suppressed`, and gives them under a new `suppressed` key of `--json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reqstudio.check.engine import check_document
from reqstudio.check.verdicts import VerdictError, make_verdict, read_verdicts, surroundings
from tests.test_check import run_check

DOCUMENT = """# Requirements

- FR-1: The system shall respond quickly to a search request.
- FR-2: The system shall respond quickly to a login request.
- FR-3: The operator shall move the arm quickly enough.
- FR-4: The system shall be user-friendly.
- FR-5: 系统应快速响应查询请求。
"""

# "quickly", the word these verdicts are about, is an ambiguous adverb of manner
VAGUE = "ISO29148-ambiguous"


def _flagged(report, rule: str = VAGUE) -> list[tuple[str, str]]:
    return [(f.requirement_id, f.term) for f in report.findings if f.rule == rule]


def _verdict(**fields):
    return make_verdict({"rule": VAGUE, "verdict": "wrong", **fields})


def test_without_verdicts_every_finding_is_reported():
    report = check_document(DOCUMENT)
    assert ("FR-1", "quickly") in _flagged(report)
    assert report.suppressed == [] and report.summary()["suppressed"] == 0


def test_a_dismissed_term_between_the_same_words_is_not_reported_elsewhere_it_stays():
    wrong = _verdict(
        term="quickly", context="The system shall respond quickly to a search request."
    )
    report = check_document(DOCUMENT, verdicts=[wrong])
    flagged = _flagged(report)
    # "respond quickly to" in FR-1 and FR-2: dismissed; "arm quickly enough" in FR-3: kept
    assert ("FR-1", "quickly") not in flagged and ("FR-2", "quickly") not in flagged
    assert ("FR-3", "quickly") in flagged
    assert [s.finding.requirement_id for s in report.suppressed] == ["FR-1", "FR-2"]
    assert report.summary()["suppressed"] == 2
    # the other rule on the same word is another finding: not dismissed by this verdict
    assert any(
        f.rule == "SRS-nfr-unmeasured" and f.requirement_id == "FR-1" for f in report.findings
    )


def test_scopes_requirement_and_document():
    only_here = _verdict(
        term="quickly", context="FR-1: The system shall respond quickly to a search request.",
        scope="requirement",
    )  # fmt: skip
    report = check_document(DOCUMENT, verdicts=[only_here])
    assert [s.finding.requirement_id for s in report.suppressed] == ["FR-1"]
    everywhere = _verdict(term="Quickly")  # no context: the whole document, any case
    report = check_document(DOCUMENT, verdicts=[everywhere])
    assert [s.finding.requirement_id for s in report.suppressed] == ["FR-1", "FR-2", "FR-3"]


def test_a_confirmed_finding_is_not_hidden_by_a_broader_dismissal():
    verdicts = [
        _verdict(term="quickly"),  # wrong everywhere ...
        make_verdict(
            {
                "rule": VAGUE,
                "term": "quickly",
                "verdict": "right",
                "context": "The operator shall move the arm quickly enough.",
            }
        ),
    ]
    report = check_document(DOCUMENT, verdicts=verdicts)
    assert ("FR-3", "quickly") in _flagged(report)
    assert ("FR-1", "quickly") not in _flagged(report)


def test_chinese_terms_match_by_the_characters_around_them():
    report = check_document(DOCUMENT)
    zh = [f for f in report.findings if f.requirement_id == "FR-5"]
    assert zh, "the Chinese requirement has a finding to judge"
    finding = zh[0]
    wrong = make_verdict({"rule": finding.rule, "term": finding.term, "verdict": "wrong",
                          "context": "系统应快速响应查询请求。"})  # fmt: skip
    after = check_document(DOCUMENT, verdicts=[wrong])
    assert finding.rule not in {f.rule for f in after.findings if f.requirement_id == "FR-5"}
    assert surroundings("系统应快速响应", "快速") == {("应", "响")}


def test_bad_verdicts_are_refused_with_the_reason(tmp_path: Path):
    with pytest.raises(VerdictError, match="verdict"):
        make_verdict({"rule": VAGUE, "term": "x", "verdict": "maybe"})
    with pytest.raises(VerdictError, match="rule"):
        make_verdict({"term": "x", "verdict": "wrong"})
    with pytest.raises(VerdictError, match="context"):
        make_verdict({"rule": VAGUE, "term": "x", "verdict": "wrong", "scope": "words"})
    broken = tmp_path / "v.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(VerdictError, match="not JSON"):
        read_verdicts(broken)


# --- the CLI, as a user runs it ------------------------------------------------------------


@pytest.fixture
def document(tmp_path: Path) -> Path:
    path = tmp_path / "srs.md"
    path.write_text(DOCUMENT, encoding="utf-8")
    return path


def _json_verdicts(tmp_path: Path) -> Path:
    path = tmp_path / "verdicts.json"
    path.write_text(json.dumps({"verdicts": [{
        "rule": VAGUE, "term": "quickly", "verdict": "wrong", "reason": "the glossary defines it",
        "context": "The system shall respond quickly to a search request.",
    }]}), encoding="utf-8")  # fmt: skip
    return path


def test_cli_json_has_the_suppressed_findings_and_keeps_its_keys(document: Path, tmp_path: Path):
    before = json.loads(run_check(str(document), "--json").stdout)
    done = run_check(str(document), "--json", "--verdicts", str(_json_verdicts(tmp_path)))
    assert done.returncode == 0, done.stderr
    after = json.loads(done.stdout)
    assert set(before) <= set(after) and "suppressed" in after
    assert before["suppressed"] == [] and after["summary"]["suppressed"] == 2
    assert after["summary"]["findings"] == before["summary"]["findings"] - 2
    first = after["suppressed"][0]
    assert (first["requirement_id"], first["rule"], first["term"]) == (
        "FR-1",
        VAGUE,
        "quickly",
    )
    assert first["verdict"]["reason"] == "the glossary defines it"


def test_cli_text_counts_and_lists_on_request(document: Path, tmp_path: Path):
    verdicts = str(_json_verdicts(tmp_path))
    done = run_check(str(document), "--lang", "en", "--verdicts", verdicts)
    assert done.returncode == 0, done.stderr
    assert "2 suppressed by verdicts" in done.stdout
    assert "Suppressed by verdicts" not in done.stdout and "--show-suppressed" in done.stdout
    shown = run_check(str(document), "--lang", "en", "--verdicts", verdicts, "--show-suppressed")
    assert "## Suppressed by verdicts" in shown.stdout
    assert "(reason: the glossary defines it)" in shown.stdout
    zh = run_check(str(document), "--lang", "zh", "--verdicts", verdicts, "--show-suppressed")
    assert "2 个问题已按判定隐藏" in zh.stdout and "## 按判定隐藏的问题" in zh.stdout


def test_cli_reads_toml_verdicts(document: Path, tmp_path: Path):
    path = tmp_path / "verdicts.toml"
    path.write_text(
        '[[verdict]]\nrule = "ISO29148-subjective"\nterm = "user-friendly"\nverdict = "wrong"\n',
        encoding="utf-8",
    )
    data = json.loads(run_check(str(document), "--json", "--verdicts", str(path)).stdout)
    assert [(s["requirement_id"], s["term"]) for s in data["suppressed"]] == [
        ("FR-4", "user-friendly")
    ]


def test_cli_refuses_a_bad_verdicts_file(document: Path, tmp_path: Path):
    missing = run_check(str(document), "--verdicts", str(tmp_path / "none.json"))
    assert missing.returncode == 2 and "--verdicts: no such file" in missing.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('[{"rule": "x", "term": "y", "verdict": "perhaps"}]', encoding="utf-8")
    done = run_check(str(document), "--verdicts", str(bad))
    assert done.returncode == 2 and "verdict 1" in done.stderr and "perhaps" in done.stderr


def test_the_replay_benchmark_judges_a_finding_by_the_labels_of_its_requirement():
    """benchmarks/check_verdicts.py: a finding that answers a label the requirement carries is
    "right", one whose labels it does not carry is "wrong", a finding answering no label gets
    no verdict; the verdicts then suppress only the wrong ones."""
    from benchmarks.check_verdicts import judgements
    from benchmarks.human_labels import ArtaItem

    items = [
        ArtaItem("R-1", "The system shall respond quickly to a search request.", {"subjective"}),
        ArtaItem("R-2", "The system shall respond quickly to a login request.", set()),
    ]
    data = {"findings": [
        {"requirement_id": "R-1", "rule": VAGUE, "also": [], "term": "quickly"},
        {"requirement_id": "R-2", "rule": VAGUE, "also": [], "term": "quickly"},
        {"requirement_id": "R-2", "rule": "SRS-missing-id", "also": [], "term": ""},
    ]}  # fmt: skip
    mapping = {"subjective": (VAGUE,)}
    verdicts = judgements(items, data, mapping, "requirement")
    assert [(v["requirement_id"], v["verdict"]) for v in verdicts] == [
        ("R-1", "right"), ("R-2", "wrong"),
    ]  # fmt: skip
    assert verdicts[1]["context"] == items[1].text
    assert "context" not in judgements(items, data, mapping, "document")[0]
