"""(Re)build the benchmark's cases (`cases/pure/`) from PURE requirements documents.

Each document becomes a case folder: `reference.md` is the document itself (copied byte for
byte), `input.md` is the document's own Introduction section (its purpose and scope, as the
authors wrote them: the kind of text a user starts from), cut where the next top-level
section begins. `split.json` keeps its assignments; a document it does not name yet goes to
"dev" or "held-out" by the parity of its name's SHA-256, so adding documents never moves the
ones already there.

    .venv/bin/python scripts/build_pure_cases.py                       # the vendored documents
    .venv/bin/python scripts/build_pure_cases.py --source path/to/req_md --out cases/pure

A source is a Markdown conversion `<name>.md` (e.g. `2003 - agentmom.pdf.md` as in
denghuinow/srs-docs `resources/req_md/`), a folder holding `reference.md`, or a folder of
either. A document without a recognisable Introduction is skipped and named on stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCES = (
    ROOT / "tests" / "data" / "pure",
    ROOT / "tests" / "data" / "check" / "2010-blit-draft.md",
)
DEFAULT_OUT = ROOT / "cases" / "pure"
SPLITS = ("dev", "held-out")
MIN_LETTERS = 200  # an Introduction with fewer letters is a table-of-contents entry
MAX_CHARS = 8000  # an introduction longer than this is cut at a paragraph end

# The opening section, alone on its line, in the order tried: "Introduction", "1 Introduction",
# "1.0 Introduction", "1Introduction", "### 1\\. Introduction", "3. Introduction and Scope",
# "Document Introduction"; failing that, a section numbered 1 called Overview, Scope or
# Purpose ("1.0 SCOPE", "1. Overview", "1. Scope and Method"). A
# table-of-contents line carries its page number or dot leaders on the same line, so it does
# not match.
_HEADING = r"^\s*(?:#+\s*)?(?:\*\*)?{number}(?:\*\*)?(?:{title})(?:\*\*)?\s*$"
_NUMBER = r"(?:(?P<n>{digits})(?:\.0)?\\?\.?\s*)"
_OPENINGS = (
    re.compile(
        _HEADING.format(
            number=_NUMBER.format(digits=r"\d") + "?",
            title=r"(?:document\s+)?introduction(?:\s+and\s+scope)?",
        ),
        re.IGNORECASE,
    ),
    re.compile(
        _HEADING.format(
            number=_NUMBER.format(digits="1"), title=r"overview|scope(?:\s+and\s+method)?|purpose"
        ),
        re.IGNORECASE,
    ),
)
# the table of contents' second top-level entry: "2.    Overall Description    6",
# "2 Overall Description....... 4", "2 Specific Requirements"
_TOC_SECOND = re.compile(r"^\s*2\.?\s+([A-Za-z][A-Za-z ,&/()-]*?)[\s.]*(?:\d+)?\s*$")


def _next_section(number: int) -> re.Pattern[str]:
    """The heading of the top-level section after the opening one: "2 Overall Description",
    "2.0 General", "### 2\\. Scope"."""
    return re.compile(
        rf"^\s*(?:#+\s*)?(?:\*\*)?{number}(?:\.0)?\\?\.?\s+[A-Z][A-Za-z ,&/()-]+(?:\*\*)?\s*$"
    )


def case_name(path: Path) -> str:
    """`2003 - agentmom.pdf.md` -> `2003-agentmom-pdf`; a case folder keeps its name."""
    stem = path.name[: -len(".md")] if path.name.endswith(".md") else path.name
    return re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")


def _letters(lines: list[str]) -> int:
    return sum(ch.isalpha() for line in lines for ch in line)


def _normalise(title: str) -> str:
    return re.sub(r"[^a-z]+", " ", title.lower()).strip()


def _ends_section(line: str, second_title: str | None, after: re.Pattern[str]) -> bool:
    if second_title is not None:
        text = re.sub(r"^\s*2\.?\s+", "", line)
        return _normalise(text) == second_title
    return bool(after.match(line))


def introduction_of(text: str) -> str | None:
    """The document's opening section (its Introduction, else a first section called
    Overview, Scope or Purpose) without its heading; None when none is found."""
    lines = text.splitlines()
    second_title = None
    for line in lines:
        found = _TOC_SECOND.match(line)
        if found and _normalise(found.group(1)):
            second_title = _normalise(found.group(1))
            break
    running = _running_lines(lines)
    for opening in _OPENINGS:
        for start, line in enumerate(lines):
            heading = opening.match(line)
            if not heading:
                continue
            number = int(heading.group("n") or 1)
            after = _next_section(number + 1)
            end = next(
                (
                    i
                    for i in range(start + 1, len(lines))
                    if _ends_section(lines[i], second_title if number == 1 else None, after)
                ),
                len(lines),
            )
            body = lines[start + 1 : end]
            if _letters(body) >= MIN_LETTERS:
                return _tidy(body, running)
    return None


def _running_lines(lines: list[str]) -> set[str]:
    """Page furniture of a converted PDF: lone page numbers, "Page 6 of 12", and short lines
    that come back on three or more pages (running headers and footers)."""
    counts: dict[str, int] = {}
    for line in lines:
        key = line.strip().lower()
        if 0 < len(key) <= 40:
            counts[key] = counts.get(key, 0) + 1
    return {key for key, count in counts.items() if count >= 3}


_PAGE_FURNITURE = re.compile(r"^\s*(\d+|page \d+ of \d+)\s*$", re.IGNORECASE)


def _tidy(lines: list[str], running: set[str]) -> str:
    lines = [
        line
        for line in lines
        if not _PAGE_FURNITURE.match(line) and line.strip().lower() not in running
    ]
    text = "\n".join(line.rstrip() for line in lines)
    text = re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
    if len(text) > MAX_CHARS:
        cut = text.rfind("\n\n", 0, MAX_CHARS)
        text = text[: cut if cut > 0 else MAX_CHARS].rstrip() + "\n"
    return text


def documents(sources: list[Path]) -> dict[str, Path]:
    """case name -> the document's file, from every source."""
    found: dict[str, Path] = {}
    for source in sources:
        if source.is_file():
            found[case_name(source)] = source
        elif (source / "reference.md").is_file():
            found[case_name(source)] = source / "reference.md"
        elif source.is_dir():
            for child in sorted(source.iterdir()):
                if child.is_dir() and (child / "reference.md").is_file():
                    found[case_name(child)] = child / "reference.md"
                elif child.suffix == ".md" and child.name.lower() != "readme.md":
                    found[case_name(child)] = child
        else:
            raise SystemExit(f"build_pure_cases: no such file or folder: {source}")
    return found


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assign_split(name: str) -> str:
    return SPLITS[int(hashlib.sha256(name.encode()).hexdigest(), 16) % 2]


def build(sources: list[Path], out: Path) -> dict[str, list[str]]:
    """Write a case folder per document under `out` and `out/split.json`; the splits."""
    split_file = out / "split.json"
    splits: dict[str, list[str]] = {name: [] for name in SPLITS}
    if split_file.is_file():
        splits.update(json.loads(split_file.read_text(encoding="utf-8"))["splits"])
    assigned = {name: split for split, names in splits.items() for name in names}
    # a document already there under another name (`2010-blit-draft` for
    # `2010 - blit draft.pdf.md`) keeps that name, and so its split
    shipped = {_digest(ref): ref.parent.name for ref in sorted(out.glob("*/reference.md"))}
    for name, path in sorted(documents(sources).items()):
        name = shipped.get(_digest(path), name)
        text = path.read_text(encoding="utf-8")
        introduction = introduction_of(text)
        if introduction is None:
            print(
                f"build_pure_cases: {path}: no Introduction section found; skipped", file=sys.stderr
            )
            continue
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, folder / "reference.md")
        (folder / "input.md").write_text(introduction, encoding="utf-8")
        if name not in assigned:
            assigned[name] = assign_split(name)
            splits.setdefault(assigned[name], []).append(name)
    splits = {split: sorted(names) for split, names in splits.items()}
    split_file.write_text(
        json.dumps(
            {
                "note": "held-out: never read while writing or tuning prompts; report it apart",
                "splits": splits,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    return splits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--source", type=Path, action="append", help="default: the vendored PURE documents"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    splits = build(args.source or list(DEFAULT_SOURCES), args.out)
    for split, names in splits.items():
        print(f"{split}: {len(names)} cases: {', '.join(names)}")


if __name__ == "__main__":
    main()
