"""The message catalogue (reqstudio/locales/*.toml, reqstudio/messages.py): every key in every language,
the same placeholders in each, and every key the code names present."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

from reqstudio import messages

ROOT = Path(__file__).resolve().parent.parent
CODE = [*sorted((ROOT / "reqstudio" / "web").rglob("*.py")), ROOT / "app.py"]


def placeholders(message: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(message) if name is not None}


def differences(first: dict[str, str], second: dict[str, str]) -> list[str]:
    """Keys one language has and the other lacks, and keys whose placeholders differ."""
    problems = [f"only in the first: {key}" for key in first.keys() - second.keys()]
    problems += [f"only in the second: {key}" for key in second.keys() - first.keys()]
    problems += [
        f"placeholders differ: {key}"
        for key in first.keys() & second.keys()
        if placeholders(first[key]) != placeholders(second[key])
    ]
    return sorted(problems)


def test_every_key_is_in_both_languages_with_the_same_placeholders():
    english, chinese = messages.catalog("en"), messages.catalog("zh")
    assert len(english) > 300
    assert differences(english, chinese) == []


def test_a_key_missing_in_one_language_is_reported():
    english = {"a.b": "Hello {name}", "a.c": "Bye"}
    assert differences(english, {"a.b": "你好 {name}"}) == ["only in the first: a.c"]
    assert differences(english, {"a.b": "你好", "a.c": "再见"}) == ["placeholders differ: a.b"]


def test_lookup_formats_and_accepts_locale_names():
    assert messages.text("review.step_round", "zh-CN", round=2) == "审阅 · 第 2 轮"
    assert messages.text("review.step_round", "en", round=2) == "Review · round 2"
    assert messages.both("review.red_team") == {"zh": "红队", "en": "Red team"}
    with pytest.raises(KeyError):
        messages.text("review.no_such_key", "en")


def catalog_names(tree: ast.Module) -> dict[str, str]:
    """`tr = Catalog("review")` → {"tr": "review"} (module level and class attributes)."""
    names = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", None) == "Catalog"
            and isinstance(node.value.args[0], ast.Constant)
        ):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node.value.args[0].value
    return names


def imported_catalogs(tree: ast.Module, known: dict[str, dict[str, str]]) -> dict[str, str]:
    """Catalogs a module imports from another (`from ui.review.texts import tr`)."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in known:
            for alias in node.names:
                if alias.name in known[node.module]:
                    names[alias.asname or alias.name] = known[node.module][alias.name]
    return names


def lookups_imported(tree: ast.Module) -> set[str]:
    """The names `text` and `both` where the module imports them from reqstudio.messages."""
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "reqstudio.messages"
        for alias in node.names
        if alias.name in ("text", "both")
    }


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def used_keys() -> list[tuple[str, str]]:
    """(where, key) for every literal key the code looks up: `tr("key")`, `tr.get("key", …)`,
    `text("ns.key", …)`, `both("ns.key")`, and a mode's `catalog_texts("ns")` or `catalog_mode("Ns")`; an f-string key
    counts by its constant start (`tr(f"status_{s}")` needs some `review.status_…`)."""
    trees = {module_name(p): ast.parse(p.read_text(encoding="utf-8")) for p in CODE}
    own = {name: catalog_names(tree) for name, tree in trees.items()}
    found = []
    for name, tree in trees.items():
        catalogs = {**imported_catalogs(tree, own), **own[name]}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func, first = node.func, node.args[0]
            if isinstance(func, ast.Attribute) and func.attr == "get":
                prefix = catalogs.get(getattr(func.value, "id", None))
                if prefix is None:
                    continue
            elif isinstance(func, ast.Name) and func.id in catalogs:
                prefix = catalogs[func.id]
            elif isinstance(func, ast.Name) and func.id in lookups_imported(tree):
                prefix = ""
            elif isinstance(func, ast.Name) and func.id == "catalog_texts":
                if isinstance(first, ast.Constant):
                    found.append((name, f"{first.value}.mode.title"))
                continue
            elif isinstance(func, ast.Name) and func.id == "catalog_mode":
                if isinstance(first, ast.Constant):  # the texts under the id in lower case
                    found.append((name, f"{first.value.lower()}.mode.title"))
                continue
            else:
                continue
            where = f"{name}:{node.lineno}"
            dot = f"{prefix}." if prefix else ""
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append((where, f"{dot}{first.value}"))
            elif isinstance(first, ast.JoinedStr) and isinstance(first.values[0], ast.Constant):
                found.append((where, f"{dot}{first.values[0].value}*"))
    return found


def test_every_key_the_code_names_is_in_the_catalogue():
    keys = messages.catalog("en")
    used = used_keys()
    assert len(used) > 200  # the scan found the lookups
    missing = [
        (where, key)
        for where, key in used
        if not (any(k.startswith(key[:-1]) for k in keys) if key.endswith("*") else key in keys)
    ]
    assert missing == []


# Where the rule against inline translation tables holds: the UI, the engines, the checker and
# the core (reqstudio/*.py), besides the catalogue's own module.
RULED = [
    *CODE,
    *sorted((ROOT / "reqstudio" / "modes").rglob("*.py")),
    *sorted((ROOT / "reqstudio" / "check").rglob("*.py")),
    *(p for p in sorted((ROOT / "reqstudio").glob("*.py")) if p.name != "messages.py"),
]

# Tables still to move into the catalogue (none of them a failure): the list may only shrink.
NOT_YET_MOVED = {
    "reqstudio/check/trace.py",  # headings the checker recognises in a document (data to match)
}


_CJK = re.compile(r"[\u4e00-\u9fff]")


def _pair(node: ast.expr | None) -> bool:
    """("modal verb", "情态动词"): an English text and its Chinese one, as a tuple literal."""
    return (
        isinstance(node, ast.Tuple)
        and len(node.elts) == 2
        and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
        and not _CJK.search(node.elts[0].value)
        and bool(_CJK.search(node.elts[1].value))
    )


def bilingual_tables(paths: list[Path]) -> list[str]:
    """`path:line` of every `{"zh": …, "en": …}` dict literal, and of every dict whose values
    are two or more (English, Chinese) pairs (`{"modal": ("modal verb", "情态动词"), …}`)."""
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict):
                keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
                pairs = sum(1 for value in node.values if _pair(value))
                if {"zh", "en"} <= keys or pairs >= 2:
                    found.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}")
    return found


def test_no_bilingual_table_is_left_in_the_ui_code():
    """UI text lives in the catalogue: no `{"zh": …, "en": …}` dict literal in reqstudio/web/ or app.py."""
    assert bilingual_tables(CODE) == []


def test_no_bilingual_table_is_in_the_engines_the_checker_or_the_core():
    """The same rule for reqstudio/modes, reqstudio/check and reqstudio/*.py: what is left is
    the known list, and a file moved to the catalogue leaves it."""
    found = {where.split(":")[0] for where in bilingual_tables(RULED)}
    assert found - NOT_YET_MOVED == set()  # a new table
    assert NOT_YET_MOVED - found == set()  # moved: take it off the list


def test_a_bilingual_table_is_found():
    path = ROOT / "tests" / "data" / "bilingual_table.py"
    assert bilingual_tables([path]) == [
        "tests/data/bilingual_table.py:3",
        "tests/data/bilingual_table.py:5",
    ]


def test_every_failure_code_is_said_in_every_language_from_the_catalogue():
    from reqstudio.failures import Failure, FailureCode, catalogue_key

    for language in messages.LOCALES:
        keys = messages.catalog(language)
        missing = [
            code
            for code in FailureCode
            if code is not FailureCode.NOT_A_DOCUMENT and catalogue_key(Failure(code)) not in keys
        ]
        assert missing == [], language
    failure = Failure(FailureCode.RUN_BUSY, {"seconds": 7})
    assert failure.text("zh-CN").endswith("约 7 秒后可以在这里继续运行。")
    assert failure.text("en").endswith("resumed here in about 7 s.")
    assert Failure.from_dict(failure.as_dict()) == failure


def test_failures_carry_codes_not_sentences_in_both_languages():
    """No error class takes its message twice (`message_zh`, `reason_zh`): BilingualError is
    gone, and the document, decision and lease errors carry a failure."""
    assert not (ROOT / "reqstudio" / "bilingual.py").exists()
    sources = [p for p in RULED if p.parts[-2] != "web"]
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                getattr(b, "id", "").endswith(("Error", "Exception")) for b in node.bases
            ):
                for item in ast.walk(node):
                    if isinstance(item, ast.arg):
                        assert item.arg not in ("message_zh", "message_en"), (path, node.name)
