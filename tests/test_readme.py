"""The documentation's configuration table and worst-case waits say what the code does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import AliasChoices

from reqstudio import model_roles
from reqstudio.calls import policy_for
from reqstudio.settings import Settings, load_settings

DOCS = Path(__file__).resolve().parent.parent / "docs"


def table_rows(page: str) -> dict[str, list[str]]:
    """The rows of the first table on the docs page `page`, keyed by their first cell."""
    section = (DOCS / page).read_text(encoding="utf-8")
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0]] = cells[1:]
        elif rows:
            break
    return rows


def test_every_setting_is_in_the_configuration_table():
    rows = table_rows("configuration.md")
    names = {
        field.validation_alias.choices[0]
        for field in Settings.model_fields.values()
        if isinstance(field.validation_alias, AliasChoices)
        and field.validation_alias.choices[0].isupper()
    }
    missing = sorted(name for name in names if f"`{name}`" not in rows)
    assert missing == []


def test_the_temperature_rows_are_the_modes_declarations():
    # Each temperature variable is declared with its role by the mode that owns it
    # (reqstudio/modes/<mode>/roles.py); its row in the table is that declaration's.
    lines = (DOCS / "configuration.md").read_text(encoding="utf-8").splitlines()
    declared = model_roles.declared().temperatures.values()
    assert len(declared) >= 9
    assert [t.docs_row() for t in declared if t.docs_row() not in lines] == []


@pytest.mark.parametrize(
    ("row", "role"),
    [
        ("Chat", "chat"),
        ("ReqParse, ReqExplore, ReqClarify (each call)", "ReqParse"),
        ("ReqParse, ReqExplore, ReqClarify (each call)", "ReqExplore"),
        ("ReqParse, ReqExplore, ReqClarify (each call)", "ReqClarify"),
        ("DocGenerate", "DocGenerate"),
        ("SRS evaluation", "evaluation"),
    ],
)
def test_the_worst_case_waits_are_the_policies(row, role):
    tries, waits, worst = table_rows("waits-and-retries.md")[row]
    policy = policy_for(role, load_settings(OPENAI_API_KEY="sk-x"))  # defaults: 60 s timeout
    assert int(tries) == policy.attempts
    assert [float(w) for w in re.findall(r"[\d.]+", waits)] == [
        policy.wait_before(n) for n in range(2, policy.attempts + 1)
    ]
    assert float(re.match(r"[\d.]+", worst).group()) == policy.worst_case_seconds(60)
