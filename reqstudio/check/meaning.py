"""What carries a requirement's meaning, and whether a second wording keeps it.

A requirement's meaning rests on a few kinds of words that a rewording must not touch:

- **modal**: how strongly it binds: shall/must (binding), should (advisory), may/can/will
  (permissive); 应/必须/须 (binding), 宜/应该 (advisory), 可/可以 (permissive);
- **quantity**: its numbers with their units and bounds ("within 2 s" = "in under 2 s" =
  "2000 ms or less" = "2秒内"; `reqstudio.check.quantities`);
- **negation**: not, no, never, none, without, cannot; 不, 无, 没有, 未, 禁止, 不得 (a bound such
  as "no more than" or 不超过 is part of its quantity, not a negation);
- **condition**: if, when, while, unless, where, once, in case; 如果, 若, 当…时, 在…情况下, 除非
  (kinds: a trigger, a state, an exception), with the words of the condition;
- **actor**: the grammatical subject (past a condition in front) and the people and roles
  named ("the operator", 用户); adding the generic "the system" is no change;
- **entity**: ids, acronyms, CamelCase names, capitalised names, quoted names.

`extract(text)` reads them; `meaning_changes(old, new)` lists what the new wording changed
(`Change`: kind, what happened, the words before and after), and `describe` says it in English
or Chinese. Anything else (word order, inflection, synonyms of other words) counts as
rewording. `word_diff` (from `reqstudio.check.worddiff`) shows the change word by word.

Deterministic, no model, standard library only; no dependency on the checker's report, so the
rewrite guard and a document diff can both use it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from reqstudio.check.quantities import Quantity, quantities
from reqstudio.check.worddiff import DiffOp, render_word_diff, word_diff
from reqstudio.check.wording import (
    GENERIC_ACTORS,
    MODAL_EN,
    MODAL_ZH,
    NEGATION_EN,
    NEGATION_ZH,
    NOT_NEGATION_EN,
    NOT_NEGATION_ZH,
    STRENGTHS,
    WORD_EN,
    Condition,
    Modal,
    actors_en,
    actors_zh,
    conditions_en,
    conditions_zh,
    entities_en,
    entities_zh,
    inside,
    language_of,
    person_nouns,
    read_modals,
    spans,
    stem,
    subject_en,
    subject_zh,
)

__all__ = [
    "Change",
    "Condition",
    "DiffOp",
    "Meaning",
    "compare",
    "describe",
    "extract",
    "meaning_changes",
    "render_word_diff",
    "stem",
    "word_diff",
]

T = TypeVar("T")

KINDS = ("modal", "quantity", "negation", "condition", "actor", "entity")


@dataclass(frozen=True)
class Meaning:
    """What carries the meaning of one requirement text."""

    text: str
    language: str  # "en" or "zh"
    modals: tuple[Modal, ...] = ()
    quantities: tuple[Quantity, ...] = ()
    negations: tuple[str, ...] = ()
    conditions: tuple[Condition, ...] = ()
    subject: str = ""  # the grammatical subject's head, lower-cased ("" when none is found)
    actors: tuple[str, ...] = ()  # the subject and the people and roles named, as written
    entities: tuple[str, ...] = ()
    stems: frozenset[str] = field(default=frozenset(), repr=False)  # every word's stem
    words: tuple[str, ...] = field(default=(), repr=False)  # the same, in order

    @property
    def strengths(self) -> frozenset[str]:
        return frozenset(m.strength for m in self.modals)


@dataclass(frozen=True)
class Change:
    """One difference of meaning between two wordings: its kind (one of `KINDS`), what
    happened ("dropped", "added", "changed"; for a modal also "weaker", "stronger") and the
    words before and after ("" for none)."""

    kind: str
    what: str
    before: str
    after: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "what": self.what, "before": self.before, "after": self.after}


def extract(text: str, language: str | None = None) -> Meaning:
    """Read what carries the meaning of `text` (one requirement, English or Chinese)."""
    language = language or language_of(text)
    found_quantities = tuple(quantities(text))
    bounds = [(q.start, q.end) for q in found_quantities]
    if language == "zh":
        modals = read_modals(MODAL_ZH, text)
        excused = spans(NOT_NEGATION_ZH.finditer(text)) + bounds
        negations = [m for m in NEGATION_ZH.finditer(text) if not inside(m.start(), excused)]
        conditions = conditions_zh(text)
        subject = subject_zh(text, modals, conditions)
        actors = actors_zh(text, subject)
        entities = entities_zh(text)
    else:
        modals = read_modals(MODAL_EN, text)
        excused = spans(NOT_NEGATION_EN.finditer(text)) + bounds
        negations = [m for m in NEGATION_EN.finditer(text) if not inside(m.start(), excused)]
        conditions = conditions_en(text, modals)
        subject = subject_en(text, modals, conditions)
        actors = actors_en(text, subject)
        entities = entities_en(text)
    words = tuple(stem(w) for w in WORD_EN.findall(text))
    return Meaning(
        text=text,
        language=language,
        modals=tuple(modals),
        quantities=found_quantities,
        negations=tuple(m.group() for m in negations),
        conditions=tuple(conditions),
        subject=subject,
        actors=tuple(actors),
        entities=tuple(entities),
        stems=frozenset(words),
        words=words,
    )


# --- comparing ---------------------------------------------------------------------------


def meaning_changes(old: str, new: str, language: str | None = None) -> list[Change]:
    """What `new` changes of the meaning of `old` (one requirement, two wordings): each
    `Change` names its kind, what happened, and the words before and after. Empty when the
    new wording keeps every modal strength, quantity, negation, condition, actor and entity
    (rewording only)."""
    if language is None:
        language = "zh" if "zh" in (language_of(old), language_of(new)) else "en"
    return compare(extract(old, language), extract(new, language))


def compare(old: Meaning, new: Meaning) -> list[Change]:
    """`meaning_changes` on texts already read (`extract`): the cross-requirement checks
    read each requirement once and compare it with several."""
    quantity = _quantity_changes(old, new) or _unknown_unit_changes(old, new)
    return [
        *_modal_changes(old, new),
        *quantity,
        *_negation_changes(old, new),
        *_condition_changes(old, new),
        *_actor_changes(old, new),
        *_entity_changes(old, new),
    ]


def _in_order(
    kind: str,
    gone: Sequence[T],
    came: Sequence[T],
    words: Callable[[T], str] = str,
    what: Callable[[T, T], str] = lambda before, after: "changed",
) -> list[Change]:
    """What went (`gone`, on the old side only) and what came (on the new side only), paired
    in their order: the first that went with the first that came is a change (`what` names
    it), the rest of either side dropped or added."""
    changes = [
        Change(kind, what(b, a), words(b), words(a)) for b, a in zip(gone, came, strict=False)
    ]
    changes += [Change(kind, "dropped", words(b), "") for b in gone[len(came) :]]
    changes += [Change(kind, "added", "", words(a)) for a in came[len(gone) :]]
    return changes


def _paired_off(
    kind: str,
    old_items: Sequence[T],
    unmatched: list[T],
    partner: Callable[[T], T | None],
    same: Callable[[T, T], bool] = lambda before, after: False,
) -> list[Change]:
    """Each old item with the new one `partner` picks among `unmatched` (which it takes from
    there): nothing when the two are the `same`, else changed into it, or dropped when there
    is none; the new items left unmatched are added. Items have a `text`."""
    changes = []
    for before in old_items:
        after = partner(before)
        if after is None:
            changes.append(Change(kind, "dropped", before.text, ""))
            continue
        unmatched.remove(after)
        if not same(before, after):
            changes.append(Change(kind, "changed", before.text, after.text))
    changes += [Change(kind, "added", "", after.text) for after in unmatched]
    return changes


def _modal_changes(old: Meaning, new: Meaning) -> list[Change]:
    if old.strengths == new.strengths:
        return []
    gone = [m for m in old.modals if m.strength not in new.strengths]
    came = [m for m in new.modals if m.strength not in old.strengths]

    def direction(before: Modal, after: Modal) -> str:
        rank = STRENGTHS.index(before.strength) - STRENGTHS.index(after.strength)
        return "weaker" if rank < 0 else "stronger"

    return _in_order("modal", gone, came, lambda modal: modal.word, direction)


def _quantity_changes(old: Meaning, new: Meaning) -> list[Change]:
    unmatched = list(new.quantities)
    gone = []
    for quantity in old.quantities:
        match = next((q for q in unmatched if quantity.same_as(q)), None)
        if match is None:
            gone.append(quantity)
        else:
            unmatched.remove(match)
    return _paired_off(
        "quantity",
        gone,
        unmatched,
        lambda before: next((q for q in unmatched if q.dimension == before.dimension), None),
    )


# the word written after a number whose unit the quantity reader does not know ("20 l/min")
_WORD_AFTER = re.compile(r"\s*([A-Za-z%°µ]+(?:/[A-Za-z]+)?)")


def _numbers_with_words(meaning: Meaning) -> dict[tuple[float, str], str]:
    """Each number without a known unit, by its value and the word after it (as written:
    "20 l/min"; "three times" and "3 times" are one)."""
    found: dict[tuple[float, str], str] = {}
    for quantity in meaning.quantities:
        if quantity.unit:
            continue
        after = _WORD_AFTER.match(meaning.text, quantity.end)
        word = after.group(1) if after else ""
        found.setdefault((quantity.value, word), f"{quantity.text} {word}".strip())
    return found


def _unknown_unit_changes(old: Meaning, new: Meaning) -> list[Change]:
    """A unit the quantity reader does not know, changed beside the same number ("20 l/min"
    -> "20 ml/min"): `_quantity_changes` compares those numbers alone."""
    before, after = _numbers_with_words(old), _numbers_with_words(new)
    gone = [text for key, text in before.items() if key not in after]
    came = [text for key, text in after.items() if key not in before]
    return [Change("quantity", "changed", b, a) for b, a in zip(gone, came, strict=False)]


def _negation_changes(old: Meaning, new: Meaning) -> list[Change]:
    if len(old.negations) == len(new.negations):
        return []
    what = "dropped" if len(old.negations) > len(new.negations) else "added"
    return [Change("negation", what, ", ".join(old.negations), ", ".join(new.negations))]


# two conditions say the same when this share of their content words is shared
CONDITION_OVERLAP = 0.5


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def _condition_changes(old: Meaning, new: Meaning) -> list[Change]:
    unmatched = list(new.conditions)

    def same_kind(a: Condition, b: Condition) -> bool:
        return _kind_family(a.kind) == _kind_family(b.kind)

    def partner(condition: Condition) -> Condition | None:
        """The closest condition of its kind still unmatched, else the first one left."""
        kind = [c for c in unmatched if same_kind(c, condition)]
        best = max(kind, key=lambda c: _overlap(c.words, condition.words), default=None)
        return best or next(iter(unmatched), None)

    def same(a: Condition, b: Condition) -> bool:
        return same_kind(a, b) and _overlap(a.words, b.words) >= CONDITION_OVERLAP

    return _paired_off("condition", old.conditions, unmatched, partner, same)


def _kind_family(kind: str) -> str:
    """An EARS "Where" (a feature is present) is as much a trigger as "if" for the meaning;
    "while" (a state) and "unless" (an exception) are not."""
    return "trigger" if kind == "feature" else kind


def _present(actor: str, meaning: Meaning) -> bool:
    """Whether `meaning`'s text names `actor`: as written (Chinese), or its words' stems in a
    row (English: "pump controller" is not in "the valve controller stops the pump")."""
    if meaning.language == "zh" or re.search(r"[\u4e00-\u9fff]", actor):
        return actor in meaning.text
    wanted = tuple(stem(w) for w in WORD_EN.findall(actor))
    if not wanted or wanted[0] not in meaning.stems:
        return not wanted
    words = meaning.words
    return any(words[n : n + len(wanted)] == wanted for n in range(len(words)))


def _is_person(actor: str, language: str) -> bool:
    persons = person_nouns()[language]
    return actor in persons or (actor.split()[-1:] and actor.split()[-1] in persons)


def _actor_changes(old: Meaning, new: Meaning) -> list[Change]:
    """A person or role named on one side only is a change; so is a subject that is gone,
    unless it is the generic "the system" (a passive rewording may leave it out). A new
    subject that is no person ("The response time shall ...") counts only in place of one
    that went."""
    language = old.language
    gone = [
        a
        for a in old.actors
        if not _present(a, new) and (a not in GENERIC_ACTORS or _is_person(new.subject, language))
    ]
    came = [
        a
        for a in new.actors
        if not _present(a, old)
        and a not in GENERIC_ACTORS
        and (_is_person(a, language) or a != new.subject)
    ]
    if gone and new.subject and not _present(new.subject, old) and new.subject not in came:
        came.append(new.subject)
    return _in_order("actor", gone, came)


def _normalised(text: str) -> str:
    return re.sub(r"[\s\-_'’\"“”‘`]+", "", text).casefold()


def _entity_changes(old: Meaning, new: Meaning) -> list[Change]:
    old_text, new_text = _normalised(old.text), _normalised(new.text)
    gone = [e for e in old.entities if _normalised(e) not in new_text]
    came = [e for e in new.entities if _normalised(e) not in old_text]
    return _in_order("entity", gone, came)


# --- saying it ---------------------------------------------------------------------------


def describe(change: Change, language: str = "en") -> str:
    """One sentence: "modal verb weakened: 'shall' -> 'should'" / 情态动词被减弱：“应”→“宜”,
    from the message catalogue (`meaning.*`)."""
    from reqstudio.messages import text

    words = text("meaning.arrow", language).join(
        text("meaning.word", language, word=word) for word in (change.before, change.after) if word
    )
    return text(
        "meaning.change",
        language,
        kind=text(f"meaning.kind.{change.kind}", language),
        what=text(f"meaning.what.{change.what}", language),
        words=words,
    )
