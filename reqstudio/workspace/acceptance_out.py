"""Acceptance tests written out: Gherkin `.feature` files (one per requirement, or one per
section), CSV, JSON, and ReqIF (the requirements and the tests as items of kind `test`, each
test's `verifies` link a SPEC-RELATION), and the traceability matrix requirement <-> test, both
ways, including the requirements without tests and the tests whose requirement is gone."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass

from reqstudio.workspace.acceptance import AcceptanceTest, verifiable
from reqstudio.workspace.items import Item, ItemSet

CSV_COLUMNS = (
    "test_id", "requirement_id", "title", "given", "when", "then", "suspect", "test_uid",
    "requirement_uid",
)  # fmt: skip
_UNSAFE = re.compile(r"[^\w.-]+", re.UNICODE)


def _name(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("_") or "tests"


def _tag(text: str) -> str:
    return "@" + re.sub(r"\s+", "_", text.strip())


def _steps(keyword: str, text: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines() if line.strip()] or [""]
    return [f"    {keyword if n == 0 else 'And'} {line}" for n, line in enumerate(lines)]


def _scenario(test: AcceptanceTest) -> list[str]:
    tags = [_tag(test.id), _tag("verifies:" + test.requirement_id)]
    if test.suspect is not None:
        tags.append("@suspect")
    return [
        "  " + " ".join(tags),
        f"  Scenario: {test.title}",
        *_steps("Given", test.given),
        *_steps("When", test.when),
        *_steps("Then", test.then),
    ]


def _feature(title: str, description: list[str], tests: list[AcceptanceTest]) -> str:
    lines = [f"Feature: {title}"]
    lines += [f"  {line}" for text in description for line in text.splitlines() if line.strip()]
    for test in tests:
        lines += ["", *_scenario(test)]
    return "\n".join(lines) + "\n"


def feature_files(
    tests: list[AcceptanceTest], requirements: list[Item], per: str = "requirement"
) -> dict[str, str]:
    """File name -> Gherkin text: a feature per requirement (its id and text as the feature's
    title and description), or per section (its path as the title)."""
    by_uid = {item.uid: item for item in requirements}
    groups: dict[str, list[AcceptanceTest]] = {}
    for test in tests:
        requirement = by_uid.get(test.requirement_uid)
        section = requirement.section if requirement else test.section
        key = test.requirement_id if per == "requirement" else " / ".join(section[1:]) or "-"
        groups.setdefault(key, []).append(test)
    files: dict[str, str] = {}
    for key, group in groups.items():
        if per == "requirement":
            requirement = by_uid.get(group[0].requirement_uid)
            text = requirement.text if requirement else group[0].verified_text
            first = text.splitlines()[0] if text else ""
            body = _feature(f"{key} {first}".strip(), [text] if "\n" in text else [], group)
        else:
            ids = ", ".join(dict.fromkeys(t.requirement_id for t in group))
            body = _feature(key, [f"Requirements: {ids}"], group)
        name = _name(key) + ".feature"
        number = 2
        while name in files:  # two keys that read the same as file names
            name, number = f"{_name(key)}-{number}.feature", number + 1
        files[name] = body
    return files


def tests_csv(tests: list[AcceptanceTest]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for t in tests:
        writer.writerow([t.id, t.requirement_id, t.title, t.given, t.when, t.then,
                         "yes" if t.suspect else "no", t.uid, t.requirement_uid])  # fmt: skip
    return buffer.getvalue()


def tests_reqif(tests: list[AcceptanceTest], items: list[Item], title: str) -> str:
    """The items and the tests (kind `test`) as one ReqIF file, each test's link to its
    requirement a SPEC-RELATION of the type `verifies`. A test whose requirement is not among
    `items` is left out (its relation would point nowhere)."""
    from reqstudio.workspace.reqif_out import build_reqif

    present = {item.uid for item in items}
    kept = [t.as_item() for t in tests if t.requirement_uid in present]
    return build_reqif(ItemSet([*items, *kept], [], title), title)


# --- the traceability matrix -------------------------------------------------------------


@dataclass
class Matrix:
    """Requirement -> its tests (every verifiable requirement, with or without tests), and
    test -> its requirement (None: the requirement is no longer there)."""

    requirements: list[tuple[Item, list[AcceptanceTest]]]
    tests: list[tuple[AcceptanceTest, Item | None]]

    def counts(self) -> dict[str, int]:
        return {
            "requirements": len(self.requirements),
            "with_tests": sum(1 for _, tests in self.requirements if tests),
            "without_tests": sum(1 for _, tests in self.requirements if not tests),
            "tests": len(self.tests),
            "suspect": sum(1 for test, _ in self.tests if test.suspect is not None),
            "orphaned": sum(1 for _, requirement in self.tests if requirement is None),
        }

    def as_dict(self) -> dict[str, object]:
        return {
            "summary": self.counts(),
            "requirements": [
                {
                    "id": r.id,
                    "uid": r.uid,
                    "kind": r.kind,
                    "text": r.text,
                    "tests": [t.id for t in tests],
                    "suspect_tests": [t.id for t in tests if t.suspect is not None],
                }
                for r, tests in self.requirements
            ],
            "tests": [
                {
                    "id": t.id,
                    "uid": t.uid,
                    "title": t.title,
                    "verifies": r.id if r is not None else None,
                    "requirement_uid": t.requirement_uid,
                    "suspect": t.suspect is not None,
                }
                for t, r in self.tests
            ],
        }


def build_matrix(items: list[Item], tests: list[AcceptanceTest]) -> Matrix:
    requirements = verifiable(items)
    by_uid = {item.uid: item for item in requirements}
    of: dict[str, list[AcceptanceTest]] = {item.uid: [] for item in requirements}
    for test in tests:
        of.setdefault(test.requirement_uid, []).append(test)
    return Matrix(
        [(item, of[item.uid]) for item in requirements],
        [(test, by_uid.get(test.requirement_uid)) for test in tests],
    )


_WORDS = {
    "en": {
        "requirement": "requirement", "tests": "tests", "test": "test", "verifies": "verifies",
        "none": "(none)", "gone": "(requirement gone)", "suspect": "suspect",
        "title": "title",
        "summary": "{requirements} requirements: {with_tests} with tests, {without_tests} "
        "without; {tests} tests, {suspect} suspect, {orphaned} whose requirement is gone",
        "by_requirement": "Requirement -> tests", "by_test": "Test -> requirement",
    },
    "zh": {
        "requirement": "需求", "tests": "测试", "test": "测试", "verifies": "验证",
        "none": "（无）", "gone": "（需求已删除）", "suspect": "可疑", "title": "标题",
        "summary": "需求 {requirements} 条：有测试 {with_tests}，无测试 {without_tests}；"
        "测试 {tests} 个，可疑 {suspect}，需求已删除 {orphaned}",
        "by_requirement": "需求 → 测试", "by_test": "测试 → 需求",
    },
}  # fmt: skip


def _test_names(tests: list[AcceptanceTest], words: dict[str, str]) -> str:
    names = [t.id + (f" ({words['suspect']})" if t.suspect else "") for t in tests]
    return ", ".join(names) or words["none"]


def _rows(matrix: Matrix, words: dict[str, str]) -> tuple[list[tuple], list[tuple]]:
    forward = [(r.id, _test_names(tests, words)) for r, tests in matrix.requirements]
    backward = [
        (t.id, r.id if r is not None else f"{t.requirement_id} {words['gone']}",
         words["suspect"] if t.suspect else "", t.title)
        for t, r in matrix.tests
    ]  # fmt: skip
    return forward, backward


def render_matrix_table(matrix: Matrix, language: str = "en") -> str:
    words = _WORDS[language]
    forward, backward = _rows(matrix, words)
    out = [words["by_requirement"]]
    width = max([len(words["requirement"]), *(len(r[0]) for r in forward)])
    out.append(f"{words['requirement'].ljust(width)}  {words['tests']}")
    out += [f"{rid.ljust(width)}  {names}" for rid, names in forward]
    out += ["", words["by_test"]]
    head = (words["test"], words["verifies"], words["suspect"], words["title"])
    widths = [max([len(head[n]), *(len(str(row[n])) for row in backward)]) for n in range(3)]
    out.append("  ".join(h.ljust(w) for h, w in zip(head, [*widths, 0], strict=True)).rstrip())
    for row in backward:
        out.append("  ".join(str(c).ljust(w) for c, w in zip(row, [*widths, 0], strict=True)))
    out += ["", words["summary"].format(**matrix.counts())]
    return "\n".join(line.rstrip() for line in out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def render_matrix_markdown(matrix: Matrix, language: str = "en") -> str:
    words = _WORDS[language]
    forward, backward = _rows(matrix, words)
    out = [f"## {words['by_requirement']}", "", f"| {words['requirement']} | {words['tests']} |",
           "|---|---|"]  # fmt: skip
    out += [f"| {_cell(rid)} | {_cell(names)} |" for rid, names in forward]
    out += ["", f"## {words['by_test']}", "",
            f"| {words['test']} | {words['verifies']} | {words['suspect']} | {words['title']} |",
            "|---|---|---|---|"]  # fmt: skip
    out += ["| " + " | ".join(_cell(str(c)) for c in row) + " |" for row in backward]
    out += ["", words["summary"].format(**matrix.counts()), ""]
    return "\n".join(out)


def render_matrix_json(matrix: Matrix, project: str) -> str:
    return json.dumps({"project": project, **matrix.as_dict()}, ensure_ascii=False, indent=2)
