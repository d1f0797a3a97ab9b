"""Generated documents as .docx: headings, lists and tables survive."""

from __future__ import annotations

import io

import docx

from reqstudio.export import docx_name, markdown_to_docx

SRS = """# 图书馆借阅系统 软件需求规格说明

## 1. 引言

本文档描述借阅系统的需求。

### 1.1 目的

- 读者可在线预约图书
- 馆员可管理借还

1. 第一步：登录
2. 第二步：检索

## 2. 功能需求

| 编号 | 需求 | 优先级 |
| --- | --- | --- |
| FR-1 | 系统应允许读者预约图书 | 高 |
| FR-2 | The system shall send a reminder 3 days before the due date | Medium |
"""


def test_headings_lists_and_tables_are_kept():
    document = docx.Document(io.BytesIO(markdown_to_docx(SRS)))
    headings = [
        (p.style.name, p.text) for p in document.paragraphs if p.style.name.startswith("Heading")
    ]
    assert headings == [
        ("Heading 1", "图书馆借阅系统 软件需求规格说明"),
        ("Heading 2", "1. 引言"),
        ("Heading 3", "1.1 目的"),
        ("Heading 2", "2. 功能需求"),
    ]
    texts = [p.text for p in document.paragraphs]
    assert "读者可在线预约图书" in texts and "第二步：检索" in texts
    # list items are Word list paragraphs (numbering properties), not plain text with dashes
    listed = [p for p in document.paragraphs if p._p.pPr is not None and p._p.pPr.numPr is not None]
    assert {p.text for p in listed} >= {"读者可在线预约图书", "馆员可管理借还", "第一步：登录"}
    [table] = document.tables
    rows = [[cell.text for cell in row.cells] for row in table.rows]
    assert rows[0] == ["编号", "需求", "优先级"]
    assert rows[2] == [
        "FR-2",
        "The system shall send a reminder 3 days before the due date",
        "Medium",
    ]


def test_docx_names():
    assert docx_name("srs.md") == "srs.docx"
    assert docx_name("improved.MD") == "improved.docx"
    assert docx_name("notes") == "notes.docx"


def test_a_conversion_that_does_not_end_is_cut_at_its_bound(tmp_path, monkeypatch):
    """Pandoc is a child process: one that hangs is killed at the bound and reported in one
    line (the Markdown is still offered), never waited for without end."""
    import time

    import pypandoc
    import pytest

    from reqstudio.export import ExportError

    hanging = tmp_path / "pandoc"
    hanging.write_text("#!/bin/sh\nexec sleep 30\n")
    hanging.chmod(0o755)
    monkeypatch.setattr(pypandoc, "get_pandoc_path", lambda: str(hanging))
    started = time.monotonic()
    with pytest.raises(ExportError, match=r"^cannot write the \.docx: pandoc took over 0\.5 s$"):
        markdown_to_docx(SRS, timeout=0.5)
    assert time.monotonic() - started < 5
