"""The rule catalog (`data/rules.toml`) and the word lists it names, compiled to matchers.

A list line is a phrase (whole words, any case; Chinese as written), `phrase !number` (not
when a number follows within two words), `re:PATTERN`, or `-phrase` (an exception: a match
inside it is no finding). See data/README.md for the sources and their licences.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache, lru_cache
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

    unless_number: frozenset[str] = frozenset()
    exception_patterns: tuple[str, ...] = ()  # a match inside one of them is no finding
    words: frozenset[str] = field(default_factory=frozenset)  # the plain entries, lowercased
    # The phrases' patterns, longest first, and what a text must hold for each to match
    # (`phrase_key`): the phrases by their key word, by their key substring, and those with
    # none (`re:` entries), which are always tried.
    alternatives: tuple[str, ...] = ()
    by_word: dict[str, tuple[int, ...]] = field(default_factory=dict)
    by_substring: dict[str, tuple[int, ...]] = field(default_factory=dict)
    always: tuple[int, ...] = ()
    case_sensitive: bool = False

    @property
    def pattern(self) -> re.Pattern[str] | None:
        """Every phrase, longest first (so "as much as possible" wins over "as possible")."""
        return _alternation(self.alternatives, self.flags) if self.alternatives else None

    @property
    def exceptions(self) -> re.Pattern[str] | None:
        if not self.exception_patterns:
            return None
        return _alternation(self.exception_patterns, self.flags)

    @property
    def flags(self) -> int:
        return 0 if self.case_sensitive else re.IGNORECASE

    def matcher(self, text: str) -> re.Pattern[str] | None:
        """`pattern` with only the phrases that can match in `text` (None: none can). A scan
        tries every phrase at every position, so most of a long list costs time on a
        requirement that holds none of its words; dropping a phrase that cannot match
        anywhere changes no match, as the order of the others is kept."""
        if not self.alternatives:
            return None
        words = words_of(text, self.case_sensitive)
        chosen = set(self.always)
        for word in self.by_word.keys() & words:
            chosen.update(self.by_word[word])
        if self.by_substring:
            haystack = text if self.case_sensitive else _folded(text)
            for key, indices in self.by_substring.items():
                if key in haystack:
                    chosen.update(indices)
        if not chosen:
            return None
        if len(chosen) == len(self.alternatives):
            return self.pattern
        return _alternation(tuple(self.alternatives[i] for i in sorted(chosen)), self.flags)

    def matches(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, term) of every match of this list in `text`, exceptions and bounded
        uses left out."""
        pattern = self.matcher(text)
        if pattern is None:
            return []
        excepted: list[tuple[int, int]] | None = None  # found on the first match
        found = []
        for match in pattern.finditer(text):
            start, end = match.span()
            if excepted is None:
                exceptions = self.exceptions
                excepted = (
                    [(m.start(), m.end()) for m in exceptions.finditer(text)] if exceptions else []
                )
            if any(a <= start and end <= b for a, b in excepted):
                continue
            term = match.group()
            if term.lower() in self.unless_number:
                ahead = _ZH_NUMBER_AHEAD if has_cjk(term) else _NUMBER_AHEAD
                if ahead.match(text, end):
                    continue
            found.append((start, end, term))
        return found


@lru_cache(maxsize=4096)
def _alternation(patterns: tuple[str, ...], flags: int) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), flags)


@lru_cache(maxsize=8)
def _folded(text: str) -> str:
    """`text` case-folded, once for all the lists matched against it."""
    return text.casefold()


_WORD = re.compile(r"[\w-]+")


@lru_cache(maxsize=8)
def words_of(text: str, case_sensitive: bool = False) -> frozenset[str]:
    """The runs of letters, digits and hyphens in `text` (case-folded unless asked not to):
    a phrase's word of that kind, bounded as `phrase_pattern` bounds it, is one of them."""
    return frozenset(_WORD.findall(text if case_sensitive else _folded(text)))


def phrase_key(phrase: str) -> tuple[str, bool]:
    """What every match of `phrase_pattern(phrase)` holds: the phrase's longest word of
    letters, digits and hyphens, whole (True); or, without one (Chinese, "and/or"), its
    longest word as a substring (False)."""
    words = [word for word in phrase.split() if word != "..."]
    whole = [word for word in words if _WORD.fullmatch(word) and not has_cjk(word)]
    if whole:
        return max(whole, key=len), True
    return max(words, key=len, default=""), False


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
    phrases: list[tuple[str, str | None, bool]] = []  # (pattern, key, whole word)
    exceptions: list[str] = []
    unless_number: set[str] = set()
    for line in list_entries(language, name):
        if line.startswith("re:"):
            phrases.append((line[3:], None, False))
        elif line.startswith("-"):
            exceptions.append(phrase_pattern(line[1:].strip()))
        else:
            phrase = line
            if phrase.endswith("!number"):
                phrase = phrase[: -len("!number")].strip()
                unless_number.add(phrase.lower())
            key, whole = phrase_key(phrase)
            phrases.append(
                (phrase_pattern(phrase), key if case_sensitive else key.casefold(), whole)
            )
    if not phrases:
        return WordList(exception_patterns=tuple(exceptions), case_sensitive=case_sensitive)
    # longest first, so "as much as possible" wins over "as possible"
    phrases.sort(key=lambda phrase: len(phrase[0]), reverse=True)
    by_word: dict[str, list[int]] = {}
    by_substring: dict[str, list[int]] = {}
    always: list[int] = []
    for index, (_, key, whole) in enumerate(phrases):
        if key is None:
            always.append(index)
        else:
            (by_word if whole else by_substring).setdefault(key, []).append(index)
    alternatives = tuple(pattern for pattern, _, _ in phrases)
    return WordList(
        unless_number=frozenset(unless_number),
        exception_patterns=tuple(exceptions),
        words=frozenset(p.lower() for p in list_entries(language, name)),
        alternatives=alternatives,
        by_word={key: tuple(indices) for key, indices in by_word.items()},
        by_substring={key: tuple(indices) for key, indices in by_substring.items()},
        always=tuple(always),
        case_sensitive=case_sensitive,
    )
