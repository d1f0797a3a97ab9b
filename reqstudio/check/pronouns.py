"""Vague pronouns (ISO/IEC/IEEE 29148 5.2.7; INCOSE R24), by their definition: a personal or
possessive pronoun is vague when a reader cannot settle what it refers to, that is when the
sentence it stands in and the one before hold more than one candidate referent of its number
(or none at all: "It shall be possible to ...", "we", "our"). A demonstrative standing alone
for a whole statement ("This shall be the default") is vague too.

The pronouns checked are those of data/en/pronouns.txt. No tagger: a candidate referent is the
head of a noun phrase, found by word classes (function words, the verbs of data/en/verbs.txt,
a word after a modal, a word in -ing with its object, a word alone after "be", adverbs and
complex prepositions; an id written inside the sentence, "shall [SRS030]", is no word) and its
number by its form ("systems", "data"); people (data/en/persons.txt) are what "he", "she" and a
singular "they" refer to, and what "it" does not."""

from __future__ import annotations

import re

from reqstudio.check.rules import Hit, word_set, words_of

RULE = "ISO29148-vague-pronoun"

# (a PDF's ligatures start words too: "ﬁles" is files, not "les")
TOKEN = re.compile(r"[A-Za-z\ufb00-\ufb06][\w’'-]*|\d[\w.,]*|[.;:!?,()\"“”–]")
SENTENCE_END = {".", "!", "?", ";"}
# words that open a noun phrase without being its head
DETERMINERS = {
    "the", "a", "an", "each", "every", "any", "all", "this", "that", "these", "those", "its",
    "their", "his", "her", "our", "your", "my", "no", "some", "another", "other", "both",
    "either", "neither", "such", "several", "many", "few", "much", "certain", "various",
    "same", "own", "only",
}  # fmt: skip
PREPOSITIONS = {
    "of", "for", "in", "on", "with", "from", "to", "by", "at", "into", "onto", "about", "via",
    "per", "through", "between", "among", "within", "without", "under", "over", "after",
    "before", "during", "until", "upon", "across", "against", "along", "around", "behind",
    "beyond", "except", "near", "off", "out", "since", "toward", "towards", "up", "down",
    "throughout", "whilst", "regardless", "like", "ahead", "prior",
}  # fmt: skip
CONNECTIVES = {
    "and", "or", "but", "nor", "so", "yet", "if", "when", "whenever", "while", "once",
    "unless", "because", "although", "though", "whether", "where", "that", "which", "who",
    "whom", "whose", "than", "as", "then", "also", "not", "only", "eg", "ie", "etc", "e.g",
    "i.e", "how", "what", "why", "there", "here", "thus", "therefore", "however", "even",
}  # fmt: skip
AUXILIARIES = {
    "shall", "must", "will", "should", "may", "can", "could", "would", "might", "is", "are",
    "was", "were", "be", "been", "being", "am", "has", "have", "had", "do", "does", "did",
    "cannot", "able", "need", "needs",
}  # fmt: skip
# adverbs not in -ly and the first words of complex prepositions: never a noun's head ("it
# is difficult to estimate", "the sites below", "due to", "according to", "nothing else")
NOT_HEADS = {
    "else", "apart", "below", "above", "due", "according", "including", "regarding",
    "concerning", "instead", "rather", "already", "still", "just", "now", "again", "soon",
    "too", "very", "quite", "more", "less", "most", "least", "further", "hence",
}  # fmt: skip
PERSONAL = {"he", "him", "his", "she", "her", "himself", "herself"}
SINGULAR = {"it", "its", "itself"}
PLURAL = {"they", "them", "their", "themselves"}
FIRST_SECOND = {"we", "us", "our", "ours", "you", "your", "yours"}
DEMONSTRATIVE = {"this", "that", "these", "those"}
OBJECT_PRONOUNS = {"it", "them", "him", "her", "us", "you"}
PRONOUNS = PERSONAL | SINGULAR | PLURAL | FIRST_SECOND | DEMONSTRATIVE
# nouns whose form says nothing of their number: either pronoun may refer to them ("the
# data ... it / they"); mass nouns such as software or information take "it" alone
EITHER_NUMBER = {"data", "metadata", "staff", "personnel"}
ALWAYS_PLURAL = {"people", "criteria", "media", "children", "men", "women"}
# a demonstrative is a pronoun when one of these follows it ("this shall ...", "... after that.")
_PRONOUN_USE_AHEAD = {
    "is", "are", "was", "were", "shall", "must", "will", "should", "may", "can", "has",
    "have", "does", "do", "means", "includes", "involves", "requires", "allows", "ensures",
    ".", ";", ":", "!", "?", ",",
}  # fmt: skip
_ADVERB = re.compile(r"^\w{3,}ly$", re.IGNORECASE)


def _is_plural(word: str) -> bool:
    lower = word.lower()
    if lower in ALWAYS_PLURAL:
        return True
    if sum(ch.isupper() for ch in word) >= 2:  # an acronym: "FTSS", "QChS"; "SIPs" is plural
        return word.endswith("s") and word[-2:-1].isupper()
    return lower.endswith("s") and not lower.endswith(("ss", "us", "is", "’s", "'s"))


def _function_word(lower: str) -> bool:
    return (
        lower in DETERMINERS
        or lower in PREPOSITIONS
        or lower in CONNECTIVES
        or lower in AUXILIARIES
        or lower in PRONOUNS
        or lower in NOT_HEADS
    )


def _verb_form(lower: str, verbs: frozenset[str]) -> bool:
    """A form of one of `verbs` ("sends", "updated", "stored", "receiving")."""
    if lower in verbs:
        return True
    stems = {lower[:-1], lower[:-2], lower[:-3], lower[:-2] + "e", lower[:-3] + "e"}
    return lower.endswith(("s", "ed", "ing")) and bool(stems & verbs)


# what follows a verb, not a noun: "the device alerts the driver", "... that routes them"
_OBJECT_START = {
    "the", "a", "an", "this", "these", "those", "each", "every", "all", "any", "its", "their",
    "his", "her", "our", "your", "my", "some", "no",
} | OBJECT_PRONOUNS  # fmt: skip
_RELATIVES = {"that", "which", "who"}
_MODALS = {"shall", "must", "will", "should", "may", "can", "could", "would", "might", "cannot"}
_BE = {"is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had", "not"}


def _starts_verb(previous: str, token: str, following: str, verbs: frozenset[str]) -> bool:
    """`token` is a verb or a participle by the words around it: a modal before it ("shall
    log"), a form of be or have with a participle ("is specified", "are addressed", "has
    failed"), "to" before a verb ("to adjust"; "to users", "to Ingest" are phrases), or a
    relative or "and" before a verb in -s with its object after it ("that routes them",
    "and reports them")."""
    lower = token.lower()
    # "... that routes them", "... and reports them": a verb in -s with its object after it
    if (
        previous in _RELATIVES | {"and", "or", "then"}
        and lower.endswith("s")
        and following in _OBJECT_START | PREPOSITIONS
    ):
        return True
    if previous in _MODALS:
        return True
    if previous in _BE:
        return lower.endswith(("ed", "en", "ing")) or _verb_form(lower, verbs)
    if previous == "to":
        return not token[0].isupper() and (_verb_form(lower, verbs) or not _is_plural(token))
    return False


_COPULAS = {"is", "are", "was", "were", "be", "been", "being", "am", "seem", "seems", "prove"}
_COPULAS |= {"proves", "become", "becomes", "remain", "remains"}


def _predicate_adjective(token: str, following: str) -> bool:
    """A word alone after a form of be (or seem, prove, become, remain: the caller looks at
    the word before) with no noun after it is an adjective, not a noun phrase: "are difficult
    to estimate", "be possible for", "is essential that". A plural or a capitalised word
    stays a noun ("are operators")."""
    return (
        not _is_plural(token)
        and not token[0].isupper()
        and (not following or _function_word(following) or not following[0].isalnum())
    )


def noun_phrases(tokens: list[str]) -> list[tuple[int, str]]:
    """(index, head) of each noun phrase of `tokens`: a run of content words (not a
    function word, a number or an -ly adverb) ended by a function word or a stop; its last
    word is its head. A content word after a modal or "to" starts a verb, not a noun phrase;
    the last word of a run that a determiner or an object pronoun follows is a verb ("the
    security device alerts the driver"; not a person: "give the user the ability"), as is a
    participle after a noun ("the time elapsed since") and a word in -ing with its object
    ("by issuing a request"); a word alone after "be" is an adjective ("is optional")."""
    verbs = word_set("en", "verbs")
    persons = word_set("en", "persons")
    heads: list[tuple[int, str]] = []
    run: list[int] = []

    def close(next_lower: str) -> None:
        if not run:
            return
        words = [tokens[i].lower() for i in run]
        participle = len(words[-1]) > 4 and words[-1].endswith("ed") and words[-1][-3] != "e"
        # a word in -ing with its object after it is a verb ("by issuing a request")
        gerund = words[-1].endswith("ing") and next_lower in _OBJECT_START
        # a person before a determiner is the first object ("give the user the ability")
        person = words[-1] in persons and next_lower not in OBJECT_PRONOUNS
        # the word before "it", "them" is a verb ("then print it"), a noun seldom
        if (
            participle
            or gerund
            or next_lower in OBJECT_PRONOUNS
            or (
                len(run) > 1
                and not person
                and (
                    next_lower in _OBJECT_START
                    or (
                        words[-1].endswith("s")
                        and words[-1][:-1] in verbs
                        and next_lower not in ".,;"
                    )
                )
            )
        ):
            run.pop()
        if run:
            last = tokens[run[-1]].removesuffix("’s").removesuffix("'s")
            heads.append((run[-1], last))
        run.clear()

    previous = ""  # the word before, -ly adverbs skipped ("to dynamically adjust")
    for index, token in enumerate(tokens):
        lower = token.lower()
        if _ADVERB.match(token) and not _function_word(lower):
            close(lower)
            continue
        content = token[0].isalpha() and not _function_word(lower)
        following = tokens[index + 1].lower() if index + 1 < len(tokens) else ""
        if content and (
            _starts_verb(previous, token, following, verbs)
            or (previous in _COPULAS and _predicate_adjective(token, following))
        ):
            content = False
        if content:
            run.append(index)
            if token.endswith(("’s", "'s")):  # a possessive ends its phrase: "the user's"
                close("")
        else:
            close(lower)
        previous = lower
    close("")
    return heads


def _sentence_start(tokens: list[str], index: int) -> int:
    """The first token of the sentence before the one that holds `index`."""
    ends = [n for n in range(index) if tokens[n] in SENTENCE_END]
    return ends[-2] + 1 if len(ends) >= 2 else 0


def _expletive(tokens: list[str], index: int) -> bool:
    """An anticipatory "it" ("It shall be possible to ...", "it is important that ...", "it
    may prove useful to ..."): be (or seem, prove, become) within three words after it, then an
    adjective or participle, then to/that."""
    ahead = [t.lower() for t in tokens[index + 1 : index + 7]]
    if not ahead or not (_COPULAS & set(ahead[:3])):
        return False
    return bool({"to", "that", "which", "whether", "for", "how", "what"} & set(ahead[2:]))


def candidates(
    tokens: list[str],
    index: int,
    persons: frozenset[str],
    phrases: list[tuple[int, str]] | None = None,
) -> set[str]:
    """The candidate referents of the pronoun at `index`: the heads of noun phrases before it
    in its sentence and the one before, of its number (people for he/she; for they, plural
    phrases and people). `phrases`: `noun_phrases(tokens)`, when known."""
    lower = tokens[index].lower()
    start = _sentence_start(tokens, index)
    window = tokens[start:index]
    found: set[str] = set()
    phrases = noun_phrases(tokens) if phrases is None else phrases
    for _, head in (phrase for phrase in phrases if start <= phrase[0] < index):
        word = head.lower()
        person = word in persons or word.removesuffix("s") in persons
        if lower in PERSONAL:
            keep = person and not _is_plural(head)
        elif lower in PLURAL:
            keep = _is_plural(head) or word in EITHER_NUMBER or person
        else:  # it, its
            keep = (not _is_plural(head) or word in EITHER_NUMBER) and not person
        if keep:
            found.add(word)
    # "each of the cabs ... its", "one of them": the quantifier is a singular phrase
    for n, token in enumerate(window[:-1]):
        if token.lower() in {"each", "one", "either", "neither"} and window[n + 1] == "of":
            found.add(token.lower())
    return found


# an id or a section number written inside the sentence ("shall [SRS030] provide", "shall
# (3.3.2.17) be possible", "... itself. [SSS354]"): no word of the sentence, read as blanks
_INLINE_ID = re.compile(r"\[[A-Za-z]*[-_ ]?\d[\w.-]*\]|\(\d+(?:\.\d+)+\)")


def _without_ids(text: str) -> str:
    if "[" not in text and "(" not in text:
        return text
    return _INLINE_ID.sub(lambda match: " " * len(match.group()), text)


# "that" is a pronoun here only where it starts a sentence
_THAT_FIRST = re.compile(r"(?:^|[.;:!?])\s*that\b", re.IGNORECASE)


def pronoun_hits(text: str, language: str) -> list[Hit]:
    if language == "zh":
        return _pronoun_hits_zh(text)
    checked = word_set("en", "pronouns")
    present = checked & words_of(text)
    if not present or (present == {"that"} and not _THAT_FIRST.search(text)):
        return []  # most requirements: none, or a "that" that is no pronoun (see below)
    persons = word_set("en", "persons")
    matches = list(TOKEN.finditer(_without_ids(text)))
    tokens = [m.group() for m in matches]
    hits = []
    phrases: list[tuple[int, str]] | None = None
    for index, match in enumerate(matches):
        word = match.group()
        lower = word.lower()
        if lower not in checked or lower not in PRONOUNS:
            continue
        if lower in DEMONSTRATIVE:
            following = [t for t in tokens[index + 1 :] if not _ADVERB.match(t)]
            ahead = following[0].lower() if following else "."
            # a pronoun only when no noun follows ("this shall ...", "... after that.");
            # "that" after a noun or verb is a relative or a conjunction, not a pronoun
            at_start = index == 0 or tokens[index - 1] in ".;:!?"
            if ahead not in _PRONOUN_USE_AHEAD or (lower == "that" and not at_start):
                continue
            hits.append(Hit(RULE, word, *match.span(), "a whole statement"))
            continue
        if lower in FIRST_SECOND:
            hits.append(Hit(RULE, word, *match.span(), "no one named"))
            continue
        if lower == "it" and _expletive(tokens, index):
            hits.append(Hit(RULE, word, *match.span(), "a dummy subject: name who or what"))
            continue
        if phrases is None:
            phrases = noun_phrases(tokens)
        found = candidates(tokens, index, persons, phrases)
        if len(found) == 1:
            continue
        why = (
            "nothing it can refer to" if not found else "could be " + " or ".join(sorted(found)[:3])
        )
        hits.append(Hit(RULE, word, *match.span(), why))
    return hits


_ZH_PRONOUN = re.compile(r"它们|她们|他们|它|他|她")
_ZH_COORDINATION = re.compile(r"[和与及、]|以及|或者|或")


def _pronoun_hits_zh(text: str) -> list[Hit]:
    """A Chinese pronoun is unclear when nothing comes before it in the requirement, or when
    the text before it joins several things (和/与/及/、/或)."""
    hits = []
    for match in _ZH_PRONOUN.finditer(text):
        before = text[: match.start()].strip(" ，,。:：")
        if not before:
            hits.append(Hit(RULE, match.group(), *match.span(), "前文无所指"))
        elif _ZH_COORDINATION.search(before):
            hits.append(Hit(RULE, match.group(), *match.span(), "可指多个对象"))
    return hits
