"""Review mode's four-perspective panel as Rewrite mode's third-stage reviewer
(`REWRITE_REVIEWER=panel`; `reqstudio.modes.rewrite.reviewers.reviewer_for` looks this module up).

One call of `review` is one panel round: the red team, blue team and client concurrently, then
the judge. Rewrite patches every issue it gets, so the panel hands over the seed's focus: the
high-priority improvements (`determine_next_action`'s rule), each with what the blue team wants
kept in that section; no high-priority issue means nothing to patch (`quality_sufficient`).

The rules are Review mode's: a finding naming no section is handed over too (Rewrite asks again
with the valid ids, then keeps and shows it), and a member that could not review is named in
the answer (`ReviewFindings.failed`): the rewrite then ends without a pass. "Nothing
high-priority" while the red team failed is no verdict (`reviewer_failed`), never "no issues";
with neither the red team nor the judge readable the review stage fails."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reqstudio.llm import ModelFactory
from reqstudio.modes.review.convergence import determine_next_action, sorted_improvements
from reqstudio.modes.review.models import BlueTeamReview, JudgeReview, RedTeamReview
from reqstudio.modes.review.nodes import ask_panel_member, reviews_for_judge
from reqstudio.modes.review.reasons import reason_failure
from reqstudio.modes.rewrite.models import ReviewerFailure, ReviewIssue
from reqstudio.modes.rewrite.reviewers import ReviewFindings, ReviewInput
from reqstudio.structured import StructuredOutputError

log = logging.getLogger("reqstudio.review")

KINDS = {"omission", "contradiction", "inconsistency", "unresolved_clarification"}


@dataclass
class PanelReviewer:
    """Rewrite's `SectionReviewer` protocol, answered by the red/blue/client/judge panel."""

    factory: ModelFactory
    name: str = "panel"

    async def review(self, draft: ReviewInput, callbacks: Sequence[Any]) -> list[ReviewIssue]:
        document = draft.document

        async def ask(reviewer: str, **extra: Any) -> Any:
            return await ask_panel_member(
                self.factory, callbacks, reviewer, document, draft.language, draft.round,
                background=draft.background, **extra,
            )  # fmt: skip

        outcomes = await asyncio.gather(
            ask("red_team"), ask("blue_team"), ask("client"), return_exceptions=True
        )
        named = dict(zip(("red_team", "blue_team", "client"), outcomes, strict=True))
        readable = []
        failed: list[ReviewerFailure] = []
        for reviewer, outcome in named.items():
            if isinstance(outcome, BaseException):
                failed.append(failure(reviewer, outcome))
                readable.append({"reviewer": reviewer, "failed": failed[-1].reason})
            else:
                readable.append({"reviewer": reviewer, "review": outcome.model_dump(mode="json")})
        red = named["red_team"] if isinstance(named["red_team"], RedTeamReview) else None
        blue = named["blue_team"] if isinstance(named["blue_team"], BlueTeamReview) else None
        judge: JudgeReview | None = None
        if any("review" in r for r in readable):
            try:
                judge = await ask("judge", reviews=reviews_for_judge(readable))
            except Exception as error:
                failed.append(failure("judge", error))
        if red is None and judge is None:
            raise StructuredOutputError(
                "the review panel's red team and judge answers could not be read", "", 0
            )
        # As in Review mode: findings on sections (by id or title) and the rest, kept; the red
        # team's failure counts, so "nothing high-priority" without it is no verdict.
        placed, unplaced = sorted_improvements(red, judge, document)
        red_failure = next((f.reason for f in failed if f.reviewer == "red_team"), None)
        decision = determine_next_action(
            placed, 1, [], max_rounds=10, document_wide=unplaced, red_team_failure=red_failure
        )
        if decision.reason in ("quality_sufficient", "reviewer_failed"):
            return ReviewFindings([], failed)
        keep: dict[str, list[str]] = {}
        for kept in blue.keep_as_is if blue else []:
            keep.setdefault(kept.agent_id, []).append(kept.aspect)
        # Every high-priority finding, those naming no section too: Rewrite asks the reviewer
        # again with the valid ids, then keeps and shows what still names none.
        issues = []
        for item in [*placed, *unplaced]:
            if item.priority != "high":
                continue
            suggestion = item.expected
            if keep.get(item.agent_id):
                suggestion += f" (keep as is: {', '.join(keep[item.agent_id])})"
            issues.append(
                ReviewIssue(
                    section_id=item.agent_id,
                    kind=item.category if item.category in KINDS else "omission",
                    description=item.issue,
                    suggestion=suggestion,
                )
            )
        return ReviewFindings(issues, failed)


def failure(reviewer: str, error: BaseException) -> ReviewerFailure:
    why = reason_failure(error)
    log.warning("rewrite panel: %s failed: %s", reviewer, why.text("en"))
    return ReviewerFailure(reviewer=reviewer, reason=why.text("en"), failure=why.as_dict())


def panel_reviewer(factory: ModelFactory) -> PanelReviewer:
    return PanelReviewer(factory)
