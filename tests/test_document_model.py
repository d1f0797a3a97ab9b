"""The document model shared by Review and Rewrite: Markdown in and out without loss."""

from __future__ import annotations

from pathlib import Path

import pytest

from reqstudio.document_model import DocumentSection, DocumentStructure, parse_markdown
from tests.pure_documents import DOCUMENTS as PURE_DOCUMENTS

LOCAL_DOCUMENTS = sorted((Path(__file__).parent / "data" / "srs").glob("*/*.md"))


@pytest.mark.parametrize(
    "path", PURE_DOCUMENTS + LOCAL_DOCUMENTS, ids=lambda p: p.parent.name + "/" + p.name
)
def test_untouched_document_round_trips_byte_for_byte(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    document = parse_markdown(text)
    assert document.to_markdown() == text
    assert len(document.sections) >= 1


def test_pure_documents_are_available() -> None:
    # The round-trip test above must not silently run on nothing.
    assert [path for path in PURE_DOCUMENTS if not path.is_file()] == []
    assert LOCAL_DOCUMENTS


SAMPLE = """# 图书馆借阅系统 SRS

引言段落。

## 1 引言

目的与范围。

```python
# 这不是标题
```

## 2 功能需求

### 2.1 借阅

读者可借书。
"""


def test_sections_follow_headings_not_hashes_in_code() -> None:
    document = parse_markdown(SAMPLE)
    assert document.title == "图书馆借阅系统 SRS"
    # The text under the title is a section of its own so that reviewers can address it.
    assert [s.title for s in document.sections] == [
        "图书馆借阅系统 SRS", "1 引言", "2 功能需求", "2.1 借阅"
    ]  # fmt: skip
    assert document.sections[0].content == "\n引言段落。\n\n"
    assert [s.level for s in document.sections[1:]] == [2, 2, 3]
    assert [s.id for s in document.sections] == ["sec-01", "sec-02", "sec-03", "sec-04"]
    assert "# 这不是标题" in document.sections[1].content
    assert document.sections[1].agent_id == "sec-02"


def test_changing_one_section_keeps_every_other_byte() -> None:
    document = parse_markdown(SAMPLE)
    revised = document.with_content("sec-03", "新的功能需求概述。")
    text = revised.to_markdown()
    assert "新的功能需求概述。\n\n### 2.1 借阅" in text
    before = SAMPLE.split("## 2 功能需求")[0]
    assert text.startswith(before + "## 2 功能需求\n")
    assert text.endswith("### 2.1 借阅\n\n读者可借书。\n")
    assert document.to_markdown() == SAMPLE  # the original is untouched


def test_unknown_section_id_is_an_error() -> None:
    with pytest.raises(KeyError):
        parse_markdown(SAMPLE).with_content("sec-99", "x")


def test_document_without_headings_is_one_section_and_round_trips() -> None:
    text = "Just a paragraph.\nAnother line.\n"
    document = parse_markdown(text, default_title="Notes")
    assert document.title == "Notes"
    assert len(document.sections) == 1
    assert document.to_markdown() == text


def test_generated_document_renders_from_levels_and_titles() -> None:
    document = DocumentStructure(
        title="Rewrite",
        sections=[
            DocumentSection(
                id="sec-01", title="Scope", content="What it covers.", level=2, order=0, goal="g"
            ),
            DocumentSection(id="sec-02", title="Users", content="", level=3, order=1, goal="g"),
        ],
    )
    assert document.to_markdown() == "# Rewrite\n\n## Scope\n\nWhat it covers.\n\n### Users\n\n"
    reparsed = parse_markdown(document.to_markdown())
    assert [s.title for s in reparsed.sections] == ["Scope", "Users"]
