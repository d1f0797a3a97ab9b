"""The loop's two decisions, as plain functions (seed 001, 第三步 and 第四步):
`determine_next_action` stops on a named reason or picks the sections to revise;
`generate_review_feedback` turns the panel's findings into each author's task list."""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from reqstudio.document_model import DocumentStructure
from reqstudio.messages import text
from reqstudio.modes.review.models import (
    BlueTeamReview,
    Improvement,
    IterationContext,
    JudgeReview,
    NextAction,
    Priority,
    RedTeamReview,
    ReviewRound,
    SectionFeedback,
    SpecificTask,
)
from reqstudio.modes.review.placement import place
from reqstudio.modes.review.ranking import UNRANKED, JudgeRulings, judge_rulings
from reqstudio.modes.review.tracking import similarity

log = logging.getLogger("reqstudio.review")

SUMMARY_CHARS = 240


def determine_next_action(
    improvements: Sequence[Improvement],
    round_number: int,
    history: Sequence[dict[str, Any]],
    *,
    max_rounds: int = 3,
    score: float | None = None,
    scored_by: Sequence[str] | None = None,
    document_wide: Sequence[Improvement] = (),
    red_team_failure: str | None = None,
    statuses: Mapping[str, str] | None = None,
    overruled: Collection[str] = (),
) -> NextAction:
    """The seed's `_determine_next_action`, with its fourth stop (评分下降).

    `improvements`: the findings on a section, in the order they are to be fixed (the
    judge's); `document_wide`: those naming no section (they count for every rule, but no
    author can take them). `history`: the earlier rounds, each
    {"total_improvements": int, "score": float | None, "scored_by": [reviewer, ...]}.
    Stops, in the seed's order: no high-priority issue left (quality_sufficient, or
    reviewer_failed when the red team gave no readable answer: `red_team_failure` says why);
    with the issues' `statuses` (issue id -> new/persisting/resolved/regressed), none of the
    high-priority issues left is new or regressed: they all persist from earlier rounds
    (no_new_high_priority, the seed's "无新的 high priority 问题"); the number of improvements
    did not fall since the last round (no_convergence); the reviewers' mean score fell
    (score_declined, only when the same reviewers scored both rounds); the round limit
    (max_rounds). Otherwise iterate on the sections with high-priority issues
    (unplaced_issues when there is none to revise). Findings the judge `overruled` (issue
    ids) are neither fixed nor counted as high-priority issues left."""
    found = [*improvements, *document_wide]

    def stop(reason: str, detail: str = "") -> NextAction:
        return NextAction(action="approve", reason=reason, detail=detail, improvements=found)

    def open_high(item: Improvement) -> bool:
        return item.priority == "high" and not (item.issue_id and item.issue_id in overruled)

    high = [i for i in found if open_high(i)]
    if not high:
        if red_team_failure:
            # Nothing high was found because the red team could not look: not a pass.
            log.warning(
                "review round %d: no high-priority issue, but the red team failed (%s); "
                "stopping without a verdict",
                round_number,
                red_team_failure,
            )
            return stop("reviewer_failed", f"red_team: {red_team_failure}")
        log.info("review round %d: no high-priority issue, stopping", round_number)
        return stop("quality_sufficient")
    if statuses is not None and not any(
        statuses.get(i.issue_id or "", "new") in ("new", "regressed") for i in high
    ):
        log.info(
            "review round %d: no new high-priority issue (%d persist), stopping",
            round_number,
            len(high),
        )
        return stop("no_new_high_priority")
    if round_number > 1 and history:
        previous = history[-1]
        if len(found) >= int(previous["total_improvements"]):
            log.warning(
                "review round %d: the number of issues did not fall, stopping", round_number
            )
            return stop("no_convergence")
        before = previous.get("score")
        if score is not None and before is not None and score < before:
            earlier = previous.get("scored_by")
            if scored_by is not None and earlier is not None and set(scored_by) != set(earlier):
                # A mean over other reviewers is no comparison (one that failed drops out).
                log.info(
                    "review round %d: score rule skipped: scored by %s, the round before by %s",
                    round_number,
                    ", ".join(sorted(scored_by)) or "nobody",
                    ", ".join(sorted(earlier)) or "nobody",
                )
            else:
                log.warning("review round %d: the reviewers' score fell, stopping", round_number)
                return stop("score_declined")
    if round_number >= max_rounds:
        log.warning("review round %d: round limit reached, stopping", round_number)
        return stop("max_rounds")
    focus = list(dict.fromkeys(i.agent_id for i in improvements if open_high(i)))
    if not focus:
        log.warning(
            "review round %d: the high-priority issues name no section; nothing to revise",
            round_number,
        )
        return stop("unplaced_issues")
    return NextAction(action="iterate", focus_on=focus, improvements=found)


def judge_priority(rank: int) -> Priority:
    return "high" if rank <= 1 else "medium" if rank == 2 else "low"


def sorted_improvements(
    red: RedTeamReview | None, judge: JudgeReview | None, document: DocumentStructure
) -> tuple[list[Improvement], list[Improvement]]:
    """The round's improvements as (on a section, document-wide). A finding that names a
    section by its title goes to that section; one that names none is kept, never dropped
    (Review and Rewrite's panel alike)."""
    placed, unplaced = place(found_improvements(red, judge), document)
    if unplaced:
        log.warning(
            "review: %d finding(s) name no section of the document; kept as document-wide "
            "issues: %s",
            len(unplaced),
            ", ".join(f"[{i.agent_id}] {i.priority}" for i in unplaced),
        )
    return placed, unplaced


def found_improvements(red: RedTeamReview | None, judge: JudgeReview | None) -> list[Improvement]:
    """The red team's improvements (the seed's list); when the red team's answer could not be
    read, the judge's prioritized tasks stand in for it."""
    if red is not None:
        found = list(red.improvements)
    elif judge is not None:
        found = [
            Improvement(
                agent_id=item.agent_id,
                category="judge",
                issue=item.task,
                expected=item.task,
                priority=judge_priority(item.priority),
            )
            for item in judge.prioritized_improvements
        ]
    else:
        found = []
    return found


def _same_aspect(a: str, b: str) -> bool:
    return a == b or similarity(a.replace("_", " "), b.replace("_", " ")) >= 0.8


def _validation(issue: str, language: str) -> str:
    return text("review.engine.validation", language, issue=issue)


def generate_review_feedback(
    document: DocumentStructure,
    round_number: int,
    improvements: Sequence[Improvement],
    blue: BlueTeamReview | None,
    judge: JudgeReview | None,
    language: str = "en",
    rulings: JudgeRulings | None = None,
) -> dict[str, SectionFeedback]:
    """For each section with work to do: the seed's `iteration_context`, `specific_tasks`
    (the red team's improvements and the judge's tasks in the judge's order, then the blue
    team's enhancements) and `avoid_changes_to` (the blue team's keep_as_is aspects for that
    section, as the judge's `conflicting_views` ruled; see `reqstudio.modes.review.ranking`)."""
    rulings = rulings if rulings is not None else judge_rulings(improvements, judge)
    ranked: dict[str, list[tuple[int, int, dict[str, Any]]]] = {}
    needs: dict[str, list[str]] = {}

    def add(agent_id: str, rank: int, **task: Any) -> None:
        items = ranked.setdefault(agent_id, [])
        items.append((rank, len(items), task))

    for item in improvements:
        if item.issue_id and item.issue_id in rulings.overruled_ids:
            continue  # the judge upheld the blue team: nothing to change
        add(
            item.agent_id,
            rulings.ranks.get(item.issue_id or "", UNRANKED),
            category=item.category,
            instruction=item.expected,
            example=item.example,
            validation=_validation(item.issue, language),
            priority=item.priority,
            issue_id=item.issue_id,
        )
        needs.setdefault(item.agent_id, []).append(item.issue)
    known = set(document.section_ids)
    for index, judged in enumerate(judge.prioritized_improvements if judge else []):
        if judged.agent_id in known and index not in rulings.explicit:
            add(
                judged.agent_id,
                judged.priority,
                category="judge_priority",
                instruction=judged.task,
                example="",
                validation=judged.rationale,
                priority=judge_priority(judged.priority),
            )
    tasks: dict[str, list[SpecificTask]] = {
        agent_id: [
            SpecificTask(task_id=n, **task)
            for n, (_rank, _order, task) in enumerate(sorted(items, key=lambda t: t[:2]), 1)
        ]
        for agent_id, items in ranked.items()
    }
    for suggestion in blue.enhancement_suggestions if blue else []:
        if suggestion.agent_id in tasks:  # only where there is work anyway: no churn elsewhere
            items = tasks[suggestion.agent_id]
            items.append(
                SpecificTask(
                    task_id=len(items) + 1,
                    category=suggestion.aspect,
                    instruction=suggestion.suggestion,
                    priority="low",
                )
            )
    feedback: dict[str, SectionFeedback] = {}
    for section in document.sections:
        if section.id not in tasks:
            continue
        kept = [k for k in (blue.keep_as_is if blue else []) if k.agent_id == section.id]
        released = rulings.release.get(section.id, set())
        avoid = [
            k.aspect for k in kept if not any(_same_aspect(k.aspect, r) for r in released)
        ] + rulings.keep.get(section.id, [])
        summary = " ".join(section.content.split())
        feedback[section.id] = SectionFeedback(
            agent_id=section.id,
            iteration_context=IterationContext(
                round=round_number,
                previous_output_summary=summary[:SUMMARY_CHARS]
                + ("…" if len(summary) > SUMMARY_CHARS else ""),
                what_worked_well=[
                    f"{k.aspect}: {k.reason}" if k.reason else k.aspect for k in kept
                ],
                what_needs_improvement=needs.get(
                    section.id, [t.instruction for t in tasks[section.id]]
                ),
            ),
            specific_tasks=tasks[section.id],
            avoid_changes_to=list(dict.fromkeys(avoid)),
            judge_rulings=rulings.rulings.get(section.id, []),
        )
    return feedback


def review_summary(record: ReviewRound) -> str:
    """The seed's `_log_review_summary`: one paragraph per round for the log."""
    counts = record.count_by_priority()
    parts = [
        f"review round {record.round}: {record.total_improvements} improvement(s) "
        f"(high {counts['high']}, medium {counts['medium']}, low {counts['low']})"
    ]
    if record.document_wide:
        parts.append(f"{len(record.document_wide)} of them name no section (document-wide)")
    if record.red_team is not None:
        parts.append(
            "red team: "
            + "; ".join(f"[{i.agent_id}] {i.issue}" for i in record.red_team.improvements[:5])
        )
    if record.blue_team is not None:
        parts.append(
            "blue team keeps: "
            + ", ".join(f"[{k.agent_id}] {k.aspect}" for k in record.blue_team.keep_as_is[:5])
        )
    if record.client is not None:
        parts.append("client: " + "; ".join(g.gap for g in record.client.business_gaps[:5]))
    if record.issue_statuses:
        parts.append(
            "issues: " + ", ".join(f"{e.issue_id} {e.status}" for e in record.issue_statuses)
        )
    for failure in record.failures:
        parts.append(f"{failure.reviewer} unreadable: {failure.reason}")
    if record.decision is not None:
        verdict = record.decision.reason or f"iterate on {', '.join(record.decision.focus_on)}"
        if record.decision.detail:
            verdict += f": {record.decision.detail}"
        parts.append(f"decision: {record.decision.action} ({verdict})")
    if record.score is not None:
        parts.append(f"legacy score {record.score}")
    return " | ".join(parts)
