"""No module of the project above 600 lines outside the tests: a module that long
holds more than one job, and one grew past it unnoticed twice before this test."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 600
SOURCES = ("reqstudio", "benchmarks", "scripts", "app.py")


def line_counts() -> dict[str, int]:
    counts = {}
    for source in SOURCES:
        base = ROOT / source
        for path in [base] if base.is_file() else sorted(base.rglob("*.py")):
            counts[str(path.relative_to(ROOT))] = len(path.read_text(encoding="utf-8").splitlines())
    return counts


def test_the_walk_sees_the_project():
    counts = line_counts()
    assert "app.py" in counts and "reqstudio/check/parse.py" in counts and len(counts) > 150


def test_no_module_above_600_lines():
    too_long = {path: n for path, n in line_counts().items() if n > LIMIT}
    assert not too_long, f"split these into modules with one job each: {too_long}"
