"""The experiment's summary per ablation: mean ± standard deviation of the scores over the runs
that finished, and the paired difference against the no-clarify baseline (same cases, both
runs finished) with a percentile bootstrap 95 % interval over the cases.

Pure functions over the CSV's rows (no model, no engine): `summarize(read_rows(path), ...)`
gives the same numbers for a CSV written yesterday as for the rows of a run just finished."""

from __future__ import annotations

import csv
import random
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from reqstudio.modes.srs.metrics import METRICS

BASELINE = "no-clarify"
# the table on stdout and in `<csv stem>_summary.md`: the composites, the checker, time, tokens
SUMMARY_METRICS = (
    "Comprehensive_Score_Simple",
    "Comprehensive_Score_Weighted",
    "check_score",
    "seconds",
    "tokens",
)
# `<csv stem>_summary.json` has every score: the seven metrics as well, and the judge's tokens
JUDGE_METRICS = METRICS
ALL_METRICS = (*JUDGE_METRICS, *SUMMARY_METRICS, "judge_tokens", "cost")


@dataclass(frozen=True)
class MetricSummary:
    n: int
    mean: float | None
    sd: float | None  # sample standard deviation (n - 1); None below two runs
    pairs: int = 0  # cases where this ablation and the baseline both finished
    difference: float | None = None  # mean of (this - baseline) over those cases
    low: float | None = None  # bootstrap 95 % interval of that mean
    high: float | None = None


@dataclass(frozen=True)
class AblationSummary:
    ablation: str
    runs: int
    ok: int
    failed: int
    metrics: dict[str, MetricSummary]


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _number(value: Any) -> float | None:
    if value in ("", None):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def bootstrap_interval(
    differences: Sequence[float], *, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap 95 % interval of the mean of `differences` (cases resampled with
    replacement `resamples` times; a fixed `seed`, so the same data give the same interval)."""
    if not differences:
        raise ValueError("no differences to resample")
    generator = random.Random(seed)
    n = len(differences)
    means = sorted(
        sum(generator.choice(differences) for _ in range(n)) / n for _ in range(resamples)
    )
    low = means[int(0.025 * (resamples - 1))]
    high = means[round(0.975 * (resamples - 1))]
    return low, high


def _scores(rows: Sequence[dict[str, Any]], ablation: str, metric: str) -> dict[str, float]:
    """case -> score of the finished runs of `ablation`."""
    found = {}
    for row in rows:
        if row.get("ablation") == ablation and row.get("status") == "ok":
            value = _number(row.get(metric))
            if value is not None:
                found[str(row.get("case"))] = value
    return found


def summarize(
    rows: Sequence[dict[str, Any]],
    ablations: Sequence[str] | None = None,
    *,
    baseline: str = BASELINE,
    metrics: Sequence[str] = SUMMARY_METRICS,
    resamples: int = 2000,
    seed: int = 0,
) -> list[AblationSummary]:
    if ablations is None:
        ablations = list(dict.fromkeys(str(r.get("ablation")) for r in rows))
    summaries = []
    for ablation in ablations:
        mine = [r for r in rows if r.get("ablation") == ablation]
        ok = [r for r in mine if r.get("status") == "ok"]
        by_metric = {}
        for metric in metrics:
            scores = _scores(rows, ablation, metric)
            values = list(scores.values())
            mean = statistics.fmean(values) if values else None
            sd = statistics.stdev(values) if len(values) > 1 else None
            summary = MetricSummary(len(values), mean, sd)
            if ablation != baseline:
                base = _scores(rows, baseline, metric)
                cases = sorted(set(scores) & set(base))
                differences = [scores[c] - base[c] for c in cases]
                if differences:
                    low, high = bootstrap_interval(differences, resamples=resamples, seed=seed)
                    summary = MetricSummary(
                        len(values),
                        mean,
                        sd,
                        len(cases),
                        statistics.fmean(differences),
                        low,
                        high,
                    )
            by_metric[metric] = summary
        summaries.append(
            AblationSummary(ablation, len(mine), len(ok), len(mine) - len(ok), by_metric)
        )
    return summaries


def _format(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3f}"


def _signed(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:+.0f}" if abs(value) >= 100 else f"{value:+.3f}"


def summary_json(
    summaries: Sequence[AblationSummary], baseline: str = BASELINE, **about: Any
) -> dict[str, Any]:
    """The summary as data: `about` (model, date, command...), the baseline, and per ablation
    its counts and, per score, n, mean, sd and the paired difference with its interval."""
    return {
        **about,
        "baseline": baseline,
        "ablations": [
            {
                "ablation": s.ablation,
                "runs": s.runs,
                "ok": s.ok,
                "failed": s.failed,
                "metrics": {name: asdict(m) for name, m in s.metrics.items()},
            }
            for s in summaries
        ],
    }


def summary_table(
    summaries: Sequence[AblationSummary],
    baseline: str = BASELINE,
    *,
    metrics: Sequence[str] | None = None,
) -> str:
    """A Markdown table: per ablation and score (those of `metrics`, default all summarized),
    mean ± sd and the paired difference against the baseline with its bootstrap 95 %
    interval."""
    lines = [
        f"| ablation | runs | ok | failed (left out) | score | mean ± sd | Δ vs {baseline} "
        "[95% bootstrap CI] | pairs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for summary in summaries:
        for metric, m in summary.metrics.items():
            if metrics is not None and metric not in metrics:
                continue
            spread = f"{_format(m.mean)} ± {_format(m.sd)}" if m.mean is not None else "-"
            if summary.ablation == baseline:
                delta = "(baseline)"
            elif m.difference is None:
                delta = "-"
            else:
                delta = f"{_signed(m.difference)} [{_signed(m.low)}, {_signed(m.high)}]"
            lines.append(
                f"| {summary.ablation} | {summary.runs} | {summary.ok} | {summary.failed} "
                f"| {metric} | {spread} | {delta} | {m.pairs or '-'} |"
            )
    return "\n".join(lines)
