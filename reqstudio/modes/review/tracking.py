"""Issues that keep their identity from round to round.

Every red team finding gets a stable id (`I-1`, `I-2`, ...). From round 2 on the red team sees
the earlier issues with their ids and statuses, and the promises of the last revision (each
task's `validation`, each `avoid_changes_to` of a revised section); it says which earlier
issues a finding repeats (`issue_id`), which are resolved (`resolved_issues`) and whether each
promise holds (`checks`). All three answers are optional: what the red team leaves out is
decided by the rules of the issue, and each status records what it rests on (its `basis`):

- a finding naming an earlier id, or with the same section and substance, is that issue again:
  `persisting`, or `regressed` when it had been `resolved`;
- a `validation` the red team says does not hold keeps its issue open (`persisting`);
- a broken `avoid_changes_to` is a new issue with status `regressed` (high priority);
- an earlier open issue neither raised again nor marked is `resolved`;
- everything else is `new`.

A reviewer naming an id that does not exist, or one id twice, is not trusted: the finding is
placed as if it named none, and a note says so. Pure functions of the earlier rounds and this
round's answer: the judge and the decision compute the same ids.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from pydantic import BaseModel, Field

from reqstudio.modes.review.models import (
    Improvement,
    IssueStatus,
    IssueStatusEntry,
    Priority,
    RedTeamReview,
    ReviewRound,
    RevisionCheck,
)

ISSUE_PREFIX = "I-"
CHECK_PREFIX = "C-"
# Same section and this similar (0-1, character based, works for Chinese too) = same issue.
SAME_ISSUE = 0.6
SAME_ISSUE_SAME_CATEGORY = 0.4
OPEN: tuple[IssueStatus, ...] = ("new", "persisting", "regressed")


class TrackedIssue(BaseModel):
    """One issue over the whole run (the JSON's `issues`)."""

    id: str
    agent_id: str
    category: str
    issue: str
    expected: str = ""
    priority: Priority = "medium"
    first_seen: int
    status: IssueStatus
    status_by_round: dict[str, IssueStatus] = Field(default_factory=dict)
    basis_by_round: dict[str, str] = Field(default_factory=dict)

    @property
    def open(self) -> bool:
        return self.status in OPEN


def issue_ledger(rounds: Sequence[ReviewRound]) -> dict[str, TrackedIssue]:
    """Every issue seen in `rounds`, by id, with its latest wording and status per round."""
    ledger: dict[str, TrackedIssue] = {}
    for record in rounds:
        wording = {i.issue_id: i for i in record.all_improvements if i.issue_id}
        for entry in record.issue_statuses:
            found = wording.get(entry.issue_id)
            tracked = ledger.get(entry.issue_id)
            if tracked is None:
                if found is None:
                    continue  # a status for an issue never described: nothing to show
                tracked = ledger[entry.issue_id] = TrackedIssue(
                    id=entry.issue_id,
                    agent_id=found.agent_id,
                    category=found.category,
                    issue=found.issue,
                    expected=found.expected,
                    priority=found.priority,
                    first_seen=record.round,
                    status=entry.status,
                )
            elif found is not None:
                tracked.issue, tracked.expected = found.issue, found.expected
                tracked.priority, tracked.agent_id = found.priority, found.agent_id
            tracked.status = entry.status
            tracked.status_by_round[str(record.round)] = entry.status
            tracked.basis_by_round[str(record.round)] = entry.basis
    return ledger


def _number(identifier: str, prefix: str) -> int:
    match = re.fullmatch(re.escape(prefix) + r"(\d+)", identifier.strip())
    return int(match.group(1)) if match else 0


def _words(text: str) -> str:
    return " ".join(text.lower().split())


def similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, _words(a), _words(b)).ratio()


def same_substance(finding: Improvement, earlier: TrackedIssue) -> float:
    """How surely `finding` is `earlier` said again (0: not at all): same section required."""
    if finding.agent_id != earlier.agent_id:
        return 0.0
    ratio = similarity(finding.issue, earlier.issue)
    if ratio >= SAME_ISSUE:
        return ratio
    if finding.category == earlier.category and ratio >= SAME_ISSUE_SAME_CATEGORY:
        return ratio
    return 0.0


# --- what the next red team is shown --------------------------------------------------------


def revision_checks(record: ReviewRound) -> list[RevisionCheck]:
    """The promises of `record`'s revisions, for the next round's red team: each task's
    `validation` and each `avoid_changes_to` of every section whose text changed."""
    checks: list[RevisionCheck] = []
    changed = [r.agent_id for r in record.revisions if r.changed]
    for agent_id in changed:
        feedback = record.feedback.get(agent_id)
        if feedback is None:
            continue
        for task in feedback.specific_tasks:
            if task.validation and task.issue_id:
                checks.append(
                    RevisionCheck(
                        check_id=f"{CHECK_PREFIX}{len(checks) + 1}",
                        kind="validation",
                        agent_id=agent_id,
                        text=task.validation,
                        issue_id=task.issue_id,
                    )
                )
        for aspect in feedback.avoid_changes_to:
            checks.append(
                RevisionCheck(
                    check_id=f"{CHECK_PREFIX}{len(checks) + 1}",
                    kind="avoid_changes_to",
                    agent_id=agent_id,
                    text=aspect,
                )
            )
    return checks


def earlier_issues_text(rounds: Sequence[ReviewRound]) -> str:
    """The earlier issues as the red team reads them ("" in round 1)."""
    ledger = issue_ledger(rounds)
    rows = [
        {
            "issue_id": t.id,
            "agent_id": t.agent_id,
            "priority": t.priority,
            "status": t.status,
            "issue": t.issue,
        }
        for t in ledger.values()
    ]
    return json.dumps(rows, ensure_ascii=False, indent=1) if rows else ""


def checks_text(rounds: Sequence[ReviewRound]) -> str:
    checks = revision_checks(rounds[-1]) if rounds else []
    rows = [
        {"check_id": c.check_id, "kind": c.kind, "agent_id": c.agent_id, "text": c.text}
        for c in checks
    ]
    return json.dumps(rows, ensure_ascii=False, indent=1) if rows else ""


# --- this round's statuses --------------------------------------------------------------------


@dataclass
class RoundTracking:
    """This round's findings with their ids (the red team's, then earlier issues kept open by a
    failed validation, then broken avoid_changes_to), every tracked issue's status, the checks
    with the red team's verdicts, and notes on what the red team said that could not be used."""

    improvements: list[Improvement] = field(default_factory=list)
    statuses: list[IssueStatusEntry] = field(default_factory=list)
    checks: list[RevisionCheck] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def status_map(self) -> dict[str, IssueStatus]:
        return {e.issue_id: e.status for e in self.statuses}


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def track_round(
    red: RedTeamReview, earlier_rounds: Sequence[ReviewRound], round_number: int
) -> RoundTracking:
    """Ids and statuses for this round's red team answer (see the module's docstring)."""
    ledger = issue_ledger(earlier_rounds)
    checks = revision_checks(earlier_rounds[-1]) if earlier_rounds else []
    result = RoundTracking()
    numbers = [_number(i, ISSUE_PREFIX) for i in ledger]
    next_number = max(numbers, default=0) + 1

    def new_id() -> str:
        nonlocal next_number
        identifier = f"{ISSUE_PREFIX}{next_number}"
        next_number += 1
        return identifier

    findings = list(red.improvements)
    ids: list[str | None] = [None] * len(findings)
    basis: dict[str, str] = {}
    claimed: set[str] = set()
    # 1. The ids the red team gave.
    for index, finding in enumerate(findings):
        if finding.issue_id is None:
            continue
        label = f"[{finding.agent_id}] {_short(finding.issue)}"
        if finding.issue_id not in ledger:
            result.notes.append(
                f"the red team's finding {label} names earlier issue {finding.issue_id}, which "
                "does not exist; it is placed as if it named none"
            )
        elif finding.issue_id in claimed:
            result.notes.append(
                f"the red team's finding {label} names {finding.issue_id}, which another finding "
                "of this round already names; it is placed as if it named none"
            )
        else:
            ids[index] = finding.issue_id
            claimed.add(finding.issue_id)
            basis[finding.issue_id] = "reviewer"
    # 2. The same section and substance as an earlier issue.
    for index, finding in enumerate(findings):
        if ids[index] is not None:
            continue
        scored = [
            (same_substance(finding, t), t.id) for t in ledger.values() if t.id not in claimed
        ]
        score, best = max(scored, default=(0.0, ""))
        if score > 0:
            ids[index] = best
            claimed.add(best)
            basis[best] = "matched"
    # 3. The checks: the red team's verdicts.
    verdicts = {v.check_id: v for v in red.checks}
    known_checks = {c.check_id for c in checks}
    for unknown in sorted(set(verdicts) - known_checks):
        result.notes.append(f"the red team answered check {unknown}, which was never asked")
    for check in checks:
        verdict = verdicts.get(check.check_id)
        result.checks.append(
            check.model_copy(
                update={"holds": verdict.holds, "note": verdict.note} if verdict else {}
            )
        )
    failed_validation = {
        c.issue_id: c for c in result.checks if c.kind == "validation" and c.holds is False
    }
    held_validation = {
        c.issue_id: c for c in result.checks if c.kind == "validation" and c.holds is True
    }
    # The findings of this round, with their ids and statuses.
    for index, finding in enumerate(findings):
        identifier = ids[index] or new_id()
        result.improvements.append(finding.model_copy(update={"issue_id": identifier}))
        earlier = ledger.get(identifier)
        if earlier is None:
            result.statuses.append(
                IssueStatusEntry(issue_id=identifier, status="new", basis="first_seen")
            )
        else:
            status: IssueStatus = "regressed" if earlier.status == "resolved" else "persisting"
            result.statuses.append(
                IssueStatusEntry(issue_id=identifier, status=status, basis=basis[identifier])
            )
            if identifier in held_validation:
                result.notes.append(
                    f"the red team says the validation of {identifier} holds, yet raises "
                    f"{identifier} again; it counts as {status}"
                )
    resolved_claims = set(red.resolved_issues)
    for unknown in sorted(resolved_claims - set(ledger)):
        result.notes.append(f"the red team lists {unknown} as resolved, which does not exist")
    for both in sorted(resolved_claims & set(failed_validation)):
        result.notes.append(
            f"the red team lists {both} as resolved, yet says its validation does not hold; "
            "it counts as persisting"
        )
    for twice in sorted(resolved_claims & claimed):
        result.notes.append(
            f"the red team lists {twice} as resolved and raises it again; it counts as raised"
        )
    # Earlier open issues this round did not raise.
    for tracked in ledger.values():
        if tracked.id in claimed or not tracked.open:
            continue
        if tracked.id in failed_validation:
            check = failed_validation[tracked.id]
            result.improvements.append(
                Improvement(
                    agent_id=tracked.agent_id,
                    category=tracked.category,
                    issue=tracked.issue,
                    expected=tracked.expected or tracked.issue,
                    priority=tracked.priority,
                    issue_id=tracked.id,
                )
            )
            result.statuses.append(
                IssueStatusEntry(
                    issue_id=tracked.id,
                    status="persisting",
                    basis="validation",
                    note=f"{check.check_id} does not hold: {check.note}".rstrip(": "),
                )
            )
        elif tracked.id in resolved_claims:
            result.statuses.append(
                IssueStatusEntry(issue_id=tracked.id, status="resolved", basis="reviewer")
            )
        elif tracked.id in held_validation:
            result.statuses.append(
                IssueStatusEntry(issue_id=tracked.id, status="resolved", basis="validation")
            )
        else:
            result.statuses.append(
                IssueStatusEntry(issue_id=tracked.id, status="resolved", basis="not_raised")
            )
    # A kept aspect the revision broke: a regression, to be put back.
    for check in result.checks:
        if check.kind != "avoid_changes_to" or check.holds is not False:
            continue
        identifier = new_id()
        detail = f": {check.note}" if check.note else ""
        result.improvements.append(
            Improvement(
                agent_id=check.agent_id,
                category="avoid_changes_to",
                issue=f"the revision changed '{check.text}', which was to be kept{detail}",
                expected=f"restore '{check.text}' as it was before round {round_number - 1}'s "
                "revision",
                priority="high",
                issue_id=identifier,
            )
        )
        result.statuses.append(
            IssueStatusEntry(
                issue_id=identifier,
                status="regressed",
                basis="avoid_changes_to",
                note=f"{check.check_id} does not hold",
            )
        )
    return result
