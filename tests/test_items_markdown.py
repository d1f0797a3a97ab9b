"""A ReqIF file given to a mode as a document: its items written as Markdown are read back by
the document parser with the same requirement ids, under the same sections."""

from __future__ import annotations

from pathlib import Path

import pytest

from reqstudio.workspace.items import items_from_text
from reqstudio.workspace.items_markdown import items_markdown
from reqstudio.workspace.loading import load_items

SAMPLES = Path(__file__).resolve().parent / "data" / "reqif" / "samples"


def requirements(item_set) -> list[str]:
    # ids only: a requirement that follows a nested section in its parent (StrictDoc allows
    # it) has no Markdown of its own to return to the parent, and reads as the nested one's
    return [i.id for i in item_set.items if i.kind not in ("heading", "information")]


@pytest.mark.parametrize(
    "name", ["strictdoc.reqif", "enterprise-architect-8.reqif", "polarion.reqif"]
)
def test_a_reqif_file_as_markdown_keeps_its_requirement_ids(name):
    item_set = load_items(SAMPLES / name)
    back = items_from_text(items_markdown(item_set, Path(name).stem))
    assert requirements(back) == requirements(item_set)
    assert requirements(back)  # the sample has requirements with ids


def test_a_requirement_of_several_lines_stays_one_requirement():
    source = items_from_text("# Spec\n\n## Booking\n\n- REQ-1 The system shall book a visit.\n")
    source.items[-1].text = "The system shall book a visit.\nIt shall confirm it by e-mail."
    markdown = items_markdown(source)
    assert "- REQ-1 The system shall book a visit.\n  It shall confirm it by e-mail." in markdown
    assert [i.id for i in items_from_text(markdown).items if i.kind != "heading"] == ["REQ-1"]
