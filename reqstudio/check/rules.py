"""The rule catalog (`data/rules.toml`) and the word lists it names, compiled to matchers.

A list line is a phrase (whole words, any case; Chinese as written), `phrase !number` (not
when a number follows within two words), `re:PATTERN` (tried on every text), `re(KEYS):PATTERN`
(tried only on a text that holds one of the space-separated KEYS), or `-phrase` (an exception:
a match inside it is no finding). See data/README.md for the sources and their licences.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path

from reqstudio.messages import language_code

DATA = Path(str(resources.files(__package__) / "data"))  # package data: word lists, rules.toml
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
class Hit:
    """One rule's finding on a text: the words and where they stand."""

    rule: str
    term: str
    start: int
    end: int
    why: str = ""


@dataclass(frozen=True)
class Rule:
    id: str
    kind: str  # "language" or "structure"
    source: str
    en: str
    zh: str
    lists: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    # the smells of people's labels this rule answers (`labels` in rules.toml: the one table
    # from label to rules, kept with the rule so that renaming the rule keeps it)
    labels: tuple[str, ...] = ()
    definition: str = ""  # what a person would flag, in a sentence

    def message(self, language: str, **values: object) -> str:
        template = self.zh if language_code(language) == "zh" else self.en
        return template.format_map({"term": "", "why": "", "count": "", **values})


@dataclass
class WordList:
    """One list compiled: the phrases' matcher, those that a number may follow, exceptions."""

    unless_number: frozenset[str] = frozenset()
    exception_patterns: tuple[str, ...] = ()  # a match inside one of them is no finding
    # each exception's key (as `phrase_key` gives it): it is looked for only in a text that
    # holds its key
    exception_keys: tuple[tuple[str, bool], ...] = ()
    words: frozenset[str] = field(default_factory=frozenset)  # the plain entries, lowercased
    # The phrases' patterns, longest first, and what a text must hold for each to match
    # (`phrase_key`): the phrases by their key word, by their key substring, and those with
    # none (`re:` entries), which are always tried.
    alternatives: tuple[str, ...] = ()
    by_word: dict[str, tuple[int, ...]] = field(default_factory=dict)
    by_substring: dict[str, tuple[int, ...]] = field(default_factory=dict)
    always: tuple[int, ...] = ()
    case_sensitive: bool = False
    # the phrases that are one plain word, by index: found among the text's words by a
    # look-up, not by running their pattern over the text (most entries are one word)
    single: dict[int, str] = field(default_factory=dict)

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

    def candidates(self, text: str) -> list[int]:
        """The indices (longest phrase first) of the phrases that can match in `text`: those
        whose key word `text` holds, whose key substring it holds, and the `re:` entries. A
        scan tries every phrase at every position, so most of a long list costs time on a
        requirement that holds none of its words."""
        if not self.alternatives:
            return []
        words = words_of(text, self.case_sensitive)
        chosen = set(self.always)
        for word in words:
            if word in self.by_word:
                chosen.update(self.by_word[word])
        if self.by_substring:
            haystack = text if self.case_sensitive else _folded(text)
            for key, indices in self.by_substring.items():
                if key in haystack:
                    chosen.update(indices)
        return sorted(chosen)

    def matcher(self, text: str) -> re.Pattern[str] | None:
        """`pattern` with only the phrases that can match in `text` (None: none can)."""
        chosen = self.candidates(text)
        if not chosen:
            return None
        return _alternation(tuple(self.alternatives[i] for i in chosen), self.flags)

    def matches(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, term) of every match of this list in `text`, exceptions and bounded
        uses left out. As one alternation of the phrases, longest first, would find them
        (scanning from the left, the first phrase that matches at a position wins, and the
        scan goes on after it), but each phrase is its own compiled pattern, run only when
        the text holds its key word: one alternation per set of phrases cost a compilation
        for most new requirements of a long document."""
        chosen = self.candidates(text)
        if not chosen:
            return []
        spans: list[tuple[int, int, int]] = []  # (start, phrase order, end)
        tokens = token_spans(text, self.case_sensitive) if self.single else {}
        for index in chosen:
            word = self.single.get(index)
            if word is not None:  # its pattern would find exactly these whole words
                spans += [(start, index, end) for start, end in tokens.get(word, ())]
                continue
            pattern = _compiled(self.alternatives[index], self.flags)
            spans += [(m.start(), index, m.end()) for m in pattern.finditer(text)]
        spans.sort()
        excepted: list[tuple[int, int]] | None = None  # found on the first match
        found = []
        position = 0
        for start, _, end in spans:
            if start < position:
                continue
            position = end if end > start else start + 1
            if excepted is None:
                excepted = self._excepted(text)
            if any(a <= start and end <= b for a, b in excepted):
                continue
            term = text[start:end]
            if term.lower() in self.unless_number:
                ahead = _ZH_NUMBER_AHEAD if has_cjk(term) else _NUMBER_AHEAD
                if ahead.match(text, end):
                    continue
            found.append((start, end, term))
        return found

    def _excepted(self, text: str) -> list[tuple[int, int]]:
        """The spans of the exceptions in `text` (each one whose key the text holds)."""
        words = words_of(text, self.case_sensitive)
        haystack = text if self.case_sensitive else _folded(text)
        spans = []
        for pattern, (key, whole) in zip(self.exception_patterns, self.exception_keys, strict=True):
            if (key in words) if whole else (key in haystack):
                spans += [m.span() for m in _compiled(pattern, self.flags).finditer(text)]
        return spans


@lru_cache(maxsize=8192)
def _compiled(pattern: str, flags: int) -> re.Pattern[str]:
    return re.compile(pattern, flags)


@lru_cache(maxsize=4096)
def _alternation(patterns: tuple[str, ...], flags: int) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), flags)


@lru_cache(maxsize=8)
def _folded(text: str) -> str:
    """`text` case-folded, once for all the lists matched against it."""
    return text.casefold()


_WORD = re.compile(r"[\w-]+")


@lru_cache(maxsize=8)
def token_spans(text: str, case_sensitive: bool = False) -> dict[str, list[tuple[int, int]]]:
    r"""Where each run of letters, digits and hyphens of `text` stands, by the run (lower-cased
    unless asked not to): a one-word phrase's pattern, `(?<![\w-])word(?![\w-])`, matches
    exactly these runs."""
    found: dict[str, list[tuple[int, int]]] = {}
    for match in _WORD.finditer(text):
        word = match.group() if case_sensitive else match.group().lower()
        found.setdefault(word, []).append(match.span())
    return found


@lru_cache(maxsize=8)
def words_of(text: str, case_sensitive: bool = False) -> frozenset[str]:
    """The runs of letters, digits and hyphens in `text` (case-folded unless asked not to):
    a phrase's word of that kind, bounded as `phrase_pattern` bounds it, is one of them."""
    return frozenset(_WORD.findall(text if case_sensitive else _folded(text)))


_EVERYWHERE = {"shall", "must", "will", "should", "the", "a", "an", "and", "or", "of", "to", "be"}


def phrase_key(phrase: str) -> tuple[str, bool]:
    """What every match of `phrase_pattern(phrase)` holds: the phrase's longest word of
    letters, digits and hyphens (one of the few in every requirement only when it has no
    other), whole (True); or, without one (Chinese, "and/or"), its longest word as a
    substring (False)."""
    words = [word for word in phrase.split() if word != "..."]
    whole = [word for word in words if _WORD.fullmatch(word) and not has_cjk(word)]
    # a word in almost every requirement would send the phrase to almost every one
    rare = [word for word in whole if word.lower() not in _EVERYWHERE]
    if rare or whole:
        return max(rare or whole, key=len), True
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
    return parse_catalog((DATA / "rules.toml").read_text(encoding="utf-8"))


def parse_catalog(text: str) -> dict[str, Rule]:
    """The rules of a rules.toml text, by id, in its order."""
    raw = tomllib.loads(text)
    return {
        rule_id: Rule(
            id=rule_id,
            kind=entry["kind"],
            source=entry["source"],
            en=entry["en"],
            zh=entry["zh"],
            lists=tuple(entry.get("lists", ())),
            also=tuple(entry.get("also", ())),
            labels=tuple(entry.get("labels", ())),
            definition=entry.get("definition", ""),
        )
        for rule_id, entry in raw.items()
    }


def label_rules(rules: dict[str, Rule] | None = None) -> dict[str, tuple[str, ...]]:
    """Each label of the human-labelled sets and the rules that answer it, in catalog order:
    the one table from label to rules, kept as each rule's `labels` in data/rules.toml so
    that a rule renamed takes its labels along."""
    table: dict[str, list[str]] = {}
    for rule in (catalog() if rules is None else rules).values():
        for label in rule.labels:
            table.setdefault(label, []).append(rule.id)
    return {label: tuple(found) for label, found in table.items()}


_IRREGULAR = {
    "good": ("better", "best"),
    "bad": ("worse", "worst"),
    "far": ("farther further", "farthest furthest"),
    "little": ("less", "least"),
    "much": ("more", "most"),
    "many": ("more", "most"),
}


def degree_forms(adjective: str, degree: str) -> list[str]:
    """The comparative ("comparative") or superlative ("superlative") of `adjective` by the
    spelling rules of English: late/later, easy/easier, big/bigger, fast/faster."""
    if adjective in _IRREGULAR:
        return _IRREGULAR[adjective][degree == "superlative"].split()
    ending = "er" if degree == "comparative" else "est"
    vowels = "aeiou"
    if adjective.endswith("e"):
        return [adjective + ending[1:]]
    if len(adjective) > 2 and adjective.endswith("y") and adjective[-2] not in vowels:
        return [adjective[:-1] + "i" + ending]
    cvc = (
        len(adjective) <= 4
        and adjective[-1] not in vowels + "wxy"
        and adjective[-2] in vowels
        and adjective[-3] not in vowels
    )
    return [adjective + adjective[-1] + ending if cvc else adjective + ending]


def list_entries(language: str, name: str) -> list[str]:
    """The non-comment lines of data/<language>/<name>.txt ([] when there is no such list).
    A line `@comparative LIST` or `@superlative LIST` stands for those forms of every word of
    data/<language>/LIST.txt."""
    path = DATA / language / f"{name}.txt"
    if not path.is_file():
        return []
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    entries = []
    for line in lines:
        if not line or line.startswith("#"):
            continue
        degree, _, source = line.partition(" ")
        if degree in ("@comparative", "@superlative"):
            entries += [
                form
                for adjective in sorted(word_set(language, source.strip()))
                for form in degree_forms(adjective, degree[1:])
            ]
        else:
            entries.append(line)
    return entries


@cache
def word_set(language: str, name: str) -> frozenset[str]:
    """A list read as a set of lowercase words (whitespace-separated)."""
    return frozenset(word.lower() for line in list_entries(language, name) for word in line.split())


# `re(KEY KEY ...):PATTERN`: a pattern tried only on a text that holds one of the keys
_KEYED_RE = re.compile(r"re\(([^)]+)\):")


@cache
def word_list(language: str, name: str, case_sensitive: bool = False) -> WordList:
    # (pattern, keys, whole word, the word of a one-word phrase): a `re(KEYS):` entry has
    # several keys, `re:` none
    phrases: list[tuple[str, str | tuple[str, ...] | None, bool, str | None]] = []
    exceptions: list[str] = []
    exception_keys: list[tuple[str, bool]] = []
    unless_number: set[str] = set()
    for line in list_entries(language, name):
        keyed = _KEYED_RE.match(line)
        if keyed:
            keys = tuple(k if case_sensitive else k.casefold() for k in keyed.group(1).split())
            phrases.append((line[keyed.end() :], keys, False, None))
        elif line.startswith("re:"):
            phrases.append((line[3:], None, False, None))
        elif line.startswith("-"):
            exceptions.append(phrase_pattern(line[1:].strip()))
            key, whole = phrase_key(line[1:].strip())
            exception_keys.append((key if case_sensitive else key.casefold(), whole))
        else:
            phrase = line
            if phrase.endswith("!number"):
                phrase = phrase[: -len("!number")].strip()
                unless_number.add(phrase.lower())
            key, whole = phrase_key(phrase)
            one_word = bool(_WORD.fullmatch(phrase)) and not has_cjk(phrase)
            phrases.append(
                (
                    phrase_pattern(phrase),
                    key if case_sensitive else key.casefold(),
                    whole,
                    (phrase if case_sensitive else phrase.lower()) if one_word else None,
                )
            )
    if not phrases:
        return WordList(
            exception_patterns=tuple(exceptions),
            exception_keys=tuple(exception_keys),
            case_sensitive=case_sensitive,
        )
    # longest first, so "as much as possible" wins over "as possible"
    phrases.sort(key=lambda phrase: len(phrase[0]), reverse=True)
    by_word: dict[str, list[int]] = {}
    by_substring: dict[str, list[int]] = {}
    always: list[int] = []
    for index, (_, key, whole, _) in enumerate(phrases):
        if key is None:
            always.append(index)
        elif isinstance(key, tuple):  # `re(KEYS):`: tried when the text holds one of them
            for one in key:
                by_substring.setdefault(one, []).append(index)
        else:
            (by_word if whole else by_substring).setdefault(key, []).append(index)
    alternatives = tuple(pattern for pattern, _, _, _ in phrases)
    return WordList(
        unless_number=frozenset(unless_number),
        exception_patterns=tuple(exceptions),
        exception_keys=tuple(exception_keys),
        words=frozenset(p.lower() for p in list_entries(language, name)),
        alternatives=alternatives,
        by_word={key: tuple(indices) for key, indices in by_word.items()},
        by_substring={key: tuple(indices) for key, indices in by_substring.items()},
        always=tuple(always),
        case_sensitive=case_sensitive,
        single={n: word for n, (_, _, _, word) in enumerate(phrases) if word is not None},
    )
