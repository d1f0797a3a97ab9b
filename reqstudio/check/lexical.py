"""Language rules: the word lists of ISO/IEC/IEEE 29148 5.2.7 and of the INCOSE rules, plus the
few that need more than a list (vague pronouns, passive voice, combinators joining two
actions, oblique symbols, parentheses, repeated words, references without a version).

Each returns `Hit`s (rule, term, span) on one requirement's text; `engine` merges hits of
several rules on one word into one finding."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from reqstudio.check.rules import Hit, WordList, catalog, word_list, word_set, words_of

# --- word lists ------------------------------------------------------------------------

_CASE_SENSITIVE = {"INCOSE-R38"}
_ADVERB = re.compile(r"^\w{3,}ly$", re.IGNORECASE)


@dataclass(frozen=True)
class _ListIndex:
    """Every word list of the catalog in one language, and which of them a word or a
    substring can start: a requirement's words pick the lists worth scanning (most hold
    none of its words)."""

    lists: tuple[tuple[str, WordList], ...]  # (rule id, list), in catalog order
    by_word: dict[str, frozenset[int]]  # a key word -> the lists holding a phrase of it
    by_substring: dict[str, frozenset[int]]  # a key substring (Chinese, "e.g.") -> lists
    always: frozenset[int]  # lists with `re:` entries, which need no key
    case_sensitive: frozenset[int]


@cache
def _list_index(language: str) -> _ListIndex:
    lists = tuple(
        (rule.id, word_list(language, name, rule.id in _CASE_SENSITIVE))
        for rule in catalog().values()
        for name in rule.lists
    )
    by_word: dict[str, set[int]] = {}
    by_substring: dict[str, set[int]] = {}
    for position, (_, words) in enumerate(lists):
        for key in words.by_word:
            by_word.setdefault(key, set()).add(position)
        for key in words.by_substring:
            by_substring.setdefault(key, set()).add(position)
    return _ListIndex(
        lists,
        {key: frozenset(found) for key, found in by_word.items()},
        {key: frozenset(found) for key, found in by_substring.items()},
        frozenset(n for n, (_, w) in enumerate(lists) if w.always),
        frozenset(n for n, (_, w) in enumerate(lists) if w.case_sensitive),
    )


def list_hits(text: str, language: str) -> list[Hit]:
    index = _list_index(language)
    chosen = set(index.always)
    for words in (words_of(text), words_of(text, True) if index.case_sensitive else ()):
        for word in words:
            chosen |= index.by_word.get(word, frozenset())
    folded = text.casefold()
    for key, lists in index.by_substring.items():
        if key in folded or key in text:  # (a case-sensitive list keeps its key's case)
            chosen |= lists
    hits = []
    for position in sorted(chosen):
        rule_id, matcher = index.lists[position]
        for a, b, term in matcher.matches(text):
            hits.append(Hit(rule_id, term, a, b))
    return hits


# --- passive voice (INCOSE R2) -----------------------------------------------------------

_BE_PARTICIPLE = re.compile(
    r"\b(?:am|are|is|was|were|be|been|being)\s+(?:not\s+)?(?:\w+ly\s+)?(?P<verb>[a-z]+)\b",
    re.IGNORECASE,
)


# a passive clause with its "be" left out after a conjunction: "when sent as an email
# attachment", "if selected by the driver", "once generated and distributed"
_ELIDED_PASSIVE = re.compile(
    r"\b(?:when|if|once|unless|until)\s+(?:\w+ly\s+)?(?P<verb>[a-z]+)\s+"
    r"(?:by|as|to|in|on|from|with|and|or|for|at)\b",
    re.IGNORECASE,
)


def passive_hits(text: str, language: str) -> list[Hit]:
    if language != "en":
        return []
    participles = word_set("en", "incose-r2-passive-participles")
    hits = []
    for pattern in (_BE_PARTICIPLE, _ELIDED_PASSIVE):
        for match in pattern.finditer(text):
            verb = match.group("verb").lower()
            if verb in participles or (verb.endswith("ed") and len(verb) > 4):
                hits.append(Hit("INCOSE-R2", match.group(), match.start(), match.end()))
    return hits


# --- combinators joining two actions (INCOSE R19) ------------------------------------------

_COMBINATOR = re.compile(
    r"(?<![\w/-])(?:and|or|but|unless|whereas|otherwise|as well as|but also)(?![\w/-])"
    r"(?P<ahead>(?:\s+[\w’'-]+){1,2})",
    re.IGNORECASE,
)
_MODALS = {"shall", "must", "will", "should", "may", "can"}
_BEFORE_VERB = {"then", "also", "never", "not", "to"}


def _is_verb(word: str, verbs: frozenset[str]) -> bool:
    """`word` is one of `verbs` or a form of one (sends, updated, updating, shown)."""
    stems = {word, word[:-1], word[:-2], word[:-3], word[:-3] + "e", word[:-2] + "e"}
    forms = word.endswith(("s", "ed", "ing", "n")) or word in verbs
    return forms and bool(stems & verbs) and len(word) > 2


_AUXILIARIES = {"has", "have", "does", "do", "able", "which", "who", "be", "is", "are", "cannot"}
_FINITE = {"shall", "must", "will", "should", "can", "may", "is", "are", "was", "were"}


def _second_clause(text: str, match: re.Match) -> bool:
    """The combinator joins two clauses, each with a verb of its own: "when a breach occurs
    and a contact sensor is set OPEN" (not "all sensors and controllers will be": the words
    before "and" hold no verb)."""
    following = [t.lower() for t in _TOKEN.findall(text[match.end() - len(match.group("ahead")) :])]
    if following[:1] == ["then"]:  # "choose a goal and then the system will display ..."
        following = following[1:]
    # a new subject: "and a contact sensor is", "and no research will be", "and it shall"
    if not following or following[0] not in _DETERMINERS | {"it", "they", "there"}:
        return False
    if not set(following[:4]) & _FINITE or set(following[:4]) & {".", ";", ":"}:
        return False
    preceding = [t.lower() for t in _TOKEN.findall(text[: match.start()])]
    start = max((n + 1 for n, t in enumerate(preceding) if t in {".", ";", ":"}), default=0)
    clause = preceding[start:]
    verbs = word_set("en", "verbs")
    return bool(set(clause) & _FINITE) or any(
        t.endswith("s") and t[:-1] in verbs for t in clause[1:]
    )


def _combinators(text: str) -> list[re.Match]:
    """Every combinator with the words after it, a combinator among those words included
    ("both Linux and Windows and should be": the second "and" is one too)."""
    found = []
    match = _COMBINATOR.search(text)
    while match is not None:
        found.append(match)
        match = _COMBINATOR.search(text, match.end() - len(match.group("ahead")))
    return found


def combinator_hits(text: str, language: str) -> list[Hit]:
    if language != "en":
        return []
    verbs = word_set("en", "verbs")
    hits = []
    for match in _combinators(text):
        ahead = [w.lower() for w in match.group("ahead").split()]
        # "and then process", "but never shown", "and shall send", "or send": a second action
        if len(ahead) > 1 and (ahead[0] in _BEFORE_VERB or _ADVERB.match(ahead[0])):
            ahead = ahead[1:]
        first = ahead[0] if ahead else ""
        after = ahead[1] if len(ahead) > 1 else ""
        # a noun, not an action: "the management and control of", "and operating systems"
        # a gerund acts only on an object ("and updating of shipping methods", "and sending
        # the report"); otherwise it is a noun ("the transmission and processing are",
        # "and processing hardware", "sending and receiving multicast message")
        gerund = first.endswith("ing")
        nominal = (after not in _DETERMINERS and after != "of") if gerund else after == "of"
        # a verb's form that names a thing in the subject: "identity and access management
        # MUST provide" (no verb before "and" in the sentence, the modal right after the
        # next word); after a clause it starts a second one: "... shall be logged and
        # selected errors shall be reported"
        rest = [t.lower() for t in _TOKEN.findall(text[match.end() :])]
        if len(ahead) == 2 and rest[:1] and rest[0] in _FINITE:
            preceding = [t.lower() for t in _TOKEN.findall(text[: match.start()])]
            start = max((n + 1 for n, t in enumerate(preceding) if t in ".;:!?"), default=0)
            nominal = nominal or not set(preceding[start:]) & _FINITE
        action = (
            first in _MODALS or first in _AUXILIARIES or (_is_verb(first, verbs) and not nominal)
        )
        if action or _second_clause(text, match):
            word = match.group()[: len(match.group()) - len(match.group("ahead"))]
            hits.append(Hit("INCOSE-R19", word, match.start(), match.start() + len(word)))
    return hits


# --- oblique symbol (INCOSE R17) -------------------------------------------------------

_OBLIQUE = re.compile(r"(?<![\w/:.])([A-Za-z][\w-]*)/([A-Za-z][\w-]*)(?![\w/])")
_UNITS = {
    "s", "sec", "ms", "h", "hr", "hrs", "min", "day", "d", "month", "year", "yr", "kg",
    "m", "m2", "m3", "km", "cm", "mm", "minute", "second", "hour", "week", "hz", "khz", "mhz",
}  # fmt: skip


def oblique_hits(text: str, language: str) -> list[Hit]:
    exceptions = word_list(language if language == "en" else "en", "incose-r17-oblique")
    names = exceptions.exceptions
    hits = []
    for match in _OBLIQUE.finditer(text):
        if match.group(2).lower() in _UNITS or "www" in match.group().lower():
            continue
        if names is not None and names.fullmatch(match.group()):
            continue
        hits.append(Hit("INCOSE-R17", match.group(), match.start(), match.end()))
    return hits


# --- parentheses (INCOSE R21) ----------------------------------------------------------

_PARENTHESES = re.compile(r"[(（][^()（）]{1,120}[)）]")
_ACRONYM_ONLY = re.compile(r"[(（][A-Z][A-Za-z0-9]*[A-Z0-9]s?[)）]")
_PLURAL_OR_INDEX = re.compile(r"[(（](?:s|es|\d{1,2}|[a-z]|[ivx]{1,4})[)）]")
# a requirement's status mark, a document's convention: "(M)" mandatory, "(O)" optional
_STATUS_MARK = re.compile(r"[(（](?:[A-Z]|M/O|[Mm]andatory|[Oo]ptional|[Dd]esirable)[)）]")


_SMALL_WORDS = {"of", "and", "for", "the", "to", "a", "an", "in", "on", "or", "by", "with"}


def _defines(text: str, start: int, acronym: str) -> bool:
    """The words before `start` spell `acronym` ("Mission Management Center (MMC)",
    "Extensible Markup Language (XML)"): its letters in order within the last few words
    (not "English (UK)": the parentheses then say which English)."""
    letters = acronym.rstrip("s").upper()
    words = [w for w in re.findall(r"[\w]+", text[:start]) if w.lower() not in _SMALL_WORDS]
    joined = "".join(words[-(len(letters) + 3) :]).upper()
    position = 0
    for letter in letters:
        position = joined.find(letter, position) + 1
        if not position:
            return False
    return True


def parentheses_hits(text: str, language: str) -> list[Hit]:
    hits = []
    for match in _PARENTHESES.finditer(text):
        if _ACRONYM_ONLY.fullmatch(match.group()) and (
            language != "en" or _defines(text, match.start(), match.group()[1:-1])
        ):
            continue
        if any(form.fullmatch(match.group()) for form in (_PLURAL_OR_INDEX, _STATUS_MARK)):
            continue
        hits.append(Hit("INCOSE-R21", match.group(), match.start(), match.end()))
    return hits


# --- repeated word (INCOSE R30) --------------------------------------------------------

_REPEATED = re.compile(r"\b(\w{2,})\s+\1\b", re.IGNORECASE)


def repeated_hits(text: str, language: str) -> list[Hit]:
    return [
        Hit("INCOSE-R30", m.group(1), m.start(), m.end())
        for m in _REPEATED.finditer(text)
        if not m.group(1).isdigit()
    ]


# --- references without a name, version or part (ISO 29148 incomplete references) -------

_REFERENCE_EN = re.compile(
    r"\b(?:conform(?:s|ing)? to|compl(?:y|ies|iant) with|according to|in accordance with|"
    r"as (?:defined|specified|described) in|refer(?:s)? to|as per|adheres? to|compatible with|"
    r"(?:specified|defined|prescribed) (?:by|in(?! order\b))|meets?|satisf(?:y|ies)|follows?)\b"
    r"(?P<window>(?:\s+[^\s.;]+){1,8})",
    re.IGNORECASE,
)
_REFERENCE_EN_OBJECT = re.compile(
    r"\b(?:standards?|documents?|specifications?|guidelines?|policy|policies|regulations?|"
    r"process(?:es)?|procedures?|rules?|agreements?|legislation|laws?|directives?|"
    r"environments?|requirements of)\b",
    re.IGNORECASE,
)
_REFERENCE_ZH = re.compile(r"(?:符合|遵循|遵守|依据|按照|参照|参见)(?P<window>[^，。；,;]{0,12})")
_REFERENCE_ZH_OBJECT = re.compile(r"标准|规范|文档|规定|政策|法规")


# what names a reference's version or part: "1.2", "802.3", "9001", "2003", "v2", "[2]", "第3章"
# (not the digits inside a name such as PC104+)
_IDENTIFYING = re.compile(
    r"(?<![A-Za-z\d])\d{2,}(?:[.:-]\d+)*|\d+\.\d+|\bv\d+|\[\d+\]|\bsection\s+\d|第\s*\d", re.I
)


def reference_hits(text: str, language: str) -> list[Hit]:
    pattern, target = (
        (_REFERENCE_ZH, _REFERENCE_ZH_OBJECT)
        if language == "zh"
        else (_REFERENCE_EN, _REFERENCE_EN_OBJECT)
    )
    hits = []
    for match in pattern.finditer(text):
        window = match.group("window")
        if target.search(window) and not _IDENTIFYING.search(window):
            hits.append(
                Hit(
                    "ISO29148-incomplete-reference",
                    match.group().strip(),
                    match.start(),
                    match.end(),
                )
            )
    return hits


# --- tokens, shared by the rules that read words -----------------------------------------

# (a PDF's ligatures start words too: "ﬁles" is files, not "les")
_TOKEN = re.compile(r"[A-Za-z\ufb00-\ufb06][\w’'-]*|[.;:!?]")
_DETERMINERS = {
    "the", "a", "an", "each", "every", "any", "all", "this", "that", "these", "those",
    "its", "their", "his", "her", "our", "your", "no", "some", "another", "other",
}  # fmt: skip


# --- purpose infinitives (INCOSE R20) -------------------------------------------------------

_WORD = re.compile(r"[A-Za-z][\w’'-]*|[.;:!?]")
# Verbs whose object the infinitive completes, a few words on: "allow the user to select",
# "uses wireless communication to send", "communicate with the tax system to calculate".
_COMPLETES_OBJECT = {
    "allow", "allows", "allowed", "allowing", "enable", "enables", "enabled", "enabling",
    "permit", "permits", "permitted", "let", "lets", "require", "requires", "required",
    "ask", "asks", "asked", "cause", "causes", "force", "forced", "instruct", "instructed",
    "prompt", "prompted", "remind", "invite", "invited", "authorize", "authorized",
    "authorise", "authorised", "tell", "told", "train", "trained", "teach", "direct",
    "directed", "help", "helps", "intended", "use", "uses", "using", "communicate",
    "communicates", "interact", "interacts", "up",
}  # fmt: skip
# Words right before "to" that the infinitive completes: "be able to", "the option to
# export", "easy to use", "in order to" and "so as to" (list hits), "how to", "up to".
_COMPLETES_WORD = {
    "want", "wants", "need", "needs", "used", "has", "have", "had", "having", "try",
    "tries", "attempt", "attempts", "wish", "wishes", "like", "prefer", "expect", "expected",
    "able", "unable", "likely", "unlikely", "going", "ought", "order", "as", "ability",
    "abilities", "capability", "capabilities", "capacity", "option", "options", "opportunity",
    "right", "rights", "permission", "chance", "possibility", "effort", "efforts", "means",
    "way", "ways", "time", "tool", "tools", "easy", "difficult", "hard", "possible",
    "impossible", "necessary", "practical", "impractical", "feasible", "free", "ready",
    "willing", "eligible", "how", "what", "whether", "where", "which", "who", "when", "due",
}  # fmt: skip
_OBJECT_REACH = 10  # words back from "to" in which a verb of _COMPLETES_OBJECT counts


def purpose_hits(text: str, language: str) -> list[Hit]:
    """ "to <verb> <object>" giving the reason for what is required ("network switches shall
    be employed to distribute traffic", "... fiber optic to meet RFI specifications"): INCOSE
    R20 wants the purpose in the rationale. Not where the infinitive completes a word ("be
    able to", "the option to export", "allow the user to select") or a noun ("the product to
    configure." has no object: it says which product)."""
    if language != "en" or "to" not in words_of(text):
        return []
    verbs = word_set("en", "verbs") | word_set("en", "incose-r20-purpose-verbs")
    tokens = list(_WORD.finditer(text))
    hits = []
    for n in range(1, len(tokens) - 2):
        verb = tokens[n + 1].group().lower()
        if tokens[n].group().lower() != "to" or verb not in verbs:
            continue
        if tokens[n + 2].group() in ".;:!?" or tokens[n - 1].group().lower() in _COMPLETES_WORD:
            continue
        before = []
        for token in reversed(tokens[max(0, n - _OBJECT_REACH) : n]):
            if token.group() in ".;:!?":
                break
            before.append(token.group().lower())
        if not before or set(before) & _COMPLETES_OBJECT:
            continue
        hits.append(Hit("INCOSE-R20", f"to {verb}", tokens[n].start(), tokens[n + 1].end()))
    return hits


def language_hits(text: str, language: str) -> list[Hit]:
    from reqstudio.check.pronouns import pronoun_hits

    found = list_hits(text, language)
    for finder in (
        passive_hits,
        combinator_hits,
        oblique_hits,
        parentheses_hits,
        repeated_hits,
        reference_hits,
        pronoun_hits,
        purpose_hits,
    ):
        found += finder(text, language)
    return found
