"""`reqstudio diff OLD NEW`: requirements added, removed, changed and moved, matched by id and
then by text, with the words that changed; a change of a modal verb, a number or unit, a
negation, a condition or an actor marked as a change of meaning, apart from rewording (English
and Chinese); the table, --json and --format markdown; --exit-code as git diff's."""

from __future__ import annotations

import json
import re

import pytest

from reqstudio.workspace.diff import diff_items
from reqstudio.workspace.items import items_from_text
from tests.reqif_support import reqstudio

OLD_EN = """# Shop SRS

## 3 Functional requirements

- FR-01 The system shall send a receipt within 2 s.
- FR-02 The operator shall approve each refund.
- FR-03 The system shall lock the account after three failed logins.
- FR-04 When a payment fails, the system shall keep the cart.
- FR-05 The system shall not store card numbers.
- FR-06 The system shall show the order history to the customer.
- FR-07 The system shall export orders as CSV.

## 4 Quality

- NFR-01 The system shall be available 99.9% of the time.
"""
NEW_EN = """# Shop SRS

## 3 Functional requirements

- FR-01 The system shall send a receipt within 5 s.
- FR-02 The manager shall approve each refund.
- FR-03 The system should lock the account after three failed logins.
- FR-04 The system shall keep the cart.
- FR-05 The system shall store card numbers.
- FR-06 The order history shall be shown to the customer by the system.
- FR-08 The system shall print invoices.

## 5 Operations

- NFR-01 The system shall be available 99.9% of the time.
"""


def _by_id(old: str, new: str):
    result = diff_items(items_from_text(old), items_from_text(new))
    return result, {change.id: change for change in result.changes}


def test_meaning_changes_are_marked_apart_from_rewording_in_english():
    result, changes = _by_id(OLD_EN, NEW_EN)
    kinds = {i: [c.kind for c in changes[i].meaning] for i in changes if changes[i].meaning}
    assert kinds == {
        "FR-01": ["quantity"],
        "FR-02": ["actor"],
        "FR-03": ["modal"],
        "FR-04": ["condition"],
        "FR-05": ["negation"],
    }
    assert changes["FR-06"].status == "changed" and changes["FR-06"].meaning == []  # rewording
    assert (changes["FR-07"].status, changes["FR-08"].status) == ("removed", "added")
    moved = changes["NFR-01"]
    assert (moved.status, moved.moved, moved.old.section[1:], moved.new.section[1:]) == (
        "moved", True, ["4 Quality"], ["5 Operations"],
    )  # fmt: skip
    assert result.counts()["meaning_changed"] == 5


def test_meaning_changes_in_chinese():
    old = "# 书店\n\n## 2 功能需求\n\n- FR-01：系统应在 2 秒内生成订单编号。\n- FR-02：如果支付失败，那么系统应保留购物车。\n- FR-03：系统不得记录银行卡号。\n- FR-04：系统应提供友好的图书搜索界面。\n"
    new = "# 书店\n\n## 2 功能需求\n\n- FR-01：系统应在 5 秒内生成订单编号。\n- FR-02：系统宜保留购物车。\n- FR-03：系统应记录银行卡号。\n- FR-04：系统应提供友好的搜索界面用于图书。\n"
    _, changes = _by_id(old, new)
    assert [c.kind for c in changes["FR-01"].meaning] == ["quantity"]
    assert {c.kind for c in changes["FR-02"].meaning} == {"modal", "condition"}
    assert "negation" in {c.kind for c in changes["FR-03"].meaning}
    assert changes["FR-04"].meaning == []


def test_without_ids_requirements_are_matched_by_similar_text():
    old = "# S\n\n## Reqs\n\nThe system shall e-mail an order confirmation to the customer.\n\nThe system shall log every refund.\n"
    new = "# S\n\n## Reqs\n\nThe system shall log every refund.\n\nThe system shall e-mail an order confirmation to the buyer.\n"
    result, _ = _by_id(old, new)
    [change] = result.changes
    assert (change.status, change.matched_by) == ("changed", "similarity")
    assert result.counts()["unchanged"] == 1


@pytest.fixture
def versions(tmp_path):
    (tmp_path / "old.md").write_text(OLD_EN, encoding="utf-8")
    (tmp_path / "new.md").write_text(NEW_EN, encoding="utf-8")
    return tmp_path


def test_table_json_markdown_and_exit_codes(versions):
    table = reqstudio("diff", "old.md", "new.md", "--lang", "en", cwd=versions)
    assert table.returncode == 0, table.stderr  # differences, but no --exit-code
    assert re.search(r"^changed +FR-01 +meaning +The system", table.stdout, re.MULTILINE)
    assert "The system shall send a receipt within [-2-]{+5+} s." in table.stdout
    assert "number or unit changed: 'within 2 s' -> 'within 5 s'" in table.stdout
    assert "1 added, 1 removed, 6 changed (5 in meaning), 1 moved" in table.stdout

    as_json = reqstudio("diff", "old.md", "new.md", "--json", "--exit-code", cwd=versions)
    assert as_json.returncode == 1
    data = json.loads(as_json.stdout)
    assert data["differs"] is True
    fr01 = next(c for c in data["changes"] if c["id"] == "FR-01")
    assert fr01["meaning_changed"] is True and fr01["meaning"][0]["kind"] == "quantity"
    assert fr01["words"] == [{"op": "replace", "old": "2 ", "new": "5 "}]

    zh = reqstudio("diff", "old.md", "new.md", "--format", "markdown", "--lang", "zh", cwd=versions)
    assert zh.stdout.startswith("| 状态 | 编号 | 变化类别 | 变化 |")
    assert "| 修改 | FR-03 | 含义改变 |" in zh.stdout and "情态动词被减弱" in zh.stdout

    same = reqstudio("diff", "old.md", "old.md", "--exit-code", "--lang", "en", cwd=versions)
    assert (same.returncode, same.stdout.splitlines()[0]) == (0, "No differences.")


def test_a_document_and_its_reqif_export_do_not_differ(versions):
    assert reqstudio("export", "old.md", "--out", "old.reqif", cwd=versions).returncode == 0
    done = reqstudio("diff", "old.md", "old.reqif", "--exit-code", cwd=versions)
    assert done.returncode == 0, done.stdout + done.stderr


def test_bad_input_is_one_line_and_exit_2(versions):
    done = reqstudio("diff", "old.md", "missing.md", "--exit-code", cwd=versions)
    assert (done.returncode, done.stderr.strip()) == (
        2, "reqstudio: diff: NEW: no such file: missing.md",
    )  # fmt: skip
