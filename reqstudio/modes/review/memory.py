"""A round's memory, applied to its record: the red team's findings get
their issue ids and statuses (`reqstudio.modes.review.tracking`), then come in the judge's order with its
rulings (`reqstudio.modes.review.ranking`), and the record keeps the version it reviewed (for
`reqstudio.modes.review.versions`). Kept apart from the nodes so the loop's flow stays readable."""

from __future__ import annotations

import logging
from typing import Any

from reqstudio.document_model import DocumentStructure
from reqstudio.modes.review.convergence import sorted_improvements
from reqstudio.modes.review.models import RedTeamReview, ReviewRound
from reqstudio.modes.review.ranking import JudgeRulings, in_fix_order, judge_rulings
from reqstudio.modes.review.tracking import RoundTracking, track_round

log = logging.getLogger("reqstudio.review")


def red_team_tracking(state: dict[str, Any]) -> RoundTracking | None:
    """This round's issue ids and statuses (None when the red team could not be read)."""
    answer = next(
        (o["review"] for o in state["reviews"] if o["reviewer"] == "red_team" and "review" in o),
        None,
    )
    if answer is None:
        return None
    earlier = [ReviewRound.model_validate(r) for r in state["rounds"]]
    return track_round(RedTeamReview.model_validate(answer), earlier, state["round"])


def remember_round(
    record: ReviewRound, state: dict[str, Any], document: DocumentStructure
) -> tuple[JudgeRulings, dict[str, str] | None]:
    """Set `record.improvements` (with ids, in the judge's order) and `record.document_wide`
    (with ids), its statuses, checks, overrulings and notes, and the version it reviewed.
    Returns the judge's rulings and the issues' statuses (None when the red team could not be
    read: no statuses this round)."""
    tracking = red_team_tracking(state)
    red = record.red_team
    if tracking is not None and red is not None:
        red = red.model_copy(update={"improvements": tracking.improvements})
        record.issue_statuses = tracking.statuses
        record.checks = tracking.checks
        record.tracking_notes = tracking.notes
        for note in tracking.notes:
            log.warning("review round %d: %s", record.round, note)
    record.improvements, record.document_wide = sorted_improvements(red, record.judge, document)
    rulings = judge_rulings(record.improvements, record.judge)
    record.improvements = in_fix_order(record.improvements, rulings.ranks)
    record.overruled = rulings.overruled
    record.reviewed_document = state["document"]
    return rulings, (tracking.status_map() if tracking is not None else None)
