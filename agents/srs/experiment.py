"""Ablation experiments: every case under every ablation, each generated SRS evaluated against
the case's reference, one CSV row per run and the means per ablation."""

from __future__ import annotations

import asyncio
import csv
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.srs.documents import ReferenceDocumentError, load_reference
from agents.srs.engine import SrsRequest, run_srs
from agents.srs.evaluation import CATEGORIES, METRICS, evaluate_srs
from agents.srs.events import RunFailed, RunFinished
from agents.srs.state import Ablation
from reqstudio.errors import describe_failure
from reqstudio.llm import ModelFactory
from reqstudio.usage import UsageTracker

COMPOSITES = ("Comprehensive_Score_Simple", "Comprehensive_Score_Weighted")
CSV_COLUMNS = (
    "case",
    "ablation",
    "status",
    "seconds",
    "llm_calls",
    "tokens",
    *METRICS,
    *CATEGORIES,
    *COMPOSITES,
    "error",
    # the deterministic checker (`reqstudio check`) on the generated SRS, beside the judge
    "check_score",
    "check_findings",
    "check_ears_share",
)
MEAN_COLUMNS = ("seconds", "llm_calls", "tokens", *METRICS, *COMPOSITES)


@dataclass(frozen=True)
class ExperimentCase:
    name: str
    input_path: Path
    reference_path: Path


def find_cases(cases_dir: Path) -> list[ExperimentCase]:
    """Folders holding input.md and reference.md (the folder itself, or its subfolders)."""
    folders = [cases_dir, *sorted(p for p in cases_dir.iterdir() if p.is_dir())]
    return [
        ExperimentCase(folder.name, folder / "input.md", folder / "reference.md")
        for folder in folders
        if (folder / "input.md").is_file() and (folder / "reference.md").is_file()
    ]


def _empty_row(case: ExperimentCase, ablation: Ablation) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(CSV_COLUMNS, "")
    row.update(case=case.name, ablation=ablation, status="failed")
    return row


async def run_case(
    case: ExperimentCase,
    ablation: Ablation,
    factory: ModelFactory,
    *,
    max_iterations: int = 5,
    max_mb: float = 10,
    srs_dir: Path | None = None,
) -> dict[str, Any]:
    """Generate and evaluate one case under one ablation; failures become a row, not a raise."""
    row = _empty_row(case, ablation)
    tracker = UsageTracker()
    try:
        # pypdf / python-docx / charset detection are CPU-bound: off the event loop, where
        # the other runs of the experiment are streaming
        user_input = (await asyncio.to_thread(load_reference, case.input_path, max_mb=max_mb)).text
        reference = (
            await asyncio.to_thread(load_reference, case.reference_path, max_mb=max_mb)
        ).text
        request = SrsRequest(
            user_input=user_input,
            reference_srs=reference,
            ablation=ablation,
            max_iterations=max_iterations,
        )
        result = None
        async for event in run_srs(request, factory, tracker=tracker):
            if isinstance(event, RunFailed):
                where = f"{event.agent}: " if event.agent else ""
                row["error"] = where + event.message
            elif isinstance(event, RunFinished):
                result = event.result
        row.update(
            seconds=round(result.seconds if result else 0.0, 3),
            llm_calls=tracker.calls,
            tokens=tracker.total_tokens,
        )
        if result is None:
            return row
        if srs_dir is not None:
            srs_dir.mkdir(parents=True, exist_ok=True)
            (srs_dir / f"{case.name}__{ablation}.md").write_text(
                result.srs_markdown, encoding="utf-8"
            )
        row.update(_check_columns(result.srs_markdown))
        evaluation = await evaluate_srs(reference, result.srs_markdown, factory)
    except ReferenceDocumentError as exc:
        row["error"] = exc.message_en
        return row
    except Exception as exc:
        row["error"] = describe_failure(exc, "en")
        return row
    if "error" in evaluation or "metrics" not in evaluation:
        row.update(
            status="eval_failed", error=f"evaluation: {evaluation.get('error', 'no metrics')}"
        )
        return row
    metrics = evaluation["metrics"]
    by_category = metrics.get("by_category") or {}
    row.update({name: metrics.get(name, "") for name in METRICS})
    row.update({name: by_category.get(name, "") for name in CATEGORIES})
    row.update({name: evaluation.get(name, "") for name in COMPOSITES})
    row["status"] = "ok"
    return row


def _check_columns(markdown: str) -> dict[str, Any]:
    from agents.check.engine import check_document

    summary = check_document(markdown).summary()
    return {
        "check_score": "" if summary["score"] is None else summary["score"],
        "check_findings": summary["findings"],
        "check_ears_share": "" if summary["ears"]["share"] is None else summary["ears"]["share"],
    }


async def run_experiment(
    cases: Sequence[ExperimentCase],
    ablations: Sequence[Ablation],
    factory: ModelFactory,
    *,
    concurrency: int = 2,
    max_iterations: int = 5,
    max_mb: float = 10,
    srs_dir: Path | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Every case under every ablation, at most `concurrency` runs at a time."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(case: ExperimentCase, ablation: Ablation) -> dict[str, Any]:
        async with gate:
            row = await run_case(
                case,
                ablation,
                factory,
                max_iterations=max_iterations,
                max_mb=max_mb,
                srs_dir=srs_dir,
            )
        if on_row is not None:
            on_row(row)
        return row

    jobs = [one(case, ablation) for case in cases for ablation in ablations]
    return list(await asyncio.gather(*jobs))


def write_csv(rows: Iterable[dict[str, Any]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({name: row.get(name, "") for name in CSV_COLUMNS})


def _mean(values: list[Any]) -> str:
    """A plain number: token counts whole (never `3.591e+04`), scores and seconds to 4 digits."""
    numbers = [float(v) for v in values if v not in ("", None)]
    if not numbers:
        return "-"
    mean = sum(numbers) / len(numbers)
    return f"{mean:.0f}" if abs(mean) >= 100 else f"{mean:.4g}"


def means_table(rows: Sequence[dict[str, Any]], ablations: Sequence[Ablation]) -> str:
    """A Markdown table of the means per ablation, over the runs that finished ("ok")."""
    header = ["ablation", "runs", "ok", *MEAN_COLUMNS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for ablation in ablations:
        mine = [r for r in rows if r["ablation"] == ablation]
        ok = [r for r in mine if r["status"] == "ok"]
        cells = [ablation, str(len(mine)), str(len(ok))]
        cells += [_mean([r[name] for r in ok]) for name in MEAN_COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
