"""Keep the best version.

Round n reviews version n of the document (version 1 is the original; version n+1 is what
the authors made of version n). A version is worse than another when it has a high-priority
regression (a resolved high-priority issue back, or a kept aspect broken) and the other has
none, else when it has more high-priority issues. The result of a run is the best version
seen; on a tie, the later one (the reviewers found it no worse). Only versions the red team
reviewed are compared. A version older than the user's own edits ("pause after each round") is
never chosen: going back would throw the edits away. The run's verdict is that version's
(`reqstudio.modes.review.verdict`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reqstudio.messages import join, text
from reqstudio.modes.review.models import ReviewRound


def version_counts(record: ReviewRound) -> dict[str, Any]:
    """The issue counts of the version `record` reviewed (the JSON's `versions`)."""
    counts: dict[str, Any] = {"version": record.round, "reviewed_in_round": record.round}
    counts.update(record.count_by_priority())
    counts["total"] = record.total_improvements
    statuses = [e.status for e in record.issue_statuses]
    for status in ("new", "persisting", "regressed", "resolved"):
        counts[status] = statuses.count(status)
    return counts


def high_regressions(record: ReviewRound) -> list[str]:
    """The ids of the high-priority issues `record` found regressed (a broken kept aspect is
    always one). A low-priority issue back is counted like any other low-priority issue: it
    does not make a version with fewer high-priority issues the worse one."""
    high = {i.issue_id for i in record.all_improvements if i.priority == "high" and i.issue_id}
    return [
        e.issue_id for e in record.issue_statuses if e.status == "regressed" and e.issue_id in high
    ]


def _badness(record: ReviewRound) -> tuple[int, int]:
    return (1 if high_regressions(record) else 0, version_counts(record)["high"])


@dataclass
class BestVersion:
    round: int  # the round that reviewed it (= the version's number)
    last_round: int
    why: str = ""  # why not the last version: `review.best_version.<why>` in the catalogue
    values: dict[str, Any] = field(default_factory=dict)  # what its words are filled with

    @property
    def is_last(self) -> bool:
        return self.round == self.last_round

    def reason(self, language: str) -> str:
        """Why the result is this version, not the last one ("" when it is the last)."""
        if not self.why:
            return ""
        values = {**self.values, "regressed": join(self.values.get("regressed", []), language)}
        why = text(f"review.best_version.{self.why}", language, **values)
        return text("review.best_version.reason", language, best=self.round, why=why)


def best_version(rounds: Sequence[ReviewRound]) -> BestVersion | None:
    """The best reviewed version, and why it is not the last one (when it is not)."""
    reviewed = [r for r in rounds if r.reviewed_document is not None and r.decision is not None]
    if reviewed and reviewed[-1].red_team is None:
        # The last version's red team gave no answer: nothing says it is worse; keep it.
        return BestVersion(round=reviewed[-1].round, last_round=reviewed[-1].round)
    reviewed = [r for r in reviewed if r.red_team is not None]  # counts that are a review
    edited = [r.round for r in reviewed if r.edited_by_user]
    if edited:  # the user's edits went into the next version: only it and later ones qualify
        reviewed = [r for r in reviewed if r.round > max(edited)] or reviewed[-1:]
    if not reviewed:
        return None
    best = min(reversed(reviewed), key=_badness)  # reversed: on a tie, the later round
    last = reviewed[-1]
    choice = BestVersion(round=best.round, last_round=last.round)
    if best is last:
        return choice
    now, then = version_counts(last), version_counts(best)
    regressed = high_regressions(last)
    choice.values = {"last": last.round, "best": best.round}
    if regressed and not high_regressions(best):
        choice.why, choice.values["regressed"] = "regression", list(regressed)
    else:
        choice.why = "more_high"
        choice.values |= {"now": now["high"], "then": then["high"]}
    return choice


def versions_json(rounds: Sequence[ReviewRound]) -> list[dict[str, Any]]:
    return [version_counts(r) for r in rounds if r.decision is not None]
