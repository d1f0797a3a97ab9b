"""A review's verdict is the verdict of the document it returns.

A finished run returns one version (`versions.best_version`: not always the last). It passes
only when that version has no open high-priority finding (one the judge did not overrule by its
id) and every reviewer of every round took part; every other finished run ended without a pass,
whatever its stop reason. The browser's mark and `reqstudio review`'s exit code are both read
from `review_outcome`.
"""

from __future__ import annotations

from collections.abc import Sequence

from reqstudio.modes.review.models import Improvement, ReviewRound, StopReason
from reqstudio.outcomes import Outcome

# Whether a stop can be a pass at all. Only "no high-priority issue left" can; the seed's other
# rules stop with high-priority issues open, and the last three stop without a verdict. Every
# stop reason is named here: `review_outcome` refuses one that is not.
STOP_CAN_PASS: dict[StopReason, bool] = {
    "quality_sufficient": True,
    "no_convergence": False,
    "max_rounds": False,
    "score_declined": False,
    "reviewer_failed": False,
    "unplaced_issues": False,
    "no_new_high_priority": False,
}


def returned_round(rounds: Sequence[ReviewRound], best_round: int | None) -> ReviewRound | None:
    """The round that reviewed the version the run returns (the last one unless the best-version
    rule chose an earlier one)."""
    if best_round is not None:
        chosen = next((r for r in rounds if r.round == best_round), None)
        if chosen is not None:
            return chosen
    return rounds[-1] if rounds else None


def open_high_priority(record: ReviewRound | None) -> list[Improvement]:
    """The high-priority findings on the version `record` reviewed that the judge did not
    overrule (on a section or document-wide)."""
    if record is None:
        return []
    overruled = {o.issue_id for o in record.overruled}
    return [
        i
        for i in record.all_improvements
        if i.priority == "high" and not (i.issue_id and i.issue_id in overruled)
    ]


def review_outcome(
    stop_reason: str | None, rounds: Sequence[ReviewRound], best_round: int | None
) -> Outcome:
    """PASSED or WITHOUT_PASS for a finished run (`stop_reason` set). A run without one did
    not finish: INCOMPLETE when it has rounds to keep, else FAILED."""
    if stop_reason is None:
        return Outcome.INCOMPLETE if rounds else Outcome.FAILED
    can_pass = STOP_CAN_PASS[stop_reason]  # type: ignore[index]  # KeyError: an unmapped stop
    every_reviewer = not any(r.failures for r in rounds)
    returned = returned_round(rounds, best_round)
    if can_pass and every_reviewer and not open_high_priority(returned):
        return Outcome.PASSED
    return Outcome.WITHOUT_PASS


def failed_run_outcome(partial: object) -> Outcome:
    """A run that failed midway: INCOMPLETE when it kept finished rounds (written, marked
    incomplete), else FAILED."""
    return Outcome.INCOMPLETE if getattr(partial, "rounds", None) else Outcome.FAILED
