"""The rule catalog (`data/rules.toml`) and the word lists it names, compiled to matchers.

A list line is a phrase (whole words, any case; Chinese as written), `phrase !number` (not
when a number follows within two words), `re:PATTERN`, or `-phrase` (an exception: a match
inside it is no finding). See data/README.md for the sources and their licences.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
LANGUAGES = ("en", "zh")

_NUMBER_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "fifteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "hundred",
    "thousand",
    "million",
    "half",
]
_NUMBER_AHEAD = re.compile(
    r"\s*(?:[\w’'-]+\s+){0,2}?(?:\d|(?:" + "|".join(_NUMBER_WORDS) + r")\b)", re.IGNORECASE
)
_ZH_NUMBER_AHEAD = re.compile(r"\s*.{0,2}?[\d一二两三四五六七八九十百千万]")


def has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


@dataclass(frozen=True)
class Rule:
    id: str
    kind: str  # "language" or "structure"
    source: str
    en: str
    zh: str
    lists: tuple[str, ...] = ()
    also: tuple[str, ...] = ()

    def message(self, language: str, **values: object) -> str:
        template = self.zh if language == "zh" else self.en
        return template.format_map({"term": "", "why": "", "count": "", **values})


@dataclass
class WordList:
    """One list compiled: the phrases' matcher, those that a number may follow, exceptions."""

    pattern: re.Pattern[str] | None
    unless_number: frozenset[str] = frozenset()
    exceptions: re.Pattern[str] | None = None
    words: frozenset[str] = field(default_factory=frozenset)  # the plain entries, lowercased

    def matches(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, term) of every match of this list in `text`, exceptions and bounded
        uses left out."""
        if self.pattern is None:
            return []
        excepted = (
            [(m.start(), m.end()) for m in self.exceptions.finditer(text)]
            if self.exceptions
            else []
        )
        found = []
        for match in self.pattern.finditer(text):
            start, end = match.span()
            if any(a <= start and end <= b for a, b in excepted):
                continue
            term = match.group()
            if term.lower() in self.unless_number:
                ahead = _ZH_NUMBER_AHEAD if has_cjk(term) else _NUMBER_AHEAD
                if ahead.match(text, end):
                    continue
            found.append((start, end, term))
        return found


def phrase_pattern(phrase: str) -> str:
    """A phrase as a regular expression: whole words, any spacing; `...` stands for up to
    three words. Chinese phrases (no word boundaries) as written."""
    if has_cjk(phrase):
        return re.escape(phrase)
    parts = [
        r"(?:\s+\S+){0,3}" if word == "..." else r"\s+" + re.escape(word) for word in phrase.split()
    ]
    body = "".join(parts)[3:] if parts[0].startswith(r"\s+") else "".join(parts)
    return r"(?<![\w-])" + body + r"(?![\w-])"


@cache
def catalog() -> dict[str, Rule]:
    """Every rule by id, in the file's order (the order that decides which rule of several on
    one word reports it)."""
    raw = tomllib.loads((DATA / "rules.toml").read_text(encoding="utf-8"))
    return {
        rule_id: Rule(
            id=rule_id,
            kind=entry["kind"],
            source=entry["source"],
            en=entry["en"],
            zh=entry["zh"],
            lists=tuple(entry.get("lists", ())),
            also=tuple(entry.get("also", ())),
        )
        for rule_id, entry in raw.items()
    }


def list_entries(language: str, name: str) -> list[str]:
    """The non-comment lines of data/<language>/<name>.txt ([] when there is no such list)."""
    path = DATA / language / f"{name}.txt"
    if not path.is_file():
        return []
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


@cache
def word_set(language: str, name: str) -> frozenset[str]:
    """A list read as a set of lowercase words (whitespace-separated)."""
    return frozenset(word.lower() for line in list_entries(language, name) for word in line.split())


@cache
def word_list(language: str, name: str, case_sensitive: bool = False) -> WordList:
    phrases: list[str] = []
    exceptions: list[str] = []
    unless_number: set[str] = set()
    for line in list_entries(language, name):
        if line.startswith("re:"):
            phrases.append(line[3:])
        elif line.startswith("-"):
            exceptions.append(phrase_pattern(line[1:].strip()))
        else:
            phrase = line
            if phrase.endswith("!number"):
                phrase = phrase[: -len("!number")].strip()
                unless_number.add(phrase.lower())
            phrases.append(phrase_pattern(phrase))
    flags = 0 if case_sensitive else re.IGNORECASE
    if not phrases:
        return WordList(
            pattern=None,
            exceptions=re.compile("|".join(f"(?:{p})" for p in exceptions), flags)
            if exceptions
            else None,
        )
    # longest first, so "as much as possible" wins over "as possible"
    phrases.sort(key=len, reverse=True)
    return WordList(
        pattern=re.compile("|".join(f"(?:{p})" for p in phrases), flags),
        unless_number=frozenset(unless_number),
        exceptions=re.compile("|".join(f"(?:{p})" for p in exceptions), flags)
        if exceptions
        else None,
        words=frozenset(p.lower() for p in list_entries(language, name)),
    )
