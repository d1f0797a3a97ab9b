"""`reqstudio import FILE --project P`, `reqstudio items list`, `reqstudio baseline create|list`
and `reqstudio diff baseline:NAME NEW`, run as commands on SQLite (the data folder) and on
PostgreSQL (REQSTUDIO_DATABASE_URL): ids and uids kept by a re-import of an edited document,
a baseline's diff with meaning marks and --exit-code, the acting user (`--user`, default
`local`) and one user's projects out of another's reach."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.reqif_support import REQSTUDIO, ROOT

V1 = """# Shop SRS

## 3 Functional requirements

The system shall send a receipt within 2 s.

The operator shall approve each refund.

The system shall export orders as CSV.
"""
# a new requirement first (read alone it would take REQ-1), one number and one actor changed
V2 = """# Shop SRS

## 3 Functional requirements

The system shall print an invoice for each order.

The system shall send a receipt within 5 s.

The manager shall approve each refund.

The system shall export orders as CSV.
"""


@pytest.fixture(params=["sqlite", "postgres"])
def run(request, tmp_path: Path):
    """`reqstudio ARGS` with its data in tmp_path (and, for postgres, a fresh database)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REQSTUDIO_"))}
    env.update(PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8",
               REQSTUDIO_DATA_DIR=str(tmp_path / "data"))  # fmt: skip
    if request.param == "postgres":
        env["REQSTUDIO_DATABASE_URL"] = request.getfixturevalue("postgres_url")

    def reqstudio(*args: object, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*REQSTUDIO, *[str(a) for a in args]], cwd=tmp_path, env=env, input=stdin,
            capture_output=True, text=True, encoding="utf-8", timeout=120,
        )  # fmt: skip

    return reqstudio


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _json(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_import_into_a_project_keeps_ids_across_an_edited_reimport(run, tmp_path: Path):
    v1, v2 = _write(tmp_path, "v1.md", V1), _write(tmp_path, "v2.md", V2)
    unstored = _json(run("import", v2, "--json"))
    assert set(unstored) == {"items", "skipped"}  # without --project: read only
    assert unstored["items"][1]["id"] == "REQ-1"
    first = _json(run("import", v1, "--project", "shop", "--json"))
    assert (first["project"], first["revision"]) == ("shop", 1)
    assert first["stored"] == {"added": 4, "changed": 0, "unchanged": 0, "removed": 0}
    ids = {item["text"]: (item["id"], item["uid"]) for item in first["items"]}
    second = _json(run("import", v2, "--project", "shop", "--json"))
    after = {item["text"]: (item["id"], item["uid"]) for item in second["items"]}
    csv = "The system shall export orders as CSV."
    assert after[csv] == ids[csv]  # the same text: same id, same uid
    assert (
        after["The system shall send a receipt within 5 s."]
        == ids["The system shall send a receipt within 2 s."]
    )  # an edited requirement keeps its id
    assert after["The system shall print an invoice for each order."][0] == "REQ-4"
    assert second["stored"] == {"added": 1, "changed": 2, "unchanged": 2, "removed": 0}
    listed = _json(run("items", "list", "--project", "shop", "--json"))
    assert [(i["id"], i["uid"]) for i in listed["items"]] == [
        (i["id"], i["uid"]) for i in second["items"]
    ]
    table = run("items", "list", "--project", "shop")
    assert table.returncode == 0 and "REQ-4\tfunctional" in table.stdout


def test_baseline_diff_marks_meaning_and_exit_code(run, tmp_path: Path):
    v1, v2 = _write(tmp_path, "v1.md", V1), _write(tmp_path, "v2.md", V2)
    assert run("import", v1, "--project", "shop").returncode == 0
    created = run("baseline", "create", "v1", "--project", "shop")
    assert created.returncode == 0, created.stderr
    assert "4 items frozen" in created.stderr
    assert run("import", v2, "--project", "shop").returncode == 0  # the baseline stays
    listed = _json(run("baseline", "list", "--project", "shop", "--json"))
    assert [(b["name"], b["items"], b["revision"]) for b in listed["baselines"]] == [("v1", 4, 1)]
    diff = _json(run("diff", "baseline:v1", v2, "--project", "shop", "--json"))
    by_new = {c["new_text"]: c for c in diff["changes"]}
    receipt = by_new["The system shall send a receipt within 5 s."]
    assert (receipt["status"], receipt["meaning_changed"]) == ("changed", True)
    assert [m["kind"] for m in receipt["meaning"]] == ["quantity"]
    refund = by_new["The manager shall approve each refund."]
    assert [m["kind"] for m in refund["meaning"]] == ["actor"]
    assert by_new["The system shall print an invoice for each order."]["status"] == "added"
    markdown = run("diff", "baseline:v1", v2, "--project", "shop", "--format", "markdown")
    assert markdown.returncode == 0 and "2 s" in markdown.stdout and "5 s" in markdown.stdout
    differs = run("diff", "baseline:v1", v2, "--project", "shop", "--exit-code")
    assert differs.returncode == 1, differs.stderr
    # the project's items now are what v2 says: the same as a baseline of them
    assert run("baseline", "create", "v2", "--project", "shop").returncode == 0
    same = run("diff", "baseline:v2", v2, "--project", "shop", "--exit-code")
    assert same.returncode == 0, same.stdout + same.stderr
    both = _json(run("diff", "baseline:v1", "baseline:v2", "--project", "shop", "--json"))

    def what(changes: list[dict]) -> list[tuple]:
        return [(c["status"], c["old_text"], c["new_text"], c.get("meaning_changed"))
                for c in changes]  # fmt: skip

    assert what(both["changes"]) == what(diff["changes"])
    # between two baselines, the project's ids: the new requirement is REQ-4, not the file's REQ-1
    assert (both["changes"][0]["status"], both["changes"][0]["id"]) == ("added", "REQ-4")
    assert {c["matched_by"] for c in both["changes"] if c["status"] == "changed"} == {"id"}


def test_refusals_are_one_line_with_exit_code_2(run, tmp_path: Path):
    v1 = _write(tmp_path, "v1.md", V1)
    assert run("import", v1, "--project", "shop").returncode == 0
    assert run("baseline", "create", "v1", "--project", "shop").returncode == 0
    for args, said in (
        (("baseline", "create", "v1", "--project", "shop"), "baseline 'v1' already"),
        (("items", "list", "--project", "nope"), "local has no project 'nope'"),
        (("diff", "baseline:v9", v1, "--project", "shop"), "no baseline 'v9'"),
        (("diff", "baseline:", v1, "--project", "shop"), "names no baseline"),
        (("items", "list", "--user", "ghost"), "no user 'ghost'"),
    ):
        done = run(*args)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("reqstudio: ") and said in lines[0]


def test_users_reach_only_their_own_projects(run, tmp_path: Path):
    for name in ("alice", "bob"):
        added = run("users", "add", name, stdin="a-long-password\n")
        assert added.returncode == 0, added.stderr
    secret = _write(tmp_path, "s.md", "# S\n\n- FR-01 The vault code shall be 4711.\n")
    stored = run("import", secret, "--project", "vault", "--user", "alice")
    assert stored.returncode == 0, stored.stderr
    assert run("baseline", "create", "v1", "--project", "vault", "--user", "alice").returncode == 0
    for args in (
        ("items", "list", "--project", "vault", "--user", "bob"),
        ("baseline", "list", "--project", "vault", "--user", "bob"),
        ("diff", "baseline:v1", secret, "--project", "vault", "--user", "bob"),
    ):
        done = run(*args)
        assert done.returncode == 2 and "bob has no project 'vault'" in done.stderr, args
        assert "4711" not in done.stdout + done.stderr
    # bob's import into "vault" makes his own project; alice's stays as it was
    other = _write(tmp_path, "o.md", "# O\n\n- FR-01 Bob's requirement shall stand.\n")
    assert run("import", other, "--project", "vault", "--user", "bob").returncode == 0
    hers = _json(run("items", "list", "--project", "vault", "--user", "alice", "--json"))
    assert [i["text"] for i in hers["items"]] == ["The vault code shall be 4711."]
    his = _json(run("items", "list", "--project", "vault", "--user", "bob", "--json"))
    assert [i["text"] for i in his["items"]] == ["Bob's requirement shall stand."]
    # the local user (the default) has neither
    assert run("items", "list", "--project", "vault").returncode == 2
