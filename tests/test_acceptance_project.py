"""A project's acceptance tests, as commands on SQLite and on PostgreSQL: `reqstudio tests
generate --project` stores the tests; the traceability matrix shows requirement <-> test both
ways, a requirement without tests among them; a new baseline in which a requirement changed
(in meaning, or only in wording) or is gone marks its tests suspect, `reqstudio diff
baseline:A baseline:B` lists them, and `reqstudio tests confirm` clears the mark, which a later
unchanged baseline does not set again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_support import QUICK, run_reqstudio
from tests.scripted_server import Reply

V1 = """# Shop SRS

## 3 Functional requirements

- FR-01 The system shall send a receipt within 2 s of a payment.
- FR-02 The operator shall approve each refund.
- FR-03 The system shall export orders as CSV.
"""
# FR-01's number changed (meaning), FR-02 reworded, FR-03 removed
V2 = """# Shop SRS

## 3 Functional requirements

- FR-01 The system shall send a receipt within 5 s of a payment.
- FR-02 The operator shall approve every refund.
"""


def answer(*ids: str) -> str:
    scenarios = [
        {"requirement_id": rid, "title": f"checks {rid}", "given": "a customer",
         "when": "something happens", "then": "the outcome is observed"}
        for rid in ids
    ]  # fmt: skip
    return "```json\n" + json.dumps({"scenarios": scenarios}) + "\n```"


@pytest.fixture(params=["sqlite", "postgres"])
def run(request, llm_server, tmp_path: Path):
    extra = dict(QUICK, LANG="C")
    if request.param == "postgres":
        extra["REQSTUDIO_DATABASE_URL"] = request.getfixturevalue("postgres_url")

    def reqstudio(*args: object):
        return run_reqstudio(llm_server.base_url, tmp_path, *args, **extra)

    return reqstudio


def _ok(done):
    assert done.returncode == 0, done.stderr
    return done


def _tests(run) -> dict[str, dict]:
    listed = json.loads(_ok(run("tests", "list", "--project", "shop", "--json")).stdout)
    return {t["id"]: t for t in listed["tests"]}


def test_matrix_suspect_marks_and_confirm(run, llm_server, tmp_path):
    (tmp_path / "v1.md").write_text(V1, encoding="utf-8")
    (tmp_path / "v2.md").write_text(V2, encoding="utf-8")
    _ok(run("import", "v1.md", "--project", "shop"))
    llm_server.script(Reply(content=answer("FR-01", "FR-01", "FR-02", "FR-03")))
    done = _ok(run("tests", "generate", "--project", "shop", "--requirement", "FR-01",
                   "--requirement", "FR-02", "--requirement", "FR-03", "--format", "json"))  # fmt: skip
    assert "stored in the project shop" in done.stderr
    assert set(_tests(run)) == {"AT-FR-01-1", "AT-FR-01-2", "AT-FR-02-1", "AT-FR-03-1"}

    # the matrix both ways; a requirement imported later has no tests and is listed so
    (tmp_path / "v1b.md").write_text(V1 + "- FR-04 The system shall log every refund.\n")
    _ok(run("import", "v1b.md", "--project", "shop"))
    matrix = json.loads(_ok(run("tests", "matrix", "--project", "shop", "--format", "json")).stdout)
    forward = {r["id"]: r["tests"] for r in matrix["requirements"]}
    assert forward == {"FR-01": ["AT-FR-01-1", "AT-FR-01-2"], "FR-02": ["AT-FR-02-1"],
                       "FR-03": ["AT-FR-03-1"], "FR-04": []}  # fmt: skip
    backward = {t["id"]: t["verifies"] for t in matrix["tests"]}
    assert backward == {"AT-FR-01-1": "FR-01", "AT-FR-01-2": "FR-01", "AT-FR-02-1": "FR-02",
                        "AT-FR-03-1": "FR-03"}  # fmt: skip
    assert matrix["summary"]["without_tests"] == 1 and matrix["summary"]["suspect"] == 0
    table = _ok(run("tests", "matrix", "--project", "shop")).stdout
    assert "FR-04" in table and "(none)" in table and "AT-FR-02-1  FR-02" in table
    markdown = _ok(run("tests", "matrix", "--project", "shop", "--format", "markdown")).stdout
    assert "| FR-01 | AT-FR-01-1, AT-FR-01-2 |" in markdown and "| FR-04 | (none) |" in markdown

    # a baseline of the same text marks nothing; one after the requirements changed does
    created = _ok(run("baseline", "create", "A", "--project", "shop"))
    assert "suspect" not in created.stderr
    _ok(run("import", "v2.md", "--project", "shop"))
    created = _ok(run("baseline", "create", "B", "--project", "shop"))
    assert "4 acceptance tests marked suspect" in created.stderr
    tests = _tests(run)
    assert {i: (t["suspect_reason"] or {}).get("change") for i, t in tests.items()} == {
        "AT-FR-01-1": "meaning", "AT-FR-01-2": "meaning", "AT-FR-02-1": "wording",
        "AT-FR-03-1": "removed",
    }  # fmt: skip
    assert tests["AT-FR-01-1"]["suspect_reason"]["new_text"].endswith("within 5 s of a payment.")

    # the diff between the baselines lists them
    diff = json.loads(_ok(run("diff", "baseline:A", "baseline:B", "--project", "shop",
                              "--json")).stdout)  # fmt: skip
    listed = {t["id"]: t for t in diff["suspect_tests"]}
    assert set(listed) == {"AT-FR-01-1", "AT-FR-01-2", "AT-FR-02-1", "AT-FR-03-1"}
    assert listed["AT-FR-01-1"]["suspect"] and listed["AT-FR-01-1"]["verifies"] == "FR-01"
    table = _ok(run("diff", "baseline:A", "baseline:B", "--project", "shop")).stdout
    assert "AT-FR-01-1 verifies FR-01: suspect (meaning, baseline B)" in table

    # a person confirms one: its mark is gone, the others stay; a later baseline keeps it so
    confirmed = _ok(run("tests", "confirm", "AT-FR-01-1", "--project", "shop"))
    assert "suspect mark cleared" in confirmed.stderr
    tests = _tests(run)
    assert not tests["AT-FR-01-1"]["suspect"] and tests["AT-FR-01-2"]["suspect"]
    _ok(run("baseline", "create", "C", "--project", "shop"))
    assert not _tests(run)["AT-FR-01-1"]["suspect"]
    table = _ok(run("diff", "baseline:A", "baseline:B", "--project", "shop")).stdout
    assert "AT-FR-01-1 verifies FR-01: confirmed" in table
    matrix = json.loads(_ok(run("tests", "matrix", "--project", "shop", "--format", "json")).stdout)
    assert matrix["summary"]["suspect"] == 3 and matrix["summary"]["orphaned"] == 1

    # a test whose requirement is gone cannot be confirmed; an unknown test is refused
    refused = run("tests", "confirm", "AT-FR-03-1", "--project", "shop")
    assert refused.returncode == 2 and "no longer holds" in refused.stderr
    refused = run("tests", "confirm", "AT-NONE-1", "--project", "shop")
    assert refused.returncode == 2 and "no acceptance test 'AT-NONE-1'" in refused.stderr


def test_regenerated_tests_replace_the_old_ones_and_export_as_reqif(run, llm_server, tmp_path):
    from tests.reqif_support import schema_errors

    (tmp_path / "v1.md").write_text(V1, encoding="utf-8")
    _ok(run("import", "v1.md", "--project", "shop"))
    llm_server.script(Reply(content=answer("FR-01", "FR-02", "FR-03")))
    _ok(run("tests", "generate", "--project", "shop", "--format", "json"))
    llm_server.script(Reply(content=answer("FR-01", "FR-01")))
    _ok(run("tests", "generate", "--project", "shop", "--requirement", "FR-01", "--replace",
            "--format", "json"))  # fmt: skip
    # the replaced test is gone and its id is not given again
    assert sorted(_tests(run)) == ["AT-FR-01-2", "AT-FR-01-3", "AT-FR-02-1", "AT-FR-03-1"]
    _ok(run("tests", "export", "--project", "shop", "--format", "reqif", "--out", "out"))
    out = tmp_path / "out" / "acceptance-tests.reqif"
    assert schema_errors(out) == []
    assert out.read_text(encoding="utf-8").count("<SPEC-RELATION ") == 4
