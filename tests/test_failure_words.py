"""Engines and the core carry failures and notices as codes and values: the words a user reads
come from the catalogue in the reader's language when they are shown or written. So no event,
engine record or error keeps a Chinese copy of its words (a field, attribute or parameter named
`*_zh`), and no module picks a language by `startswith("zh")` outside the catalogue's own
lookup (reqstudio/messages.py). JSON writers keep their `*_zh` keys as dict keys or as
properties the catalogue fills when the JSON is written; those are not names this scan finds.
The checker (reqstudio/check) is scanned by its own tests."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "reqstudio"
CATALOGUE_MODULE = PACKAGE / "messages.py"


def scanned() -> list[Path]:
    return sorted([*PACKAGE.glob("*.py"), *(PACKAGE / "modes").rglob("*.py")])


def chinese_copies(path: Path, root: Path = ROOT) -> list[str]:
    """`path:line name` of each field, attribute or parameter named `*_zh`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[tuple[int, str]] = []
        if isinstance(node, ast.ClassDef):
            names += [
                (item.lineno, item.target.id)
                for item in node.body
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
            ]
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.append((node.lineno, node.attr))
        elif isinstance(node, ast.arg):
            names.append((node.lineno, node.arg))
        found += [
            f"{path.relative_to(root)}:{line} {name}"
            for line, name in names
            if name.endswith("_zh")
        ]
    return found


def language_branches(path: Path, root: Path = ROOT) -> list[str]:
    """`path:line` of each `….startswith("zh")` and each comparison with "zh" or "en"
    (`language == "zh"`, `lang() != "en"`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        starts_with = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "startswith"
            and any(isinstance(a, ast.Constant) and a.value == "zh" for a in node.args)
        )
        compares = isinstance(node, ast.Compare) and any(
            isinstance(side, ast.Constant) and side.value in ("zh", "en")
            for side in (node.left, *node.comparators)
        )
        if starts_with or compares:
            found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_no_event_record_or_error_keeps_a_chinese_copy_of_its_words():
    assert [hit for path in scanned() for hit in chinese_copies(path)] == []


def test_no_language_branch_outside_the_catalogue():
    # the engines, the core and the browser's code; the checker reads the language of the
    # requirement's text (Chinese or English rules), which is not the reader's
    web = sorted((PACKAGE / "web").rglob("*.py"))
    paths = [p for p in [*scanned(), *web] if p != CATALOGUE_MODULE]
    assert [hit for path in paths for hit in language_branches(path)] == []


def test_the_scans_find_what_they_look_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "class Failed:\n"
        "    message: str\n"
        "    message_zh: str = ''\n"
        "def said(reason_zh):\n"
        "    if lang.startswith('zh'):\n"
        "        self.reason_zh = reason_zh\n"
        "    return 'a' if language == 'zh' else 'b'\n",
        encoding="utf-8",
    )
    assert sorted(chinese_copies(sample, tmp_path)) == [
        "sample.py:3 message_zh",
        "sample.py:4 reason_zh",
        "sample.py:6 reason_zh",
    ]
    assert language_branches(sample, tmp_path) == ["sample.py:5", "sample.py:7"]


def test_a_recorded_reason_is_written_in_chinese_from_the_catalogue():
    from reqstudio.failures import Failure, FailureCode, render
    from reqstudio.modes.rewrite.models import PatchFailure

    failure = Failure(FailureCode.REWRITE_LENGTH)
    patch = PatchFailure(
        section_id="sec-01", title="Scope", reason=render(failure, "en"), failure=failure.as_dict()
    )
    data = patch.model_dump(mode="json")
    assert data["reason"] == render(failure, "en")
    assert data["reason_zh"] == render(failure, "zh") != data["reason"]
    # read back (a checkpoint, a resumed run) and written again: the same words
    again = PatchFailure.model_validate(data)
    assert again.model_dump(mode="json")["reason_zh"] == data["reason_zh"]
