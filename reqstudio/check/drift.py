"""Term drift and unit drift across the requirements of one document.

- **Term drift**: one concept under several names. Spelling variants are found by their form
  (words that differ only by a hyphen, a space or joining: e-mail / email, log-in / login,
  user name / username, stop signal / stop-signal); names of one concept come from
  `data/<language>/term-synonyms.txt` (customer / client, log in / sign in, 登录 / 登陆).
  Grammar is left alone: a hyphen or a space is drift only when both forms stand in the same
  place of a sentence (both before a noun, or both not), so "real-time data" beside "in real
  time" is none; two words joined are drift only when each part is a word of the document on
  its own (so that "com munication", split by a PDF conversion, is none).
- **Unit drift**: one quantity in several units: data sizes written with both decimal and
  binary prefixes (MB and MiB), or the same measure (the same words before the number) in two
  units of one dimension in two requirements (3 s and 3000 ms).

Each finding names, for each name or unit, the first requirement that uses it. Work grows
with the document: words and measures go into dictionaries, never all pairs."""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cache

from reqstudio.check.parse import Requirement
from reqstudio.check.quantities import quantities, unit_of, unit_spellings
from reqstudio.check.rules import DATA
from reqstudio.check.wording import GENERIC_ACTORS

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
# words after which the next word is not a noun the form modifies
_NOT_HEADS = {
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "at", "by", "for", "from", "with",
    "as", "is", "are", "be", "was", "were", "been", "shall", "must", "should", "will", "may",
    "can", "that", "which", "who", "it", "its", "this", "these", "those", "such", "when", "if",
    "not", "than", "then", "there", "into", "via", "per", "but", "so", "has", "have", "had",
    "do", "does", "all", "any", "each", "every", "only", "also",
}  # fmt: skip
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")


@dataclass
class Drift:
    """One concept under several names, or one measure in several units: the names (as the
    document first writes each), the first requirement using each, and the kind."""

    kind: str  # "term" or "unit"
    names: list[str]
    requirements: list[Requirement]
    counts: list[int] = field(default_factory=list)  # uses of each name


@dataclass
class _Form:
    written: str  # as first written
    first: Requirement
    count: int = 0
    # where it stands: after "to" or a modal verb (a verb), before a word it may modify, or
    # before punctuation, a function word or the end
    places: set[str] = field(default_factory=set)


# words after which a form is a verb ("to set up", "shall log in")
_VERB_MARKERS = {
    "to", "shall", "must", "will", "can", "may", "should", "cannot", "would", "be", "is", "are",
    "was", "were", "been", "being",
}  # fmt: skip
# placeholders of a syntax ("<parser-program>") are names of their own
_PLACEHOLDER = re.compile(r"<[^<>\n]{1,40}>")


def term_drift(requirements: list[Requirement]) -> list[Drift]:
    """Spelling variants and names of one concept, English and Chinese."""
    return [*_spelling_variants(requirements), *_synonyms(requirements)]


def _spelling_variants(requirements: list[Requirement]) -> list[Drift]:
    # first pass, for every requirement: its words, and which keys (a form's letters without
    # hyphens and spaces) are written in more than one way anywhere
    texts, words_seen, hyphened, joined = [], Counter(), set(), set()
    for requirement in requirements:
        text = requirement.body
        if not text.isascii() and _CJK_RUN.search(text):
            text = _CJK_RUN.sub(" . ", text)
        if "<" in text:
            text = _PLACEHOLDER.sub(" . ", text)
        lowered = [w.lower() for w in _WORD.findall(text)]
        pairs = {a + b for a, b in itertools.pairwise(lowered)}
        hyphens = {w.replace("-", "") for w in lowered if "-" in w}
        texts.append((text, lowered, pairs | hyphens | set(lowered)))  # the keys it may write
        words_seen.update(lowered)
        hyphened |= hyphens
        joined |= pairs
    singles = {w for w in words_seen if "-" not in w}
    interesting = (hyphened & (singles | joined)) | (joined & singles)
    interesting = {key for key in interesting if len(key) >= 5}
    if not interesting:
        return []
    # second pass, only where an interesting key is written: each form, where it stands
    forms: dict[str, dict[str, _Form]] = defaultdict(dict)  # key -> form -> its uses
    for requirement, (text, lowered, keys) in zip(requirements, texts, strict=True):
        if keys.isdisjoint(interesting):
            continue
        last = len(lowered) - 1
        hits = [
            n
            for n, lower in enumerate(lowered)
            if lower.replace("-", "") in interesting
            or (n < last and lower + lowered[n + 1] in interesting)
        ]
        if not hits:
            continue
        matches = list(_WORD.finditer(text))
        for n in hits:
            lower = lowered[n]
            before = lowered[n - 1] if n else ""
            key = lower.replace("-", "")
            if key in interesting:
                following = _next_word(text, matches[n].end(), matches, n)
                _note(forms, key, lower, matches[n].group(), requirement, before, following)
            if n + 1 < len(lowered) and lower + lowered[n + 1] in interesting:
                other, second = matches[n + 1], lowered[n + 1]
                if text[matches[n].end() : other.start()] == " " and "-" not in lower + second:
                    after = _next_word(text, other.end(), matches, n + 1)
                    written = f"{matches[n].group()} {other.group()}"
                    _note(forms, lower + second, f"{lower} {second}", written, requirement,
                          before, after)  # fmt: skip
    found = []
    for variants in forms.values():
        if len(variants) < 2:
            continue
        names = [name for name in variants if _is_variant(name, variants, words_seen)]
        if len(names) < 2:
            continue
        ordered = sorted(names, key=lambda name: -variants[name].count)
        found.append(
            Drift("term", [variants[n].written for n in ordered],
                  [variants[n].first for n in ordered], [variants[n].count for n in ordered])
        )  # fmt: skip
    return found


def _next_word(text: str, end: int, matches: list[re.Match[str]], n: int) -> str:
    """The word right after a form ("" when punctuation or the end comes first)."""
    if n + 1 >= len(matches):
        return ""
    following = matches[n + 1]
    return following.group().lower() if text[end : following.start()] == " " else ""


def _note(forms, key, name, written, requirement, before, following) -> None:
    form = forms[key].get(name)
    if form is None:
        form = forms[key][name] = _Form(written, requirement)
    form.count += 1
    if before in _VERB_MARKERS:
        form.places.add("verb")
    elif following and following not in _NOT_HEADS:
        form.places.add("before a noun")
    else:
        form.places.add("alone")


_CAMEL_IDENTIFIER = re.compile(r"^[a-z]+[A-Z]")  # programSDT, targetSDT: a name in code
_TITLE_WORDS = re.compile(r"^[A-Z][a-z]+ [A-Z][a-z]+$")  # Value Pricing, Digital Home


def _is_variant(name: str, variants: dict[str, _Form], words_seen: Counter) -> bool:
    """Whether `name` is a spelling of the concept another form names: it stands where
    another form stands (both verbs, both before a noun, or both neither), and

    - with a space beside a hyphenated form: always ("non repudiation" / "non-repudiation");
    - with a space beside a joined form: when both parts are words (no function word, both
      used on their own elsewhere in the document, or the compound is a known one),
      so that a PDF split ("com munication") is none; two capitalised words beside the same
      name joined ("Value Pricing" / "ValuePricing") always;
    - joined: unless it is an identifier in code ("programSDT")."""
    form = variants[name]
    others = {o: variants[o] for o in variants if o != name}
    if not any(form.places & other.places for other in others.values()):
        return False
    if " " in name:
        if any("-" in o for o in others):
            return True
        joined = [o for o in others if " " not in o]
        if not joined:
            return False
        if _TITLE_WORDS.match(form.written) and any(
            others[o].written == form.written.replace(" ", "") for o in joined
        ):
            return True
        first, second = name.split(" ")
        return joined[0] in _compounds() or (
            first not in _NOT_HEADS
            and second not in _NOT_HEADS
            and len(first) >= 3
            and len(second) >= 3
            and min(words_seen[first], words_seen[second]) > form.count
        )
    if "-" not in name:
        return not _CAMEL_IDENTIFIER.match(form.written)
    return True


@cache
def _compounds() -> frozenset[str]:
    lines = (DATA / "en" / "compounds.txt").read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


@cache
def synonym_sets(language: str) -> tuple[tuple[tuple[str, frozenset[str]], ...], ...]:
    """The concepts of `data/<language>/term-synonyms.txt`: each a tuple of (name, words
    after which the name is not the concept)."""
    path = DATA / language / "term-synonyms.txt"
    concepts = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        names = []
        for entry in line.split("|"):
            name, _, unless = entry.partition("!")
            names.append((name.strip().lower(), frozenset(unless.split())))
        concepts.append(tuple(names))
    return tuple(concepts)


@cache
def _name_pattern(name: str) -> re.Pattern[str]:
    if not name.isascii():
        return re.compile(re.escape(name))
    words = [re.escape(w) for w in name.split()]
    words[-1] += r"(?:s|es|ed|d|ing)?"
    return re.compile(r"(?<![\w-])" + r"[\s-]+".join(words) + r"(?![\w-])", re.IGNORECASE)


def _synonyms(requirements: list[Requirement]) -> list[Drift]:
    found = []
    texts = [(r, r.body.lower()) for r in requirements]
    everything = "\n".join(text for _, text in texts)
    for language in ("en", "zh"):
        for concept in synonym_sets(language):
            # a concept is read requirement by requirement only when two of its names occur
            present = [(n, u) for n, u in concept if n.split()[0][:4] in everything]
            if len(present) < 2:
                continue
            uses: dict[str, list] = {}
            longer_first = sorted(present, key=lambda entry: -len(entry[0]))
            for requirement, text in texts:
                for name, unless in longer_first:
                    if name.split()[0][:4] not in text:  # cheap test before the pattern
                        continue
                    for match in _name_pattern(name).finditer(text):
                        following = text[match.end() :].split(None, 1)[:1]
                        if following and following[0].strip(".,;:()") in unless:
                            continue
                        if _inside_longer(text, match, name, concept):
                            continue
                        use = uses.setdefault(name, [match.group(), requirement, 0])
                        use[2] += 1
            if len(uses) >= 2:
                ordered = sorted(uses, key=lambda n: -uses[n][2])
                found.append(
                    Drift("term", [uses[n][0] for n in ordered], [uses[n][1] for n in ordered],
                          [uses[n][2] for n in ordered])
                )  # fmt: skip
    return found


def _inside_longer(text: str, match: re.Match[str], name: str, concept) -> bool:
    """Whether this use of `name` is part of a longer name of the same concept (邮箱 in
    电子邮箱, 手机号 in 手机号码)."""
    for other, _ in concept:
        if other != name and name in other:
            at = other.index(name)
            start = match.start() - at
            if text[start : start + len(other)] == other:
                return True
    return False


# --- units -------------------------------------------------------------------------------

_DECIMAL_DATA = {"kB", "MB", "GB", "TB"}
_BINARY_DATA = {"KiB", "MiB", "GiB", "TiB"}
# units that differ by a prefix of one base unit: one measure written in two of them is
# drift (3 s and 3000 ms); calendar units (minutes, hours, days ...) read naturally side by
# side and are left alone
_FAMILIES = {
    unit: family
    for family, units in {
        "time": ("ns", "µs", "ms", "s"),
        "bytes": ("B", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"),
        "bits": ("bit", "kbit", "Mbit", "Gbit"),
        "bit rate": ("bit/s", "kbit/s", "Mbit/s", "Gbit/s"),
        "byte rate": ("kB/s", "MB/s", "GB/s"),
        "frequency": ("Hz", "kHz", "MHz", "GHz"),
        "length": ("mm", "cm", "m", "km"),
        "mass": ("mg", "g", "kg", "t"),
        "voltage": ("V", "kV"),
        "power": ("W", "kW"),
    }.items()
    for unit in units
}
_MEASURE_STOP = _NOT_HEADS | {"within", "under", "less", "more", "than", "least", "most",
                              "up", "no", "exceed", "maximum", "minimum", "over", "after"}  # fmt: skip


def unit_drift(requirements: list[Requirement]) -> list[Drift]:
    """Decimal and binary data prefixes in one document; one measure in two units."""
    found: list[Drift] = []
    decimal = binary = None
    # (two measure words, unit family) -> unit -> its first (requirement, where the number is)
    by_measure: dict[tuple[str, str, str], dict[str, tuple[Requirement, int]]] = defaultdict(dict)
    pattern = _unit_after_number()
    for requirement in requirements:
        text = requirement.body
        if not _NUMBER_AND_UNIT.search(text):
            continue
        # numbers with a unit of a family, found by one pattern: reading every quantity
        # with its bound (`quantities`) is kept for the few that make a finding
        for match in pattern.finditer(text):
            unit = unit_of(match.group("unit"))
            family = _FAMILIES.get(unit.symbol) if unit else None
            if family is None:
                continue
            where = (requirement, match.start())
            if unit.symbol in _DECIMAL_DATA and decimal is None:
                decimal = where
            if unit.symbol in _BINARY_DATA and binary is None:
                binary = where
            for pair in _measure_pairs(text[: match.start()], text[match.end() :]):
                units = by_measure[(*pair, family)]
                if unit.symbol not in units:
                    units[unit.symbol] = where
    reported: set[frozenset[int]] = set()
    if decimal and binary:
        found.append(_unit_finding(decimal, binary))
        reported.add(frozenset((id(decimal[0]), id(binary[0]))))
    for units in by_measure.values():
        if len(units) < 2:
            continue
        for first, second in itertools.combinations(units.values(), 2):
            key = frozenset((id(first[0]), id(second[0])))
            if first[0] is second[0] or key in reported:
                continue
            reported.add(key)
            found.append(_unit_finding(first, second))
    return found


def _unit_finding(*uses: tuple[Requirement, int]) -> Drift:
    """A finding of unit drift naming each quantity as written, bound included."""
    names = []
    for requirement, at in uses:
        text = requirement.body
        written = [q.text for q in quantities(text) if q.start <= at < q.end]
        names.append(written[0] if written else _unit_after_number().match(text, at).group())
    return Drift("unit", names, [requirement for requirement, _ in uses])


@cache
def _unit_after_number():
    """A number and a unit of one of the families right after it."""
    spellings = sorted(
        (s for s in unit_spellings() if (u := unit_of(s)) and u.symbol in _FAMILIES),
        key=len,
        reverse=True,
    )
    latin = "|".join(re.escape(s) for s in spellings if s.isascii() or s in ("µs", "μs"))
    cjk = "|".join(re.escape(s) for s in spellings if _CJK_RUN.search(s))
    return re.compile(
        r"(?<![\w.\-/:])\d+(?:[.,]\d+)*\s?(?P<unit>(?:" + latin + r")(?![A-Za-z0-9_-])|" + cjk + ")"
    )


# a number with something after it that may be a unit (not an id such as FR-00012)
_NUMBER_AND_UNIT = re.compile(
    r"(?<![\w-])\d[\d,.]*\s?(?:[A-Za-zµμ%°℃\u4e00-\u9fff])|[一二两三四五六七八九十百千万]\s?[\u4e00-\u9fff]"
)


def _measure_pairs(before: str, after: str) -> list[tuple[str, str]]:
    """What a number measures, as pairs of words: in English up to three content words
    before it in its clause (their first five letters, so that "respond" and "response"
    meet); in Chinese, which puts the time before the verb (在2秒内返回结果), pairs of
    characters on both sides of it in its clause. Two numbers of one dimension in different
    units whose measures share a pair measure the same thing."""
    clause = re.split(r"[.;:。；：,，]", before)[-1]
    if _CJK_RUN.search(clause) or _CJK_RUN.match(after.lstrip()):
        rest = re.split(r"[.;:。；：,，]", after)[0]
        chars = "".join(_CJK_RUN.findall(clause))[-12:] + "".join(_CJK_RUN.findall(rest))[:12]
        for word in (*GENERIC_ACTORS, "应", "必须", "可以", "宜"):
            chars = chars.replace(word, "")
        grams = sorted({chars[i : i + 2] for i in range(len(chars) - 1)})
        return list(itertools.combinations(grams, 2))
    words = [
        w.lower()[:5]
        for w in _WORD.findall(clause)
        if w.lower() not in _MEASURE_STOP and w.lower() not in GENERIC_ACTORS
    ][-3:]
    return list(itertools.combinations(sorted(set(words)), 2))
