"""Keep the best version (issue 16, item 9).

Round n reviews version n of the document (version 1 is the original; version n+1 is what
the authors made of version n). A version is worse than another when it has a regression
(a resolved issue back, or a kept aspect broken) and the other has none, else when it has more
high-priority issues. The result of a run is the best version seen; on a tie, the later one
(the reviewers found it no worse). Only versions the red team reviewed are compared. A version
older than the user's own edits ("pause after each
round") is never chosen: going back would throw the edits away."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agents.review.models import ReviewRound


def version_counts(record: ReviewRound) -> dict[str, Any]:
    """The issue counts of the version `record` reviewed (the JSON's `versions`)."""
    counts: dict[str, Any] = {"version": record.round, "reviewed_in_round": record.round}
    counts.update(record.count_by_priority())
    counts["total"] = record.total_improvements
    statuses = [e.status for e in record.issue_statuses]
    for status in ("new", "persisting", "regressed", "resolved"):
        counts[status] = statuses.count(status)
    return counts


def _badness(record: ReviewRound) -> tuple[int, int]:
    counts = version_counts(record)
    return (1 if counts["regressed"] else 0, counts["high"])


@dataclass
class BestVersion:
    round: int  # the round that reviewed it (= the version's number)
    last_round: int
    reason_en: str = ""
    reason_zh: str = ""

    @property
    def is_last(self) -> bool:
        return self.round == self.last_round

    def reason(self, language: str) -> str:
        return self.reason_zh if language == "zh" else self.reason_en


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
    regressed = [e.issue_id for e in last.issue_statuses if e.status == "regressed"]
    if regressed and not then["regressed"]:
        why_en = f"round {last.round} found a regression ({', '.join(regressed)})"
        why_zh = f"第{last.round}轮发现回退问题（{'、'.join(regressed)}）"
    else:
        why_en = (
            f"round {last.round} found more high-priority issues ({now['high']} against "
            f"{then['high']} in round {best.round})"
        )
        why_zh = (
            f"第{last.round}轮发现的高优先级问题更多（{now['high']} 个，第{best.round}轮为 "
            f"{then['high']} 个）"
        )
    choice.reason_en = (
        f"The result is the version reviewed in round {best.round}, not the last one: {why_en}."
    )
    choice.reason_zh = f"结果是第{best.round}轮审阅的版本，而不是最后一版：{why_zh}。"
    return choice


def versions_json(rounds: Sequence[ReviewRound]) -> list[dict[str, Any]]:
    return [version_counts(r) for r in rounds if r.decision is not None]
