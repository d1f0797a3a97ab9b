"""Whether a proposed rewrite of a requirement may stand: it must keep what carries the
meaning (modal verbs, numbers and units, negations, conditions, actors, named entities:
`reqstudio.check.meaning`, the one meaning guard), and it is re-checked with the same rules
as the original, so that a user sees whether it has fewer findings.

Deterministic, no model: the model only proposes (`reqstudio.check.suggest`)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from reqstudio.check.engine import Finding, check_requirement
from reqstudio.check.meaning import (
    Change,
    describe,
    meaning_changes,
    render_word_diff,
    word_diff,
)
from reqstudio.check.parse import Requirement
from reqstudio.check.worddiff import tokens

# What a rewrite writes where the original gives no value ("within TBD seconds"): a gap for
# the author to fill, not a named entity the model made up.
PLACEHOLDERS = frozenset({"TBD", "待定"})

# why a rewrite that changes no meaning is still refused (`rewrite_guard.<problem>` in the
# message catalogue)
NOT_A_REWRITE = frozenset({"empty", "same", "several", "unflagged", "unrelated"})
# words a rewording may drop or change besides the flagged ones: they carry grammar, not
# meaning (English articles, forms of "be", "to", "of"; Chinese particles)
FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "be",
        "is",
        "are",
        "was",
        "were",
        "been",
        "being",
        "to",
        "of",
        "that",
        "this",
        "these",
        "those",
        "it",
        "its",
        "的",
        "地",
        "得",
        "了",
        "着",
        "很",
        "将",
        "会",
        "要",
    ]
)

# the share of the original's words (Chinese: characters) a rewording keeps at least: a
# rewrite fixes a few flagged words, it does not write another requirement
KEPT_WORDS = 0.5


@dataclass
class GuardedRewrite:
    """A rewrite judged: the word diff, what it changed of the meaning (refused when
    anything), and the findings of the original and of the rewrite."""

    requirement: Requirement
    rewrite: str
    diff: str
    changes: list[Change] = field(default_factory=list)
    problem: str = ""  # a key of NOT_A_REWRITE
    unflagged: list[str] = field(default_factory=list)  # words dropped that no finding named
    findings_before: list[Finding] = field(default_factory=list)
    findings_after: list[Finding] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return not self.changes and not self.problem

    @property
    def fewer_findings(self) -> bool:
        return self.accepted and len(self.findings_after) < len(self.findings_before)

    def reasons(self, language: str = "en") -> list[str]:
        """Why it was refused, one line per reason (empty when accepted), in `language`."""
        from reqstudio.messages import join, text

        if self.problem:
            words = join([text("meaning.word", language, word=w) for w in self.unflagged], language)
            return [text(f"rewrite_guard.{self.problem}", language, words=words)]
        return [describe(c, language) for c in self.changes]

    def as_dict(self) -> dict[str, Any]:
        return {
            "requirement_id": self.requirement.label,
            "line": self.requirement.line,
            "original": self.requirement.body,
            "rewrite": self.rewrite,
            "diff": self.diff,
            "accepted": self.accepted,
            "refused_because": self.reasons("en"),
            "refused_because_zh": self.reasons("zh"),
            "changes": [c.as_dict() for c in self.changes],
            "findings_before": len(self.findings_before),
            "findings_after": len(self.findings_after) if self.accepted else None,
            "rules_after": sorted({f.rule for f in self.findings_after}) if self.accepted else [],
        }


def _words_of(text: str) -> list[str]:
    return [t.strip().casefold() for t in tokens(text) if _WORDLIKE.search(t)]


def unflagged_drops(old: str, new: str, findings: list[Finding]) -> list[str]:
    """The words `new` drops or replaces from `old` that no finding named and that carry
    more than grammar: the rewrite was to change the flagged words only (with the words
    next to them in the same changed stretch)."""
    flagged = {w for f in findings for w in _words_of(f.term)}
    dropped = []
    for op in word_diff(old, new):
        if op.tag not in ("delete", "replace"):
            continue
        words = _words_of(op.old)
        if flagged & set(words):  # a phrase around a flagged word goes with it: "in most cases"
            continue
        dropped += [w for w in words if w not in FUNCTION_WORDS and w not in dropped]
    return dropped


def kept_share(old: str, new: str) -> float:
    """The share of `old`'s words (each as often as it occurs) that `new` still has."""
    before = Counter(t.strip().casefold() for t in tokens(old) if _WORDLIKE.search(t))
    after = Counter(t.strip().casefold() for t in tokens(new) if _WORDLIKE.search(t))
    total = sum(before.values())
    return sum((before & after).values()) / total if total else 1.0


_WORDLIKE = re.compile(r"[A-Za-z0-9\u3400-\u9fff]")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def guard_rewrite(requirement: Requirement, rewrite: str) -> GuardedRewrite:
    """Judge `rewrite` as a new wording of `requirement` (its text without the id)."""
    original = requirement.body
    proposed = rewrite.strip()
    judged = GuardedRewrite(
        requirement, proposed, render_word_diff((original, proposed)),
        findings_before=check_requirement(requirement),
    )  # fmt: skip
    if not proposed:
        judged.problem = "empty"
    elif "\n" in proposed:
        judged.problem = "several"
    elif _one_line(proposed) == _one_line(original):
        judged.problem = "same"
    else:
        changes = meaning_changes(original, proposed, requirement.language)
        judged.changes = [
            c
            for c in changes
            if not (c.kind == "entity" and c.what == "added" and c.after in PLACEHOLDERS)
        ]
        # what changed of the meaning, when something did, says more than the words lost
        if not judged.changes and kept_share(original, proposed) < KEPT_WORDS:
            judged.problem = "unrelated"
        elif not judged.changes:
            judged.unflagged = unflagged_drops(original, proposed, judged.findings_before)
            judged.problem = "unflagged" if judged.unflagged else ""
    if judged.accepted:
        rewritten = Requirement(
            id=requirement.id,
            text=proposed,
            line=requirement.line,
            section=requirement.section,
            section_id=requirement.section_id,
            language=requirement.language,
        )
        judged.findings_after = check_requirement(rewritten)
    return judged
