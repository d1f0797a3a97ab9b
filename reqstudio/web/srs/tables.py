"""What SRS mode shows as markdown: the requirements and scores of a step, a step's counts,
and the evaluation's metrics."""

from __future__ import annotations

from typing import Any

from reqstudio.modes.srs.evaluation import METRICS, NOT_JSON_ERROR, OUT_OF_RANGE_ERROR
from reqstudio.modes.srs.events import NodeFinished
from reqstudio.web.texts import Catalog, counted, token_figure

tr = Catalog("srs")


def requirement_table(requirements) -> str:
    rows = [tr("requirement_header"), "|---|---|---|"]
    for item in requirements:
        kind = tr.get("kind." + item.id.split("-")[0], "")
        rows.append(f"| {item.id} | {kind} | {item.content.replace('|', '/')} |")
    return "\n".join(rows)


def score_table(scores) -> str:
    rows = [tr("score_header"), "|---|---|---|"]
    rows += [f"| {s.id} | {s.score:+d} | {s.reason.replace('|', '/')} |" for s in scores]
    return "\n".join(rows)


def node_output(event: NodeFinished) -> str:
    parts = []
    if event.skipped:
        parts.append(tr("skipped"))
    if event.scores:
        parts.append(score_table(event.scores))
    if event.frozen_now:
        parts.append(tr("frozen_now", ids=", ".join(event.frozen_now)))
    if event.removed_now:
        parts.append(tr("removed_now", ids=", ".join(event.removed_now)))
    if event.agent != "DocGenerate" and event.requirements:
        parts.append(requirement_table(event.requirements))
    tokens = event.input_tokens + event.output_tokens
    parts.append(
        tr(
            "counts",
            seconds=event.seconds,
            # no call of the step reported any: a server that sends no usage
            tokens=token_figure(tokens, known=bool(tokens or not event.llm_calls)),
            total=counted(event.counts.get("total", 0), "requirement"),
            **{k: event.counts.get(k, 0) for k in ("frozen", "removed", "unfrozen")},
        )
    )
    return "\n\n".join(parts)


def metric_label(key: str) -> str:
    """A readable name in the user's language (the seed's key is in evaluation.json)."""
    return tr.get("metric." + key, key)


EVALUATION_ERRORS = {NOT_JSON_ERROR: "not_json", OUT_OF_RANGE_ERROR: "out_of_range"}


def evaluation_table(result: dict[str, Any]) -> str:
    if "error" in result:
        error = str(result["error"])
        reason = tr.get(f"evaluation_error.{EVALUATION_ERRORS.get(error)}", error)
        return tr("evaluation_failed", reason=reason)
    metrics = result.get("metrics", {})
    rows = [tr("evaluation_title", model=result.get("model", "")), "", tr("metric_header")]
    rows.append("|---|---|")
    for name in METRICS:
        if name in metrics:
            rows.append(f"| {metric_label(name)} | {float(metrics[name]):.2f} |")
    for name, value in (metrics.get("by_category") or {}).items():
        rows.append(f"| {metric_label('by_category.' + name)} | {float(value):.2f} |")
    for name in ("Comprehensive_Score_Simple", "Comprehensive_Score_Weighted"):
        if name in result:
            rows.append(f"| **{metric_label(name)}** | **{float(result[name]):.2f}** |")
    return "\n".join(rows)
