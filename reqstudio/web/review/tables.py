"""What Review mode shows of a round, as markdown: each reviewer's findings in the seed's
fields, the judge's disagreements, the issues with their statuses round by round, the checks
and revisions, and the closing summary."""

from __future__ import annotations

import re
from typing import Any

from reqstudio.messages import join
from reqstudio.modes.review import ReviewResult
from reqstudio.modes.review.models import (
    BlueTeamReview,
    ClientReview,
    JudgeReview,
    RedTeamReview,
    ReviewRound,
    SectionRevision,
)
from reqstudio.modes.review.tracking import issue_ledger
from reqstudio.modes.review.verdict import failed_run_outcome
from reqstudio.outcomes import Outcome
from reqstudio.web.endings import with_mark
from reqstudio.web.modes import shortened
from reqstudio.web.rendering import cell as shared_cell
from reqstudio.web.rendering import markdown_table
from reqstudio.web.session import diff_block
from reqstudio.web.texts import Catalog, counted, lang, sentences, usage_token_figure

tr = Catalog("review")


def cell(text: Any) -> str:
    return shared_cell(text) or " "


def priority_name(priority: str) -> str:
    return tr.get(f"priority.{priority}", priority)


def table(columns: list[str], rows: list[list[Any]], extra_head: list[str] = ()) -> str:
    """A markdown table under the named columns (`review.column.*`), or "(none)"."""
    if not rows:
        return tr("none_found")
    return markdown_table([tr(f"column.{c}") for c in columns] + list(extra_head), rows)


def field_heading(key: str) -> str:
    """The seed's field name read in the user's language (the key itself is in the JSON
    download, not on screen)."""
    return f"**{tr('field.' + key)}**\n\n"


def section_label(agent_id: str, titles: dict[str, str]) -> str:
    return f"{agent_id} {titles.get(agent_id, '')}".strip()


BUTTON_CHARS = 60  # a section's button label at most


def section_button(section_id: str, title: str) -> str:
    """A section's button when the user picks one to edit: its id and title, a long title cut
    at a word with an ellipsis (the label was cut mid-word at 60 characters)."""
    return shortened(section_label(section_id, {section_id: title}), BUTTON_CHARS)


def reviewer_output(review: Any, titles: dict[str, str]) -> str:
    """A reviewer's findings as tables, in the seed's fields."""
    parts: list[str] = []
    if isinstance(review, RedTeamReview):
        parts.append(
            table(
                ["section", "category", "issue", "expected", "priority"],
                [
                    [
                        section_label(i.agent_id, titles),
                        i.category,
                        i.issue,
                        i.expected,
                        priority_name(i.priority),
                    ]
                    for i in review.improvements
                ],
            )
        )
    elif isinstance(review, BlueTeamReview):
        parts.append(field_heading("keep_as_is") + table(
            ["section", "aspect", "reason"],
            [[section_label(k.agent_id, titles), k.aspect, k.reason] for k in review.keep_as_is],
        ))  # fmt: skip
        parts.append(field_heading("enhancement_suggestions") + table(
            ["section", "aspect", "suggestion"],
            [[section_label(s.agent_id, titles), s.aspect, s.suggestion]
             for s in review.enhancement_suggestions],
        ))  # fmt: skip
    elif isinstance(review, ClientReview):
        parts.append(field_heading("business_gaps") + table(
            ["aspect", "gap", "impact", "required_info"],
            [[g.aspect, g.gap, g.impact, g.required_info] for g in review.business_gaps],
        ))  # fmt: skip
        for name, items in (
            ("market_concerns", review.market_concerns),
            ("feasibility_concerns", review.feasibility_concerns),
        ):
            if items:
                parts.append(field_heading(name) + "\n".join(f"- {cell(i)}" for i in items))
    elif isinstance(review, JudgeReview):
        parts.append(field_heading("prioritized_improvements") + table(
            ["number", "section", "task", "rationale"],
            [[p.priority, section_label(p.agent_id, titles), p.task, p.rationale]
             for p in review.prioritized_improvements],
        ))  # fmt: skip
        parts.append(disagreement_tables(review, titles))
    if review.score is not None:
        parts.append(tr("legacy_score", score=review.score))
    return "\n\n".join(parts)


def listed(names) -> str:
    return join(list(names), lang())


def reviewer_name(reviewer: str) -> str:
    """A reviewer as the UI names it (红队 / Red team); the model's own word if not one."""
    return tr.get(reviewer, reviewer)


def has_words(text: str) -> bool:
    """A letter or a character of any script: text, not only brackets and commas."""
    return bool(re.search(r"[^\W\d_]", text or ""))


def disagreement_tables(judge: JudgeReview, titles: dict[str, str]) -> str:
    """The judge's conflicting views (red and blue side by side, and the ruling) and
    consensus issues. A view where neither team said anything (a small model's leftovers
    such as a ruling of `}, {`) is no disagreement and is not shown."""
    conflicts = table(
        ["section", "disputed", "red_team", "blue_team", "ruling"],
        [
            [section_label(c.agent_id, titles), c.aspect, c.red_team, c.blue_team, c.ruling]
            for c in judge.conflicting_views
            if has_words(c.red_team) or has_words(c.blue_team)
        ],
    )
    consensus = table(
        ["section", "consensus_issue", "raised_by"],
        [
            [section_label(c.agent_id, titles), c.issue, listed(map(reviewer_name, c.raised_by))]
            for c in judge.consensus_issues
        ],
    )
    return (
        f"{field_heading('conflicting_views')}{conflicts}\n\n"
        f"{field_heading('consensus_issues')}{consensus}"
    )


def status_name(status: str) -> str:
    return tr(f"status_{status}")


def round_issue_table(
    record: ReviewRound, earlier: list[ReviewRound], titles: dict[str, str]
) -> str:
    """This round's issues with their ids and statuses (the earlier ones resolved this round
    included), the checks of the last revision, the judge's overrulings and the notes."""
    ledger = issue_ledger([*earlier, record])
    rows = []
    for entry in record.issue_statuses:
        tracked = ledger.get(entry.issue_id)
        if tracked is None:
            continue
        rows.append(
            [entry.issue_id, section_label(tracked.agent_id, titles), tracked.issue,
             priority_name(tracked.priority), status_name(entry.status)]
        )  # fmt: skip
    parts = []
    if rows:
        parts.append(tr("issues_heading") + "\n\n" + table(
            ["id", "section", "issue", "priority", "status"],
            rows,
        ))  # fmt: skip
    if record.checks:
        verdict = {True: tr("check_holds"), False: tr("check_broken"), None: tr("check_unanswered")}
        parts.append(tr("checks_heading") + "\n\n" + table(
            ["check", "section", "text", "issue", "result", "note"],
            [[c.check_id, section_label(c.agent_id, titles), f"{tr('check_kind.' + c.kind)}: {c.text}",
              c.issue_id or "", verdict[c.holds], c.note] for c in record.checks],
        ))  # fmt: skip
    parts += [
        tr("overruled", issue=o.issue_id, aspect=o.aspect, ruling=o.ruling)
        for o in record.overruled
    ]
    parts += [tr("tracking_note", note=note) for note in record.tracking_notes]
    return "\n\n".join(parts)


def overruling_lines(result: ReviewResult) -> list[str]:
    """Every finding the judge overruled by its id, with its round (the closing summary)."""
    return [
        f"{tr('step_round', round=o['round'])} · "
        + tr("overruled", issue=o["issue_id"], aspect=o["aspect"], ruling=o["ruling"])
        for o in result.overrulings()
    ]


def issues_across_rounds(rounds: list[ReviewRound], titles: dict[str, str]) -> str:
    """Every issue of the run: id, section, issue, priority, its status in each round."""
    ledger = issue_ledger(rounds)
    if not ledger:
        return ""
    numbers = [r.round for r in rounds]
    rows = [
        [t.id, section_label(t.agent_id, titles), t.issue, priority_name(t.priority)]
        + [status_name(t.status_by_round[str(n)]) if str(n) in t.status_by_round else "·"
           for n in numbers]
        for t in ledger.values()
    ]  # fmt: skip
    head = ["id", "section", "issue", "priority"]
    rounds = [tr("column.round", round=n) for n in numbers]
    return tr("issues_all") + "\n\n" + table(head, rows, extra_head=rounds)


def rejected_reason(revision: SectionRevision) -> str:
    """Why the author's answer was refused, in the reader's language."""
    return revision.rejected_text(lang())


def section_diff(revision: SectionRevision) -> str:
    if revision.failed:
        return tr("author_failed", reason=revision.failed)
    if revision.rejected:
        return tr("author_rejected", reason=rejected_reason(revision))
    if not revision.changed:
        return tr("unchanged")
    return diff_block(revision.agent_id, revision.before.strip("\n"), revision.after.strip("\n"))


def decision_text(record_or_decision: Any, titles: dict[str, str]) -> str:
    decision = record_or_decision
    if decision.action == "iterate":
        return tr(
            "iterate", sections=", ".join(section_label(a, titles) for a in decision.focus_on)
        )
    # The detail (`red_team: <the provider's error>`) is the record's, in English; the failed
    # reviewer's own step says the same in the user's language.
    return tr("stop", reason=tr(decision.reason))


def round_details(record: ReviewRound, titles: dict[str, str]) -> str:
    """The round table's rows for what the decision does not say: each revision's outcome
    (with why it failed or was rejected) and the issues that name no section."""
    parts = []
    if record.revisions:
        parts.append(tr("revisions_heading") + "\n\n" + table(
            ["section", "outcome", "cause"],
            [[section_label(r.agent_id, titles), tr("outcome_" + r.outcome),
              r.failed or rejected_reason(r)] for r in record.revisions],
        ))  # fmt: skip
    if record.document_wide:
        parts.append(tr("document_wide_heading") + "\n\n" + table(
            ["named_section", "issue", "expected", "priority"],
            [[i.agent_id, i.issue, i.expected, priority_name(i.priority)]
             for i in record.document_wide],
        ))  # fmt: skip
    return "\n\n".join(parts)


UNCHECKED_STOPS = {"reviewer_failed", "unplaced_issues", "no_new_high_priority"}


def final_text(result: ReviewResult) -> str:
    """The closing summary, its mark read from the run's outcome (`reqstudio.modes.review.verdict`), as
    `reqstudio review`'s exit code is: ✅ only when the version returned has no open
    high-priority finding and every reviewer took part; otherwise ⚠️, naming the reviewers that
    failed and the findings the returned version still holds."""
    values = {
        "reason": tr(result.stop_reason or "max_rounds"),
        "trajectory": result.trajectory_text(lang()),
        "rounds": counted(len(result.rounds), "round"),
        "revised": counted(
            sum(1 for r in result.rounds for v in r.revisions if v.changed), "section"
        ),
        "tokens": usage_token_figure(result.usage),
        "seconds": result.seconds,
    }
    outcome = result.outcome
    if outcome is Outcome.PASSED:
        return with_mark(outcome, tr("final", **values))
    failures = [
        tr(
            "failed_reviewer",
            round=r.round,
            reviewer=tr(f.reviewer),
            reason=f.text(lang()),
        )
        for r in result.rounds
        for f in r.failures
    ]
    names = "; ".join(failures) or result.stop_detail
    notes = [tr("failed_reviewers", names=names)] if names else []
    if result.open_findings():
        notes.append(
            tr(
                "open_findings",
                round=result.returned_round,
                count=len(result.open_findings()),
                ids=result.open_findings_text(lang()),
            )
        )
    key = "final_partial" if failures and result.stop_reason not in UNCHECKED_STOPS else ""
    return with_mark(outcome, tr(key or "final_unchecked", failures="\n\n".join(notes), **values))


def failure_note(
    reason: str, partial: object, advice: str = "", *, rounds: int | None = None
) -> str:
    """A run that could not finish: ❌, as `reqstudio review` exits 3 (finished rounds kept)
    or 1 (none); it says finished rounds are kept only when there are some (`rounds`, else
    the partial result's), then what to change before resuming (`advice`,
    reqstudio/web/resume_advice.py)."""
    finished = finished_rounds(partial) if rounds is None else rounds
    kept = tr("kept_rounds") if finished else tr("kept_none")
    text = sentences(tr("failed", reason=reason), kept, advice)
    return with_mark(failed_run_outcome(partial), text)


def finished_rounds(partial: object) -> int:
    """How many rounds a failed or stopped run finished (its partial result's)."""
    return len(getattr(partial, "rounds", None) or [])
