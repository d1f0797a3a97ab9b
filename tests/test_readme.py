"""The README's configuration table and worst-case waits say what the code does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import AliasChoices

from reqstudio.calls import policy_for
from reqstudio.settings import Settings, load_settings

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def table_rows(heading: str) -> dict[str, list[str]]:
    """The rows of the first table under `heading`, keyed by their first cell."""
    section = README.split(heading, 1)[1]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0]] = cells[1:]
        elif rows:
            break
    return rows


def test_every_setting_is_in_the_configuration_table():
    rows = table_rows("## Configuration")
    names = {
        field.validation_alias.choices[0]
        for field in Settings.model_fields.values()
        if isinstance(field.validation_alias, AliasChoices)
        and field.validation_alias.choices[0].isupper()
    }
    missing = sorted(name for name in names if f"`{name}`" not in rows)
    assert missing == []


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
    tries, waits, worst = table_rows("## Waits and retries")[row]
    policy = policy_for(role, load_settings(OPENAI_API_KEY="sk-x"))  # defaults: 60 s timeout
    assert int(tries) == policy.attempts
    assert [float(w) for w in re.findall(r"[\d.]+", waits)] == [
        policy.wait_before(n) for n in range(2, policy.attempts + 1)
    ]
    assert float(re.match(r"[\d.]+", worst).group()) == policy.worst_case_seconds(60)
