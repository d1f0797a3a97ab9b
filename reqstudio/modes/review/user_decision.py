"""The user's hand before the authors revise.

With "pause after each round" on, a round that goes on to revise waits after the decision and
before the authors: the user sees the round's findings with their issue ids (I-n) and may
edit sections, drop findings (the authors are not asked to fix them) and add findings of
their own (a section id, a priority, the text; they get the next issue id). The authors then
revise from that list. A dropped finding stays in the round's record (the reviewers found it;
it counts for convergence) and is named in `dropped_by_user`; an added one is a finding of
the round with status "new", basis "user".

The browser and scripts send the same small command language:

    drop I-3        add sec-04 high The reminder is sent 24 h before the visit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, Field, ValidationError

from reqstudio.document_model import DocumentStructure
from reqstudio.failures import Failure, FailureCode, FailureError
from reqstudio.modes.review.convergence import generate_review_feedback
from reqstudio.modes.review.models import Improvement, IssueStatusEntry, Priority, ReviewRound
from reqstudio.modes.review.ranking import judge_rulings
from reqstudio.modes.review.tracking import ISSUE_PREFIX

USER_CATEGORY = "user"


class AddedFinding(BaseModel):
    agent_id: str = Field(min_length=1, description="the section, e.g. sec-03")
    priority: Priority = "high"
    issue: str = Field(min_length=1)
    expected: str = Field(default="", description="what to do; empty: the issue's text")


class ReviewDecision(BaseModel):
    """What the user decided at a pause: section edits, findings dropped (issue ids), findings
    added. All empty: the authors revise as the reviewers asked."""

    edits: dict[str, str] = Field(default_factory=dict)
    drop: list[str] = Field(default_factory=list)
    add: list[AddedFinding] = Field(default_factory=list)


class ReviewDecisionError(FailureError):
    """The decision names an issue or a section that does not exist (to drop, to add a finding
    to, or to edit): nothing of it was applied."""


_PRIORITIES = {"high": "high", "medium": "medium", "low": "low", "高": "high", "中": "medium"}
_PRIORITIES["低"] = "low"


def parse_review_commands(text: str) -> ReviewDecision:
    """`drop I-n` (several ids allowed) and `add SECTION PRIORITY text`, one a line."""
    decision = ReviewDecision()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.lower() in ("continue", "accept", "ok", "继续"):
            continue
        verb, _, rest = line.partition(" ")
        verb = verb.lower()
        try:
            if verb in ("drop", "删除") and rest.strip():
                decision.drop += [i.upper() for i in re.split(r"[\s,，]+", rest.strip()) if i]
                continue
            parts = rest.split(None, 2)
            if verb in ("add", "添加") and len(parts) == 3 and parts[1].lower() in _PRIORITIES:
                decision.add.append(
                    AddedFinding(
                        agent_id=parts[0], priority=_PRIORITIES[parts[1].lower()], issue=parts[2]
                    )
                )
                continue
        except ValidationError:
            pass
        raise ReviewDecisionError(
            Failure(FailureCode.REVIEW_DECISION_NOT_A_COMMAND, {"number": number, "line": line})
        )
    return decision


def _issue_numbers(rounds: Sequence[ReviewRound]) -> list[int]:
    ids = [e.issue_id for r in rounds for e in r.issue_statuses]
    ids += [i.issue_id for r in rounds for i in r.all_improvements if i.issue_id]
    return [int(m.group(1)) for i in ids if (m := re.fullmatch(r"I-(\d+)", i))]


def check_decision(
    decision: ReviewDecision, record: ReviewRound, document: DocumentStructure
) -> None:
    """Raise `ReviewDecisionError` if the decision names an unknown issue, adds a finding to an
    unknown section or edits a section that does not exist: a decision is applied whole or not
    at all, so one unknown name refuses all of it."""
    findings = {i.issue_id for i in record.improvements if i.issue_id}
    sections = set(document.section_ids)
    unknown = [i for i in decision.drop if i not in findings]
    unknown += [a.agent_id for a in decision.add if a.agent_id not in sections]
    edited = [agent_id for agent_id in decision.edits if agent_id not in sections]
    unknown_names = ", ".join(dict.fromkeys(unknown))
    edited_names = ", ".join(dict.fromkeys(edited))
    if unknown and edited:
        failure = Failure(
            FailureCode.REVIEW_DECISION_UNKNOWN_BOTH,
            {"unknown": unknown_names, "edited": edited_names},
        )
    elif unknown:
        failure = Failure(FailureCode.REVIEW_DECISION_UNKNOWN, {"names": unknown_names})
    elif edited:
        failure = Failure(FailureCode.REVIEW_DECISION_UNKNOWN_EDIT, {"names": edited_names})
    else:
        return
    raise ReviewDecisionError(failure)


def apply_findings_decision(
    decision: ReviewDecision,
    record: ReviewRound,
    earlier: Sequence[ReviewRound],
    document: DocumentStructure,
    language: str,
) -> ReviewRound:
    """The round's record with the user's drops and additions: new feedback for the authors
    and the sections in focus (those with a high-priority finding left, and those the user
    added a finding to)."""
    check_decision(decision, record, document)
    if not decision.drop and not decision.add:
        return record
    record = record.model_copy(deep=True)
    assert record.decision is not None
    number = max(_issue_numbers([*earlier, record]), default=0)
    added: list[Improvement] = []
    for finding in decision.add:
        number += 1
        issue_id = f"{ISSUE_PREFIX}{number}"
        added.append(
            Improvement(
                agent_id=finding.agent_id,
                category=USER_CATEGORY,
                issue=finding.issue,
                expected=finding.expected or finding.issue,
                priority=finding.priority,
                issue_id=issue_id,
            )
        )
        record.issue_statuses.append(
            IssueStatusEntry(issue_id=issue_id, status="new", basis="user")
        )
    record.improvements = [*record.improvements, *added]
    record.decision.improvements = [*record.decision.improvements, *added]
    dropped = set(decision.drop)
    kept = [i for i in record.improvements if i.issue_id not in dropped]
    # Ruled over every finding, so a judge task naming only a dropped finding stays its own.
    rulings = judge_rulings(record.improvements, record.judge)
    record.feedback = generate_review_feedback(
        document, record.round, kept, record.blue_team, record.judge, language, rulings
    )
    overruled = set(rulings.overruled_ids)
    focus = [
        i.agent_id
        for i in kept
        if (i.priority == "high" and i.issue_id not in overruled) or i in added
    ]
    record.decision.focus_on = [s for s in dict.fromkeys(focus) if s in record.feedback]
    record.dropped_by_user = list(dict.fromkeys(decision.drop))
    record.added_by_user = [i.issue_id for i in added if i.issue_id]
    return record
