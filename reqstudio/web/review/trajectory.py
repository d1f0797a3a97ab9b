"""The improvement trajectory as people read it: one row per round with what it found, how
its issues stood, what the authors did and how the run ended. The seed's JSON of it
(`improvement_trajectory`) is in the reviews.json download, not on screen."""

from __future__ import annotations

from reqstudio.modes.review import ReviewResult
from reqstudio.modes.review.models import PRIORITIES, ReviewRound
from reqstudio.web.rendering import markdown_table
from reqstudio.web.review.tables import priority_name, section_label, status_name
from reqstudio.web.texts import Catalog, counted

tr = Catalog("review")

STATUSES = ("new", "persisting", "regressed", "resolved")
OUTCOMES = ("changed", "unchanged", "failed", "rejected")


def counts_text(counts: dict[str, int], name) -> str:
    """`high 1 · low 2`: the non-zero counts, each under its name in the user's language."""
    shown = [f"{name(key)} {number}" for key, number in counts.items() if number]
    return " · ".join(shown) or "—"


def round_row(record: ReviewRound, ending: str, titles: dict[str, str]) -> list[str]:
    by_priority = record.count_by_priority()
    statuses = [entry.status for entry in record.issue_statuses]
    focus = record.decision.focus_on if record.decision else []
    outcomes = record.outcomes()
    return [
        tr("step_round", round=record.round),
        counted(record.total_improvements, "issue"),
        counts_text({p: by_priority[p] for p in PRIORITIES}, priority_name),
        counts_text({s: statuses.count(s) for s in STATUSES}, status_name),
        ", ".join(section_label(agent_id, titles) for agent_id in focus) or "—",
        counts_text({o: outcomes[o] for o in OUTCOMES}, lambda o: tr("outcome_" + o)),
        "" if record.score is None else str(record.score),
        ending,
    ]


def trajectory_table(result: ReviewResult) -> str:
    """The trajectory, a row per round; the last round's row says why the run stopped."""
    titles = {s.id: s.title for s in result.document.sections}
    rows = []
    for index, record in enumerate(result.rounds):
        last = index == len(result.rounds) - 1
        ending = tr(result.stop_reason) if last and result.stop_reason else ""
        rows.append(round_row(record, ending, titles))
    columns = [
        "round_name",
        "found",
        "by_priority",
        "statuses",
        "focus",
        "revisions",
        "score",
        "ending",
    ]
    head = [tr(f"trajectory.{c}") for c in columns]
    return f"**{tr('field.improvement_trajectory')}**\n\n" + markdown_table(head, rows)
