"""How a run went, for people: the seed's `improvement_trajectory`, the same in words
("第1轮发现5个问题 → 修正；…"), and the counts per round and priority that the chart plots."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.review.models import PRIORITIES, ReviewRound

STOP_WORDS = {
    "quality_sufficient": ("完成", "done"),
    "no_convergence": ("问题数量未减少，停止", "stopped: the number of issues did not fall"),
    "max_rounds": ("达到最大轮次，停止", "stopped: round limit reached"),
    "score_declined": ("评分下降，停止", "stopped: the reviewers' score fell"),
    "no_new_high_priority": (
        "无新的高优先级问题（遗留问题未能解决），停止",
        "stopped: no new high-priority issue (those left persist)",
    ),
    "reviewer_failed": (
        "红队审阅失败，停止（未通过审阅）",
        "stopped: the red team failed (not a pass)",
    ),
    "unplaced_issues": (
        "高优先级问题未指明章节，停止",
        "stopped: the high-priority issues name no section",
    ),
}
# How a round's revisions ended, in words: (zh, en singular, en plural).
OUTCOME_WORDS = {
    "unchanged": ("{n} 节未改变", "{n} unchanged"),
    "failed": ("{n} 节失败", "{n} failed"),
    "rejected": ("{n} 节被拒绝", "{n} rejected"),
}

# What a round found, in words: (zh, en); `{s}` is the English plural's "s".
FOUND_WORDS = {
    "none": ("第{round}轮无新问题", "round {round} found no new issues"),
    "some": ("第{round}轮发现{count}个问题", "round {round} found {count} issue{s}"),
    "no_high": ("（无高优先级）", " (none high-priority)"),
}


def found_words(record: ReviewRound, last: bool, zh: bool) -> str:
    """What the round found ("第1轮发现5个问题", "round 2 found 1 issue"); the last round says
    when none of what it found is high-priority."""
    count = record.total_improvements
    words = FOUND_WORDS["some" if count else "none"][0 if zh else 1]
    found = words.format(round=record.round, count=count, s="s" if count != 1 else "")
    if count and not record.count_by_priority()["high"] and last:
        found += FOUND_WORDS["no_high"][0 if zh else 1]
    return found


def revision_words(record: ReviewRound, zh: bool) -> str:
    """ "fixed" only when every revision changed its section; otherwise what really happened,
    from the revisions' outcomes ("fixed 1 of 2 sections (1 failed)", "not fixed (2
    unchanged)")."""
    counts = record.outcomes()
    total, changed = len(record.revisions), counts["changed"]
    if changed == total:
        return "修正" if zh else "fixed"
    rest = [
        OUTCOME_WORDS[o][0 if zh else 1].format(n=counts[o])
        for o in ("unchanged", "failed", "rejected")
        if counts[o]
    ]
    if zh:
        details = "、".join(rest)
        return f"修正 {changed}/{total} 节（{details}）" if changed else f"未修正（{details}）"
    details = ", ".join(rest)
    if changed:
        return f"fixed {changed} of {total} section{'s' if total != 1 else ''} ({details})"
    return f"not fixed ({details})"


def focus_titles(record: ReviewRound, titles: dict[str, str]) -> list[str]:
    focus = record.decision.focus_on if record.decision else []
    return [titles.get(agent_id, agent_id) for agent_id in focus]


def improvement_trajectory(
    rounds: Sequence[ReviewRound], stop_reason: str | None, titles: dict[str, str] | None = None
) -> dict[str, dict[str, Any]]:
    """The seed's shape: {"round_1": {"improvements_needed": 5, "focus": [...]}, ...,
    "round_3": {"improvements_needed": 0, "status": "converged"}}."""
    titles = titles or {}
    trajectory: dict[str, dict[str, Any]] = {}
    for index, record in enumerate(rounds):
        entry: dict[str, Any] = {
            "improvements_needed": record.total_improvements,
            "by_priority": record.count_by_priority(),
            "focus": focus_titles(record, titles),
        }
        if record.issue_statuses:
            statuses = [e.status for e in record.issue_statuses]
            entry["issue_statuses"] = {
                s: statuses.count(s) for s in ("new", "persisting", "regressed", "resolved")
            }
        if record.score is not None:
            entry["score"] = record.score
        if record.document_wide:
            entry["document_wide"] = len(record.document_wide)
        if record.revisions:
            entry["revisions"] = record.outcomes()
        if index == len(rounds) - 1 and stop_reason:
            entry["status"] = "converged" if stop_reason == "quality_sufficient" else stop_reason
        trajectory[f"round_{record.round}"] = entry
    return trajectory


def trajectory_text(rounds: Sequence[ReviewRound], stop_reason: str | None, language: str) -> str:
    zh = language == "zh"
    parts = []
    for index, record in enumerate(rounds):
        last = index == len(rounds) - 1
        found = found_words(record, last, zh)
        if last and stop_reason:
            outcome = STOP_WORDS[stop_reason][0 if zh else 1]
        elif record.revisions:
            outcome = revision_words(record, zh)
        else:
            outcome = "未完成" if zh else "unfinished"
        parts.append(f"{found} → {outcome}")
    text = ("；" if zh else "; ").join(parts)
    return text[:1].upper() + text[1:] if not zh else text


def counts_per_round(rounds: Sequence[ReviewRound]) -> dict[str, list[int]]:
    """{"round": [1, 2, 3], "high": [...], "medium": [...], "low": [...]} for the chart."""
    data: dict[str, list[int]] = {"round": [r.round for r in rounds]}
    for priority in PRIORITIES:
        data[priority] = [r.count_by_priority()[priority] for r in rounds]
    return data
