"""Reading the words that carry a requirement's meaning, English and Chinese: modal verbs and
their strength, negations, conditions with their words, the grammatical subject, the people
and roles named, and named entities (ids, acronyms, CamelCase, capitalised and quoted names).
`reqstudio.check.meaning` puts them together and compares two wordings; the cross-requirement
checks read them too. Regular expressions and two small word lists (`data/*/persons.txt`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from reqstudio.check.patterns import ALPHA_ID_RE
from reqstudio.check.rules import DATA

STRENGTHS = ("binding", "advisory", "permissive")

# --- modal verbs -------------------------------------------------------------------------
MODAL_EN = re.compile(
    r"\b(?P<binding>shall|must|(?:is|are|be) required to|ha(?:s|ve) to|needs? to|"
    r"(?:is|are) obliged to)\b"
    r"|\b(?P<advisory>should|ought to|(?:is|are) recommended to|it is recommended that)\b"
    r"|\b(?P<permissive>may(?!\s+\d)|can(?:not)?|could|might|will|would|"
    r"(?:is|are) (?:allowed|permitted|able) to)\b",
    re.IGNORECASE,
)
MODAL_ZH = re.compile(
    r"(?P<advisory>应该|宜(?![人居])|最好)"
    r"|(?P<binding>必须|务必|应当|(?<![反对适响供回感效相答呼顺理])应(?![用答对急聘变激付]|收(?!到))"
    r"|(?<![所无必])须(?![知])|(?<![所无必])需(?![求要])|不得|禁止|严禁)"
    r"|(?P<permissive>可以|能够|允许|(?<![许认宁])可(?![靠用视选信见行控扩配维测移逆重变调执操比观"
    r"能疑接读写编获达])"
    r")"
)

# --- negations ---------------------------------------------------------------------------
NEGATION_EN = re.compile(
    r"\b(?:not|no|never|none|nothing|nobody|neither|nor|without|cannot|"
    r"(?:can|won|don|doesn|isn|aren|mustn|shouldn|shan|wasn|weren|hasn|haven|didn)['’]t)\b",
    re.IGNORECASE,
)
NOT_NEGATION_EN = re.compile(
    r"\bnot\s+only\b|\bwhether\s+or\s+not\b|\bor\s+not\b|\bno\.\s*\d|\bnot\s+exceed"
    r"|\b(?:no|not)\s+(?:later|earlier|more|less|longer|shorter|fewer|greater|higher|lower)"
    r"\s+than\b",
    re.IGNORECASE,
)
NEGATION_ZH = re.compile(r"不|无(?![论线])|没有|没|未|非(?![常法])|禁止|严禁|勿")
NOT_NEGATION_ZH = re.compile(
    r"不(?:同|断|仅|但|过|论|管|久|超过|超出|少于|低于|大于|小于|高于|多于|晚于|长于|短于)"
    r"|除非|并非只|无论"
)

# --- conditions --------------------------------------------------------------------------
_CONDITION_EN = re.compile(
    r"\b(?P<trigger>if and only if|only if|if|whenever|when|once|in case(?: of)?|"
    r"in the event(?: of| that)?|provided(?: that)?|upon)\b"
    r"|\b(?P<state>while|as long as|during)\b"
    r"|\b(?P<exception>unless|except (?:when|if|where))\b"
    r"|(?:^|(?<=[.;:]\s))(?P<feature>where)\b",
    re.IGNORECASE,
)
_CONDITION_ZH = re.compile(
    r"(?P<trigger>如果|假如|倘若|如若|要是|若|一旦|每当|当(?=[^，,。；;]{1,40}?(?:时|之时|后|以后|之后))"
    r"|在(?=[^，,。；;]{1,40}?(?:情况下|条件下|前提下|(?<![小按及同实定超计临准])时(?![间段刻区钟]))))"
    r"|(?P<state>只要|在(?=[^，,。；;]{1,40}?(?:期间|过程中|状态下|模式下)))"
    r"|(?P<exception>除非)"
)
_ZH_CONDITION_END = re.compile(
    r"[，,。；;]|那么|则|(?:的)?(?:情况下|条件下|前提下|时候|期间|过程中|状态下|模式下)|之时|以后|之后|后"
    r"|(?<![小按及同实定超计临准])时(?![间段刻区钟])"
)
_CLAUSE_END_EN = re.compile(r"[,;:]|\bthen\b|\.(?:\s|$)", re.IGNORECASE)

# --- actors and entities -----------------------------------------------------------------
GENERIC_ACTORS = {
    "system",
    "software",
    "application",
    "product",
    "系统",
    "本系统",
    "软件",
    "该系统",
}
_PRONOUN_SUBJECTS = {"it", "there", "this", "that", "they", "he", "she", "we", "you", "i", "one"}
_DETERMINERS = {
    "the", "a", "an", "each", "every", "all", "any", "this", "that", "these", "those", "its",
    "their", "his", "her", "our", "your", "some", "no", "such", "then",
}  # fmt: skip
_STOPWORDS = _DETERMINERS | {
    "and", "or", "of", "to", "in", "on", "at", "by", "for", "from", "with", "as", "into",
    "onto", "be", "is", "are", "was", "were", "been", "being", "it", "which", "who", "whom",
    "shall", "must", "should", "may", "can", "will", "would", "could", "might", "not", "if",
    "when", "while", "unless", "where", "once", "than", "so", "do", "does", "has", "have",
    "had", "there", "they", "them", "he", "she", "we", "you", "i", "also", "only", "able",
    "via", "per", "within", "under", "upon", "after", "before", "during", "until",
}  # fmt: skip
_PREPOSITIONS = {"of", "for", "in", "on", "at", "by", "from", "with", "to", "within", "under"}
WORD_EN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:['’-][A-Za-z0-9]+)*")
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9&]*[A-Z0-9]s?\b")
_CAMEL = re.compile(r"\b(?:[a-z]+[A-Z]|[A-Z][a-z0-9]+[A-Z])[A-Za-z0-9]*\b")
# Title-case words in a row ("Payment Gateway", "Bank of America"); acronyms are their own
_CAPITALISED = re.compile(
    r"\b[A-Z][a-z0-9][A-Za-z0-9]*(?:[-'’][A-Za-z]+)?(?:\s+(?:(?:of|and|for|the|de)\s+)?"
    r"[A-Z][a-z0-9][A-Za-z0-9]*(?:[-'’][A-Za-z]+)?)*"
)
_QUOTED = re.compile(
    r"“([^”]{1,60})”|\"([^\"]{1,60})\"|‘([^’]{1,60})’|(?<!\w)'([^']{1,60})'(?!\w)"
    r"|「([^」]{1,60})」|『([^』]{1,60})』|《([^》]{1,60})》|`([^`]{1,60})`"
)
_LATIN_RUN = re.compile(r"[A-Za-z][A-Za-z0-9_.+#-]*")
_NOT_ENTITIES = {
    "SHALL", "MUST", "SHOULD", "MAY", "NOT", "AND", "OR", "THE", "WILL", "CAN", "IF", "WHEN",
    "REQUIRED", "RECOMMENDED", "OPTIONAL", "NO", "A", "AN", "OF", "TO", "IN", "ON", "ALL",
    "ANY", "NONE", "WHILE", "UNLESS", "WHERE", "THEN",
}  # fmt: skip
# capitalised words that start a sentence by grammar, not names
_SENTENCE_WORDS = {
    "The", "A", "An", "When", "If", "While", "Where", "Unless", "Once", "Each", "Every", "All",
    "Any", "This", "That", "These", "Those", "It", "In", "On", "At", "For", "After", "Before",
    "Upon", "During", "Users", "User", "Then", "No", "There", "Only", "Both", "Its", "Their",
    "As", "According", "To", "With", "From", "By", "Within", "Under", "Because", "Although",
    "Whenever", "Either", "Neither", "Should", "Also", "Otherwise", "Without", "Until",
}  # fmt: skip


@dataclass(frozen=True)
class Modal:
    word: str
    strength: str  # "binding", "advisory", "permissive"
    start: int


@dataclass(frozen=True)
class Condition:
    kind: str  # "trigger" (if, when, once, 如果, 当…时), "state" (while, 在…期间), "exception"
    # (unless, 除非), "feature" (EARS "Where", English only)
    marker: str  # the word as written
    text: str  # the condition's words, marker included
    words: frozenset[str]  # its content words (stems; Chinese: character pairs)
    start: int
    end: int


# --- reading -----------------------------------------------------------------------------


def language_of(text: str) -> str:
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    return "zh" if cjk >= 2 else "en"


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A crude English stem, the same for the inflections a rewording changes: users/user,
    logged/logging/log, entries/entry, e-mail/email."""
    word = word.lower().replace("’", "'").removesuffix("'s").replace("-", "")
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ied", "y"), ("ing", ""), ("ed", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + keep
            break
    else:
        if (word.endswith("es") and word[-3:-2] in ("x", "z")) or word.endswith(("ches", "shes")):
            word = word[:-2]
        elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
            word = word[:-1]
    if len(word) > 4 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]  # logg(ed) -> log, stopp(ed) -> stop
    return word.removesuffix("e") if len(word) > 4 else word


def content_words(text: str, language: str | None = None) -> frozenset[str]:
    """The stems of the words that are neither function words nor modal verbs; in Chinese,
    the pairs of neighbouring characters (and Latin words as stems)."""
    if (language or language_of(text)) == "zh":
        chars = re.sub(r"[^\u4e00-\u9fff]+", " ", text)
        pairs = {run[i : i + 2] for run in chars.split() for i in range(max(1, len(run) - 1))}
        latin = {stem(w) for w in WORD_EN.findall(text) if w.lower() not in _STOPWORDS}
        return frozenset(pairs | latin)
    return frozenset(stem(w) for w in WORD_EN.findall(text) if w.lower() not in _STOPWORDS)


@cache
def person_nouns() -> dict[str, frozenset[str]]:
    """The role nouns of people, per language (`data/<language>/persons.txt`)."""
    found = {}
    for language in ("en", "zh"):
        path = DATA / language / "persons.txt"
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        found[language] = frozenset(
            line.strip().lower() for line in lines if line.strip() and not line.startswith("#")
        )
    return found


def spans(matches) -> list[tuple[int, int]]:
    return [m.span() for m in matches]


def inside(position: int, ranges: list[tuple[int, int]]) -> bool:
    return any(a <= position < b for a, b in ranges)


def read_modals(pattern: re.Pattern[str], text: str) -> list[Modal]:
    found = []
    for match in pattern.finditer(text):
        strength = next(name for name in STRENGTHS if match.group(name))
        found.append(Modal(match.group(), strength, match.start()))
    return found


def conditions_en(text: str, modals: list[Modal]) -> list[Condition]:
    found = []
    for match in _CONDITION_EN.finditer(text):
        kind = next(k for k in ("trigger", "state", "exception", "feature") if match.group(k))
        word = match.group().lower()
        if word == "once" and re.match(
            r"\s+(?:a|an|per|every|each|daily|\d)\b", text[match.end() :]
        ):
            continue  # "once a day" is a rate
        if word == "upon" and not re.match(
            r"\s+(?:the\s+)?\w+(?:ing|ion|al)\b", text[match.end() :]
        ):
            continue  # "upon request" yes, "depends upon X" no
        end_match = _CLAUSE_END_EN.search(text, match.end())
        end = end_match.start() if end_match else len(text)
        later = [m for m in modals if match.end() < m.start < end]
        if later:  # "When X the system shall ...": the condition ends before the subject
            end = _before_subject(text, match.end(), later[0].start)
        clause = text[match.start() : end].strip()
        found.append(
            Condition(
                kind,
                match.group(),
                clause,
                content_words(text[match.end() : end], "en"),
                match.start(),
                end,
            )
        )
    return found


def _before_subject(text: str, start: int, modal: int) -> int:
    """Where a condition written without a comma ends: before the noun phrase that is the
    subject of the modal at `modal` (back to its determiner, at most four words)."""
    words = list(WORD_EN.finditer(text, start, modal))
    for back in range(1, min(5, len(words)) + 1):
        if words[-back].group().lower() in _DETERMINERS:
            return words[-back].start()
    return words[-1].start() if words else modal


def conditions_zh(text: str) -> list[Condition]:
    found = []
    for match in _CONDITION_ZH.finditer(text):
        kind = next(k for k in ("trigger", "state", "exception") if match.group(k))
        end_match = _ZH_CONDITION_END.search(text, match.end())
        end = end_match.end() if end_match else len(text)
        body = text[match.end() : end_match.start() if end_match else len(text)]
        found.append(
            Condition(
                kind,
                match.group(),
                text[match.start() : end].strip("，,。；; "),
                content_words(body, "zh"),
                match.start(),
                end,
            )
        )
    return found


def _before_the_main_modal(
    modals: list[Modal], conditions: list[Condition]
) -> tuple[int, int] | None:
    """Where the subject stands: from the end of the last condition before the first modal
    verb outside a condition (or the text's start) to that modal; None without one."""
    main = [m for m in modals if not any(c.start <= m.start < c.end for c in conditions)]
    if not main:
        return None
    modal = main[0].start
    return max([c.end for c in conditions if c.end <= modal] + [0]), modal


def subject_en(text: str, modals: list[Modal], conditions: list[Condition]) -> str:
    """The head of the noun phrase before the first modal verb outside a condition."""
    span = _before_the_main_modal(modals, conditions)
    if span is None:
        return ""
    start, modal = span
    clause_start = max(
        [m.end() for m in re.finditer(r"[,;:.]\s", text[:modal])] + [start], default=start
    )
    words = [w.group() for w in WORD_EN.finditer(text, clause_start, modal)]
    words = [w for w in words if not ALPHA_ID_RE.fullmatch(w)]
    if not words:
        return ""
    # "the response time of the search page" -> "response time"; "Users" -> "users"
    for n, word in enumerate(words):
        if word.lower() in _PREPOSITIONS and n > 0:
            words = words[:n]
            break
    head: list[str] = []  # the last words before the modal, up to two, in a row
    for word in reversed(words):
        if word.lower() in _STOPWORDS or len(head) == 2:
            break
        head.insert(0, word)
    if not head or head[-1].lower() in _PRONOUN_SUBJECTS:
        return ""
    return " ".join(head).lower()


def subject_zh(text: str, modals: list[Modal], conditions: list[Condition]) -> str:
    """The last words before the first modal verb outside a condition, after its last 的."""
    span = _before_the_main_modal(modals, conditions)
    if span is None:
        return ""
    start, modal = span
    before = re.split(r"[，,。；;：:]", text[start:modal])[-1].strip()
    before = re.sub(r"^(?:则|那么|本|该|所有|每个|每一|各)", "", before)
    before = re.sub(r"(?:在.*|都|均|也|还|将|不)$", "", before)
    return before.rsplit("的", 1)[-1][-6:]


def actors_en(text: str, subject: str) -> list[str]:
    persons = person_nouns()["en"]
    actors = [subject] if subject else []
    for match in WORD_EN.finditer(text):
        word = match.group().lower()
        if word in persons and word not in actors:
            actors.append(word)
    return actors


def actors_zh(text: str, subject: str) -> list[str]:
    persons = sorted(person_nouns()["zh"], key=len, reverse=True)
    actors = [subject] if subject else []
    for person in persons:
        if person in text and not any(person in a for a in actors):
            actors.append(person)
    return actors


def entities_en(text: str) -> list[str]:
    found: list[str] = []

    def add(name: str) -> None:
        name = name.strip(" .,;:")
        if name and name not in found:
            found.append(name)

    for match in ALPHA_ID_RE.finditer(text):
        add(match.group())
    for match in _QUOTED.finditer(text):
        add(next(g for g in match.groups() if g))
    for match in _ACRONYM.finditer(text):
        if match.group().rstrip("s") not in _NOT_ENTITIES and len(match.group()) >= 2:
            add(match.group())
    for match in _CAMEL.finditer(text):
        add(match.group())
    for match in _CAPITALISED.finditer(text):
        words = match.group().split()
        at_start = match.start() == 0 or re.search(r"[.!?:]\s*$|^\W*$", text[: match.start()])
        if at_start and words[0] in _SENTENCE_WORDS:
            words = words[1:]
            if words and words[0] in ("of", "and", "for", "the", "de"):
                words = words[1:]
        elif at_start and len(words) == 1:
            continue  # a sentence's first word
        name = " ".join(words)
        if name and not (name.isupper() and name in _NOT_ENTITIES):
            add(name)
    return found


def entities_zh(text: str) -> list[str]:
    found: list[str] = []
    for match in _QUOTED.finditer(text):
        name = next(g for g in match.groups() if g)
        if name not in found:
            found.append(name)
    for match in _LATIN_RUN.finditer(text):
        name = match.group().rstrip(".-")
        if len(name) >= 2 and name.upper() not in _NOT_ENTITIES and name not in found:
            found.append(name)
    return found
