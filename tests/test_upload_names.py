"""Uploaded file names are made safe before they touch the disk: base name only, no control
characters, short enough for the file system, extension kept (a 300-character name
or a NUL in it made the SRS turn fail with OSError 36 / ValueError)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reqstudio.modes.srs.documents import MAX_NAME_BYTES, display_name, load_reference


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("需" * 300 + ".md", ".md"),
        ("a" * 300 + ".txt", ".txt"),
        ("x" * 400, ""),
        ("规格\x00说明.md", "规格说明.md"),
        ("../../etc/pass\x1fwd.md", "passwd.md"),
        ("\x00\x00", "file"),
    ],
)
def test_a_hostile_upload_name_is_stored_and_read_under_a_safe_one(
    tmp_path: Path, given: str, kept: str
):
    name = display_name(given)
    assert name.endswith(kept)
    assert len(name.encode()) <= MAX_NAME_BYTES
    assert "/" not in name and all(char.isprintable() for char in name)
    # As the app stores it: an id of 36 characters, a dash, the name.
    stored = tmp_path / f"{'0' * 36}-{name}"
    stored.write_text("# 规格\n\n系统应在两秒内返回搜索结果。\n", encoding="utf-8")
    if name.endswith((".md", ".txt")):
        assert "两秒" in load_reference(stored, given).text


def test_ordinary_names_are_unchanged():
    assert display_name("电商平台需求.docx") == "电商平台需求.docx"
    assert display_name("C:\\Users\\me\\srs v2.pdf") == "srs v2.pdf"
