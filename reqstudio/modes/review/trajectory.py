"""How a run went, for people: the seed's `improvement_trajectory`, the same in words
("第1轮发现5个问题 → 修正；…"), and the counts per round and priority that the chart plots."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reqstudio.messages import join, text
from reqstudio.modes.review.models import PRIORITIES, ReviewRound

# The words are the catalogue's `review.trajectory_words` (stop reasons under `stop_<reason>`).
WORDS = "review.trajectory_words"


def _words(key: str, language: str, **values: object) -> str:
    return text(f"{WORDS}.{key}", language, **values)


def found_words(record: ReviewRound, last: bool, language: str) -> str:
    """What the round found ("第1轮发现5个问题", "round 2 found 1 issue"); the last round says
    when none of what it found is high-priority."""
    count = record.total_improvements
    key = "found_none" if not count else "found_one" if count == 1 else "found_other"
    found = _words(key, language, round=record.round, count=count)
    if count and not record.count_by_priority()["high"] and last:
        found += _words("no_high", language)
    return found


def revision_words(record: ReviewRound, language: str) -> str:
    """ "fixed" only when every revision changed its section; otherwise what really happened,
    from the revisions' outcomes ("fixed 1 of 2 sections (1 failed)", "not fixed (2
    unchanged)")."""
    counts = record.outcomes()
    total, changed = len(record.revisions), counts["changed"]
    if changed == total:
        return _words("fixed", language)
    rest = [
        _words(f"outcome_{o}", language, n=counts[o])
        for o in ("unchanged", "failed", "rejected")
        if counts[o]
    ]
    details = join(rest, language)
    if changed:
        key = "fixed_some_one" if total == 1 else "fixed_some_other"
        return _words(key, language, changed=changed, total=total, details=details)
    return _words("not_fixed", language, details=details)


def focus_titles(record: ReviewRound, titles: dict[str, str]) -> list[str]:
    focus = record.decision.focus_on if record.decision else []
    return [titles.get(agent_id, agent_id) for agent_id in focus]


def improvement_trajectory(
    rounds: Sequence[ReviewRound], stop_reason: str | None, titles: dict[str, str] | None = None
) -> dict[str, dict[str, Any]]:
    """The seed's shape: {"round_1": {"improvements_needed": 5, "focus": [...]}, ...,
    "round_3": {"improvements_needed": 0, "status": "converged"}}."""
    titles = titles or {}
    trajectory: dict[str, dict[str, Any]] = {}
    for index, record in enumerate(rounds):
        entry: dict[str, Any] = {
            "improvements_needed": record.total_improvements,
            "by_priority": record.count_by_priority(),
            "focus": focus_titles(record, titles),
        }
        if record.issue_statuses:
            statuses = [e.status for e in record.issue_statuses]
            entry["issue_statuses"] = {
                s: statuses.count(s) for s in ("new", "persisting", "regressed", "resolved")
            }
        if record.score is not None:
            entry["score"] = record.score
        if record.document_wide:
            entry["document_wide"] = len(record.document_wide)
        if record.revisions:
            entry["revisions"] = record.outcomes()
        if index == len(rounds) - 1 and stop_reason:
            entry["status"] = "converged" if stop_reason == "quality_sufficient" else stop_reason
        trajectory[f"round_{record.round}"] = entry
    return trajectory


def trajectory_text(rounds: Sequence[ReviewRound], stop_reason: str | None, language: str) -> str:
    parts = []
    for index, record in enumerate(rounds):
        last = index == len(rounds) - 1
        found = found_words(record, last, language)
        if last and stop_reason:
            outcome = _words(f"stop_{stop_reason}", language)
        elif record.revisions:
            outcome = revision_words(record, language)
        else:
            outcome = _words("unfinished", language)
        parts.append(_words("step", language, found=found, outcome=outcome))
    said = _words("round_separator", language).join(parts)
    return said[:1].upper() + said[1:]  # a Chinese first character has no case: unchanged


def counts_per_round(rounds: Sequence[ReviewRound]) -> dict[str, list[int]]:
    """{"round": [1, 2, 3], "high": [...], "medium": [...], "low": [...]} for the chart."""
    data: dict[str, list[int]] = {"round": [r.round for r in rounds]}
    for priority in PRIORITIES:
        data[priority] = [r.count_by_priority()[priority] for r in rounds]
    return data
