"""Checks across the requirements of one document: duplicates, near-duplicates, conflicts,
term drift and unit drift (`cross_findings`), each finding naming both requirements (or, for
drift, the first requirement of each name) and the words involved.

Candidate pairs come from indexes, never from all pairs, so the work grows with the document:

- the text of each requirement, normalised (case, punctuation, articles): equal texts are
  **duplicates**;
- its content words with the meaning-carrying ones set aside (modal verbs, negations,
  numbers and bounds; `reqstudio.check.meaning`), as a bag, indexed whole and with each word
  left out in turn: two requirements whose bags are equal, or differ by one word, share a key;
- its id (a document that states one requirement twice under its id), and its sentences
  (one requirement repeating another's whole statement inside a longer text);
- for long requirements (fifteen content words or more), the rarest of their words (prefix
  filtering: two sets with a Jaccard overlap of 0.85 or more share one of them).

A candidate pair is then read with the meaning module: about the same thing (the same actors,
conditions and named entities) with a contradicting modal strength, number or unit, or
negation, and otherwise the same words: a **conflict**; the same words and no change of
meaning: a **near-duplicate**. Conflicts are deterministic candidates: no model confirms them
here."""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from reqstudio.check.drift import Drift, term_drift, unit_drift
from reqstudio.check.meaning import Change, Meaning, compare, extract
from reqstudio.check.parse import Requirement
from reqstudio.check.quantities import quantities, unit_spellings
from reqstudio.check.worddiff import changed_words, word_diff
from reqstudio.check.wording import stem

RULES = {
    "duplicate": "SRS-duplicate",
    "near-duplicate": "SRS-near-duplicate",
    "conflict": "SRS-conflict",
    "term": "SRS-term-drift",
    "unit": "SRS-unit-drift",
}
# a bag of content words this large or larger is "long": two long requirements that share
# this share of their words are near-duplicates (one word in ten differs)
LONG = 15
LONG_OVERLAP = 0.85
# two requirements under one id, or whose words overlap this much with a contradiction
SAME_ID_OVERLAP = 0.6
CONFLICT_OVERLAP = 0.8
# Chinese is compared by pairs of characters, which a reordered clause breaks up: two Chinese
# requirements this close, with no change of meaning, are near-duplicates
ZH_OVERLAP = 0.7
# bags one word apart are looked up from this size (below it they overlap less than 0.8)
DELETION_FROM = 4
# a statement repeated inside another requirement counts from this many content words
REPEATED_WORDS = 5
# a word of more bags than this is not looked up by prefix filtering
POSTING_LIMIT = 32
# a key shared by more requirements than this pairs each with the first only
GROUP_LIMIT = 40


@dataclass
class CrossFinding:
    """One finding across requirements: its rule, the requirements (two for a pair; for
    drift, the first to use each name), where they are, and the words involved (for a pair:
    the words of the first, then of the second; for drift: the names or quantities)."""

    rule: str
    requirements: list[Requirement]
    words: list[str]
    changes: list[Change] = field(default_factory=list)  # for a conflict: what contradicts

    @property
    def requirement_ids(self) -> list[str]:
        return [r.label for r in self.requirements]

    def as_dict(self, message: str = "", message_zh: str = "") -> dict[str, Any]:
        return {
            "rule": self.rule,
            "requirement_ids": self.requirement_ids,
            "lines": [r.line for r in self.requirements],
            "sections": [r.section for r in self.requirements],
            "words": list(self.words),
            "message": message,
            "message_zh": message_zh,
        }


# --- reading each requirement once ---------------------------------------------------------

_PUNCTUATION = re.compile(r"[^\w\s]+")
_ARTICLES = {"the", "a", "an"}
# words set aside from the bag: function words, modal verbs, negations (what a conflict may
# change), and "in/on/at" (a bound's "in 2 s" and "within 2 s" are one)
_SET_ASIDE = {
    "the", "a", "an", "be", "is", "are", "was", "were", "been", "being", "do", "does", "has",
    "have", "had", "shall", "must", "should", "may", "can", "cannot", "will", "would", "could",
    "might", "not", "no", "never", "none", "also", "able", "of", "that", "which", "this",
    "these", "those", "it", "its", "their", "there", "then", "so", "as", "all", "any", "each",
    "every", "in", "on", "at", "by", "required", "need", "needs", "ought",
}  # fmt: skip
_IN_ORDER_TO = re.compile(r"\bin order to\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:['’-][A-Za-z0-9]+)*|\d+(?:\.\d+)?")
_CJK = re.compile(r"[\u4e00-\u9fff]+")
_ZH_SET_ASIDE = re.compile(
    r"必须|应当|应该|应(?![用答对急聘变激付])|须|宜|可以|可|能够|不得|禁止|严禁|不|无|没有|未|非|的|了"
)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
_SENTENCE_END = re.compile(r"[.!?。！？]\s*\S")
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|（[^（）]*）")
_STEMS: dict[str, str] = {}


def _stem(word: str) -> str:
    found = _STEMS.get(word)
    if found is None:
        found = _STEMS[word] = stem(word)
    return found


def text_key(text: str) -> str:
    """`text` for comparing as a whole: lower-cased, punctuation and articles out."""
    words = _PUNCTUATION.sub(" ", text.casefold()).split()
    return " ".join(w for w in words if w not in _ARTICLES)


@cache
def _set_aside_en() -> frozenset[str]:
    """Function words, modal verbs, negations, and the words of numbers, bounds and units:
    a bag without them is what two wordings of one requirement, or two contradicting
    requirements, share ("within 2 seconds" and "in under 2 s" leave nothing behind)."""
    units = {spelling.lower() for spelling in unit_spellings() if spelling.isascii()}
    return frozenset(_SET_ASIDE | _BOUND_WORDS | _NUMBER_WORDS | units)


_BOUND_WORDS = {
    "within", "under", "less", "fewer", "more", "greater", "higher", "lower", "than", "least",
    "most", "up", "exceed", "exceeds", "exceeding", "maximum", "minimum", "max", "min", "over",
    "above", "below", "longer", "shorter", "later", "earlier", "or",
}  # fmt: skip
_NUMBER_WORDS = {
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "fifteen", "twenty", "thirty", "forty", "fifty", "sixty", "hundred",
    "thousand", "million", "half", "once", "twice",
}  # fmt: skip
_ZH_QUANTITY = re.compile(
    r"[\d.]+|[零一二两三四五六七八九十百千万]+|毫秒|秒钟|秒|分钟|小时|个月|天|周|年|%|％"
    r"|以内|之内|以上|以下|至少|至多|最多|最少|不超过|不少于|不低于|不高于|不大于|不小于|内"
)


def _bag(text: str, variants: dict[str, str]) -> tuple[str, ...]:
    """The content words of `text` (stems, sorted, repeats kept) without the words of
    numbers, bounds, units, modal verbs and negations; spelling variants the document mixes
    count as one word (`variants`). Chinese: pairs of characters, the same left out."""
    words = []
    if _CJK.search(text):
        stripped = _ZH_SET_ASIDE.sub(" ", _ZH_QUANTITY.sub(" ", text))
        for run in _CJK.findall(stripped):
            words += [run[i : i + 2] for i in range(max(1, len(run) - 1))]
        text = _CJK.sub(" ", text)
    set_aside = _set_aside_en()
    if "order" in text:
        text = _IN_ORDER_TO.sub("to", text)
    tokens = [w.lower() for w in _WORD.findall(text)]
    if not variants or (
        variants.keys().isdisjoint(tokens) and not _first_words(variants) & set(tokens)
    ):
        stems = _STEMS
        words += [
            stems.get(w) or _stem(w) for w in tokens if w not in set_aside and not w[0].isdigit()
        ]
        return tuple(sorted(words))
    n = 0
    while n < len(tokens):
        word = tokens[n]
        if variants and n + 1 < len(tokens) and f"{word} {tokens[n + 1]}" in variants:
            words.append(variants[f"{word} {tokens[n + 1]}"])
            n += 2
            continue
        if word not in set_aside and not word[0].isdigit():
            words.append(variants.get(word) or _stem(word))
        n += 1
    return tuple(sorted(words))


@cache
def _first_words_of(names: frozenset[str]) -> frozenset[str]:
    return frozenset(name.split()[0] for name in names if " " in name)


def _first_words(variants: dict[str, str]) -> frozenset[str]:
    """The first words of the two-word names among `variants` ("web" of "web order")."""
    return _first_words_of(frozenset(variants))


def _variant_map(drifts: list[Drift]) -> dict[str, str]:
    """Each name of a drifting concept to one of them, so that "web order" and "WebOrder"
    make one word of the bag."""
    variants: dict[str, str] = {}
    for drift in drifts:
        if drift.kind != "term":
            continue
        canonical = stem(drift.names[0].lower().replace(" ", "").replace("-", ""))
        for name in drift.names:
            variants[name.lower().replace("-", "")] = canonical
            variants[name.lower()] = canonical
    return variants


def _multiset_overlap(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """Jaccard overlap of two bags counting repeats: a long text that repeats what differs
    ("driver's cards" three times against "a card number" three times) differs more."""
    ca, cb = Counter(a), Counter(b)
    union = sum((ca | cb).values())
    return sum((ca & cb).values()) / union if union else 1.0


def _overlap(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """Jaccard overlap of two bags' words; 1.0 only for equal bags (repeats counted)."""
    if a == b:
        return 1.0
    sa, sb = set(a), set(b)
    shared = len(sa & sb)
    return min(shared / len(sa | sb), 0.999) if sa | sb else 0.0


# --- candidate pairs -----------------------------------------------------------------------


def _pairs_of(groups) -> set[tuple[int, int]]:
    pairs: set[tuple[int, int]] = set()
    for members in groups:
        if len(members) < 2:
            continue
        if len(members) > GROUP_LIMIT:  # a key of many: each with the first
            pairs.update((members[0], m) for m in members[1:])
        else:
            pairs.update(itertools.combinations(members, 2))
    return pairs


def _prefix_pairs(
    bags: list[tuple[str, ...]], members: list[int], threshold: float
) -> set[tuple[int, int]]:
    """Pairs among `members` whose bags may overlap by `threshold` or more: prefix
    filtering over words ordered rarest first (two sets with that overlap share a word among
    the first |x| - ceil(t|x|) + 1 of each). Equal bags are paired elsewhere: one of each
    is indexed here, so that a text repeated a thousand times costs one entry. A word of
    more than `POSTING_LIMIT` bags is not looked up: in a document whose every requirement
    is made of a few hundred words (a generated one) all words are frequent, and the pairs
    would grow with the square of the document."""
    distinct: dict[tuple[str, ...], int] = {}
    for n in members:
        distinct.setdefault(bags[n], n)
    if len(distinct) < 2:
        return set()
    frequency = Counter(w for bag in distinct for w in set(bag))
    index: dict[str, list[int]] = defaultdict(list)
    pairs = set()
    for bag, n in distinct.items():
        words = sorted(set(bag), key=lambda w: (frequency[w], w))
        prefix = len(words) - int(threshold * len(words) + 0.999) + 1
        for word in words[:prefix]:
            if frequency[word] > POSTING_LIMIT:
                break  # this and every later word are too frequent to tell bags apart
            posting = index[word]
            for other in posting:
                pairs.add((other, n))
            posting.append(n)
    return pairs


def _candidates(
    requirements: list[Requirement], keys: list[str], bags: list[tuple[str, ...]]
) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """(pairs by bag, id or length; pairs where one repeats the other's whole statement)."""
    by_bag: dict[tuple[str, ...], list[int]] = defaultdict(list)
    by_id: dict[str, list[int]] = defaultdict(list)
    by_key: dict[str, list[int]] = defaultdict(list)
    bodies = [r.body for r in requirements]
    for n, (requirement, bag) in enumerate(zip(requirements, bags, strict=True)):
        if len(bag) >= 2:
            by_bag[bag].append(n)
        # smaller bags one word apart overlap too little; long ones are paired by prefix
        if DELETION_FROM <= len(bag) < LONG:
            for left_out in range(len(bag)):
                if left_out and bag[left_out] == bag[left_out - 1]:
                    continue  # the same bag as leaving out its twin
                by_bag[bag[:left_out] + bag[left_out + 1 :]].append(n)
        if requirement.id:
            by_id[requirement.id].append(n)
        by_key[keys[n]].append(n)
        if "(" in bodies[n] or "[" in bodies[n]:  # and without its brackets
            stripped = text_key(_BRACKETED.sub(" ", bodies[n]))
            if stripped != keys[n]:
                by_key[stripped].append(n)
    long = [n for n, bag in enumerate(bags) if len(set(bag)) >= LONG]
    # Chinese bags are pairs of characters: one character changed changes two of them
    chinese = [n for n, r in enumerate(requirements) if r.language == "zh" and len(bags[n]) >= 3]
    pairs = (
        _pairs_of(by_bag.values())
        | _pairs_of(by_id.values())
        | _prefix_pairs(bags, long, LONG_OVERLAP)
        | _prefix_pairs(bags, chinese, ZH_OVERLAP)
    )
    repeats = set()
    for n, body in enumerate(bodies):
        # its sentences, and its text without what it says in brackets ("(Listed as a
        # Delivery Requirement)", "[Harrison to ask ...]"): another requirement that is one
        # of them repeats this one's statement
        parts = (
            [s for s in _SENTENCE.split(body) if s.strip()] if _SENTENCE_END.search(body) else []
        )
        parts = [(part, REPEATED_WORDS) for part in parts]
        if "(" in body or "[" in body:  # the text without its brackets: at least three words
            parts.append((_BRACKETED.sub(" ", body), 3))
        for part, least in parts:
            for other in by_key.get(text_key(part), ())[:GROUP_LIMIT]:
                if other != n and len(bags[other]) >= least:
                    repeats.add((min(n, other), max(n, other)))
    return pairs, repeats


# --- judging a pair ------------------------------------------------------------------------

_CONTRADICTIONS = {("modal", "weaker"), ("modal", "stronger"), ("quantity", "changed")}


def _contradictions(changes: list[Change]) -> list[Change]:
    """The changes that contradict: a modal verb of another strength, a number changed for
    the same measure, a negation added or dropped. A number or modal only one side has adds
    to the other rather than contradicting it."""
    return [c for c in changes if (c.kind, c.what) in _CONTRADICTIONS or c.kind == "negation"]


_COUNTS = re.compile(r"\s*[A-Za-z\u4e00-\u9fff]")
_WORD_BEFORE = re.compile(r"[A-Za-z\u4e00-\u9fff]\s*$")


def _counted(change: Change, first: str, second: str) -> bool:
    """A change is a contradiction unless it is of numbers without a unit or a bound that
    count nothing: "display 10 results" / "20 results" is one; a page number left at the
    end of a line ("(M) 6" / "(M) 7") or a row number in front ("58 The system ...") is
    not. A number that counts stands between words."""
    if change.kind != "quantity":
        return True
    if any(q.unit or q.bound for q in quantities(f"{change.before} {change.after}")):
        return True
    return all(
        (at := text.find(number)) > 0
        and _COUNTS.match(text, at + len(number))
        and _WORD_BEFORE.search(text, 0, at)
        for number, text in ((change.before, first), (change.after, second))
    )


def _other_situation(changes: list[Change]) -> bool:
    """Changes that make the two about different things or situations: another condition,
    actor or named entity, or a number with a unit only one side has."""
    return any(
        c.kind in ("condition", "actor", "entity")
        or (c.kind == "quantity" and c.what in ("added", "dropped") and _has_unit(c))
        for c in changes
    )


def _has_unit(change: Change) -> bool:
    return any(q.unit for q in quantities(change.before or change.after))


def _parallel(a: str, b: str) -> bool:
    """Whether two English texts are parallel requirements rather than one said twice:
    somewhere one content word stands in place of another ("encrypt" / "decrypt",
    "hardware" / "software"), not a rewording of several words. (Chinese is compared by
    character, where a moved clause also replaces a character or two: there the overlap of
    character pairs decides.)"""
    set_aside = _set_aside_en()
    for op in word_diff(a, b):
        if op.tag != "replace":
            continue
        old, new = op.old.strip().lower(), op.new.strip().lower()
        if (
            old.isalpha()
            and new.isalpha()
            and len(old) >= 3
            and len(new) >= 3
            and old not in set_aside
            and new not in set_aside
            and _stem(old) != _stem(new)
        ):
            return True
    return False


def _words_only_added(a: str, b: str) -> bool:
    """Whether one text is the other with words added or left out, nowhere with words
    replaced by others (but for function words and inflections): a long requirement copied
    with a clause dropped, not a parallel one about another object."""
    set_aside = _set_aside_en()
    for op in word_diff(a, b):
        if op.tag != "replace":
            continue
        old = {_stem(w) for w in _WORD.findall(op.old.lower()) if w not in set_aside}
        new = {_stem(w) for w in _WORD.findall(op.new.lower()) if w not in set_aside}
        if old and new and old != new:
            return False
    return True


def _pair_words(a: Requirement, b: Requirement, changes: list[Change]) -> list[str]:
    """The words that differ: what contradicts for a conflict, else the word diff."""
    if changes:
        return ["; ".join(c.before for c in changes), "; ".join(c.after for c in changes)]
    gone, came = changed_words(a.body, b.body)
    return [" … ".join(w for w in gone if w)[:120], " … ".join(w for w in came if w)[:120]]


def pair_findings(requirements: list[Requirement], variants: dict[str, str]) -> list[CrossFinding]:
    keys = [text_key(r.body) for r in requirements]
    bags = [_bag(r.body, variants) for r in requirements]
    pairs, repeats = _candidates(requirements, keys, bags)
    meanings: dict[int, Meaning] = {}

    def meaning(n: int) -> Meaning:
        if n not in meanings:
            meanings[n] = extract(requirements[n].body, requirements[n].language)
        return meanings[n]

    found = []
    duplicates = defaultdict(list)
    for n, key in enumerate(keys):
        if len(key.split()) >= 3 or (_CJK.search(key) and len(key) >= 4):
            duplicates[key].append(n)
    for members in duplicates.values():
        for other in members[1:]:  # each later one with the first
            found.append((members[0], other, "duplicate", []))
    seen_duplicates = {(a, b) for a, b, _, _ in found}
    first_of_bag: dict[tuple[str, ...], int] = {}
    for n, bag in enumerate(bags):
        first_of_bag.setdefault(bag, n)
    for a, b in sorted(pairs | repeats):
        if keys[a] == keys[b] or (a, b) in seen_duplicates:
            continue
        if bags[a] == bags[b] and first_of_bag[bags[a]] != a:
            continue  # of requirements with one bag, each is read against the first only
        if (a, b) in repeats:
            found.append((a, b, "near-duplicate", []))
            continue
        overlap = _overlap(bags[a], bags[b])
        same_id = bool(requirements[a].id) and requirements[a].id == requirements[b].id
        chinese = requirements[a].language == "zh" and requirements[b].language == "zh"
        if overlap < (SAME_ID_OVERLAP if same_id else ZH_OVERLAP if chinese else CONFLICT_OVERLAP):
            continue
        changes = compare(meaning(a), meaning(b))
        if _other_situation(changes):
            continue
        contradicting = _contradictions(changes)
        long = (
            len(set(bags[a])) >= LONG
            and _multiset_overlap(bags[a], bags[b]) >= LONG_OVERLAP
            and _words_only_added(requirements[a].body, requirements[b].body)
        )
        first, second = requirements[a].body, requirements[b].body
        contradicting = [c for c in contradicting if _counted(c, first, second)]
        if contradicting:
            found.append((a, b, "conflict", contradicting))
        elif (overlap == 1.0 or same_id or long or chinese) and not _parallel(first, second):
            found.append((a, b, "near-duplicate", []))
    findings = []
    for a, b, kind, changes in sorted(found, key=lambda f: (f[0], f[1])):
        first, second = requirements[a], requirements[b]
        words = _pair_words(first, second, changes) if kind != "duplicate" else ["", ""]
        findings.append(CrossFinding(RULES[kind], [first, second], words, changes))
    return findings


def cross_findings(requirements: list[Requirement]) -> list[CrossFinding]:
    """Every check across the requirements of one document, pairs first, then drift."""
    drifts = term_drift(requirements)
    findings = pair_findings(requirements, _variant_map(drifts))
    for drift in [*drifts, *unit_drift(requirements)]:
        findings.append(
            CrossFinding(RULES[drift.kind], list(drift.requirements), list(drift.names))
        )
    return findings
