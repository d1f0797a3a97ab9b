"""The judge's word, used.

- `prioritized_improvements` decide the order in which the authors fix the findings: a finding
  takes the rank of the judge's task that names its id (`issue_ids`), else of the judge's task
  for its section that names no id; unranked findings come after the ranked ones, in the red
  team's order. The focus (which sections are revised) follows the same order.
- `conflicting_views` decide red/blue conflicts on a section: `upheld: blue_team` keeps the
  aspect (it becomes an `avoid_changes_to`) and, when the conflict names the finding by its id
  (`issue_id`), overrules that finding (no task for the authors; recorded as overruled). A
  conflict that names no id, or an id that is no finding of the round, overrules nothing: the
  finding is still fixed. `upheld: red_team` takes the aspect off the section's
  `avoid_changes_to`; `both` or no `upheld`: both stand, and the ruling goes to the author.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from reqstudio.modes.review.models import Improvement, JudgeReview, Overruling

UNRANKED = 10**6


@dataclass
class JudgeRulings:
    ranks: dict[str, int] = field(default_factory=dict)  # issue id -> the judge's rank
    explicit: set[int] = field(default_factory=set)  # judge tasks that named their findings
    overruled: list[Overruling] = field(default_factory=list)
    keep: dict[str, list[str]] = field(default_factory=dict)  # section -> aspects upheld
    release: dict[str, set[str]] = field(default_factory=dict)  # section -> aspects to change
    rulings: dict[str, list[str]] = field(default_factory=dict)  # section -> rulings to follow

    @property
    def overruled_ids(self) -> set[str]:
        return {o.issue_id for o in self.overruled}


def _finding_for_conflict(view, findings: Sequence[Improvement]) -> Improvement | None:
    """The finding a conflict names by its id (`issue_id`), or None. Never guessed from the
    conflict's aspect or wording: a finding the judge did not name is not overruled."""
    if not view.issue_id:
        return None
    return next((f for f in findings if f.issue_id == view.issue_id), None)


def judge_rulings(findings: Sequence[Improvement], judge: JudgeReview | None) -> JudgeRulings:
    rulings = JudgeRulings()
    if judge is None:
        return rulings
    known = {f.issue_id for f in findings if f.issue_id}
    ordered = sorted(enumerate(judge.prioritized_improvements), key=lambda p: p[1].priority)
    for index, item in ordered:
        named = [i for i in item.issue_ids if i in known]
        if named:
            rulings.explicit.add(index)
            for issue_id in named:
                rulings.ranks.setdefault(issue_id, item.priority)
    for _index, item in ordered:
        if item.issue_ids:
            continue
        for finding in findings:
            if finding.agent_id == item.agent_id and finding.issue_id:
                rulings.ranks.setdefault(finding.issue_id, item.priority)
    for view in judge.conflicting_views:
        finding = _finding_for_conflict(view, findings)
        agent_id = view.agent_id or (finding.agent_id if finding else "")
        if not agent_id:
            continue
        if view.upheld == "blue_team":
            rulings.keep.setdefault(agent_id, []).append(view.aspect)
            if finding is not None and finding.issue_id:
                rulings.overruled.append(
                    Overruling(
                        issue_id=finding.issue_id,
                        agent_id=agent_id,
                        aspect=view.aspect,
                        ruling=view.ruling,
                    )
                )
        elif view.upheld == "red_team":
            rulings.release.setdefault(agent_id, set()).add(view.aspect)
        if view.ruling:
            rulings.rulings.setdefault(agent_id, []).append(f"{view.aspect}: {view.ruling}")
    return rulings


def in_fix_order(findings: Sequence[Improvement], ranks: dict[str, int]) -> list[Improvement]:
    """The findings in the judge's order (stable: unranked keep the red team's order)."""
    return sorted(findings, key=lambda f: ranks.get(f.issue_id or "", UNRANKED))
