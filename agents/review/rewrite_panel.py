"""Review mode's four-perspective panel as Rewrite mode's third-stage reviewer
(`REWRITE_REVIEWER=panel`; `agents.rewrite.reviewers.reviewer_for` looks this module up).

One call of `review` is one panel round: the red team, blue team and client concurrently, then
the judge. Rewrite patches every issue it gets, so the panel hands over the seed's focus: the
high-priority improvements (`determine_next_action`'s rule), each with what the blue team wants
kept in that section; no high-priority issue means nothing to patch (`quality_sufficient`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agents.review.convergence import determine_next_action, round_improvements
from agents.review.models import BlueTeamReview, JudgeReview, RedTeamReview
from agents.review.nodes import ask_panel_member, reviews_for_judge
from agents.review.reasons import reason_for
from agents.rewrite.models import ReviewIssue
from agents.rewrite.reviewers import ReviewInput
from reqstudio.llm import ModelFactory
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
        for reviewer, outcome in named.items():
            if isinstance(outcome, BaseException):
                log.warning("rewrite panel: %s failed: %s", reviewer, reason_for(outcome))
                readable.append({"reviewer": reviewer, "failed": reason_for(outcome)})
            else:
                readable.append({"reviewer": reviewer, "review": outcome.model_dump(mode="json")})
        red = named["red_team"] if isinstance(named["red_team"], RedTeamReview) else None
        blue = named["blue_team"] if isinstance(named["blue_team"], BlueTeamReview) else None
        judge: JudgeReview | None = None
        if any("review" in r for r in readable):
            try:
                judge = await ask("judge", reviews=reviews_for_judge(readable))
            except Exception as error:
                log.warning("rewrite panel: judge failed: %s", reason_for(error))
        if red is None and judge is None:
            raise StructuredOutputError(
                "the review panel's red team and judge answers could not be read", "", 0
            )
        improvements = round_improvements(red, judge, set(document.section_ids))
        decision = determine_next_action(improvements, 1, [], max_rounds=10)
        if decision.action != "iterate":
            return []
        keep: dict[str, list[str]] = {}
        for kept in blue.keep_as_is if blue else []:
            keep.setdefault(kept.agent_id, []).append(kept.aspect)
        issues = []
        for item in improvements:
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
        return issues


def panel_reviewer(factory: ModelFactory) -> PanelReviewer:
    return PanelReviewer(factory)
