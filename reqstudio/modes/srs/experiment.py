"""Ablation experiments: every case under every ablation, each generated SRS evaluated against
the case's reference, one CSV row per run and the means per ablation."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import random
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reqstudio.errors import describe_failure
from reqstudio.llm import ModelFactory
from reqstudio.modes.srs.documents import ReferenceDocumentError, load_reference
from reqstudio.modes.srs.engine import SrsRequest, run_srs
from reqstudio.modes.srs.evaluation import evaluate_srs
from reqstudio.modes.srs.events import RunFailed, RunFinished
from reqstudio.modes.srs.metrics import CATEGORIES, METRICS
from reqstudio.modes.srs.state import Ablation
from reqstudio.usage import UsageTracker, estimate_cost

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
    # the judge's own tokens (`tokens` counts the generation only), the cost of both from
    # AGENT_PRICES (blank when a model used has no price), and the two models
    "judge_tokens",
    "cost",
    "model",
    "judge_model",
)
MEAN_COLUMNS = ("seconds", "llm_calls", "tokens", *METRICS, *COMPOSITES)
FINISHED = "ok"  # any other status ("failed", "eval_failed") is run again by --resume


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


SPLIT_FILE = "split.json"


class CaseSelectionError(ValueError):
    """A --split, --limit or --sample that cannot be applied; the message is one line."""


def read_split(cases_dir: Path) -> dict[str, list[str]]:
    """`split.json` of a case folder: {"dev": [names], "held-out": [names]}; {} without one."""
    path = cases_dir / SPLIT_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CaseSelectionError(f"{path}: not a readable JSON split ({exc})") from None
    splits = data.get("splits", data) if isinstance(data, dict) else None
    if not isinstance(splits, dict) or not all(
        isinstance(names, list) and all(isinstance(n, str) for n in names)
        for names in splits.values()
    ):
        raise CaseSelectionError(f'{path}: expected {{"splits": {{name: [case, ...]}}}}')
    return splits


def select_cases(
    cases: Sequence[ExperimentCase],
    *,
    split: str | None = None,
    splits: dict[str, list[str]] | None = None,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> list[ExperimentCase]:
    """The cases a run covers: those of `split` (if given), then the first `limit` by name, or
    `sample` of them drawn with `random.Random(seed)` (the same seed, the same cases)."""
    chosen = sorted(cases, key=lambda c: c.name)
    if split is not None:
        if not splits or split not in splits:
            known = ", ".join(sorted(splits or {})) or f"none: no {SPLIT_FILE}"
            raise CaseSelectionError(f"--split: no split {split!r} (known: {known})")
        names = set(splits[split])
        chosen = [c for c in chosen if c.name in names]
    if limit is not None:
        if limit < 1:
            raise CaseSelectionError(f"--limit must be at least 1, not {limit}")
        chosen = chosen[:limit]
    if sample is not None:
        if sample < 1:
            raise CaseSelectionError(f"--sample must be at least 1, not {sample}")
        if sample < len(chosen):
            picked = {c.name for c in random.Random(seed).sample(chosen, sample)}
            chosen = [c for c in chosen if c.name in picked]
    return chosen


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
    prices: dict[str, tuple[float, float]] | None = None,
) -> dict[str, Any]:
    """Generate and evaluate one case under one ablation; failures become a row, not a raise.
    `prices` (AGENT_PRICES, per 1k tokens) give the row's cost."""
    row = _empty_row(case, ablation)
    row.update(model=factory.model_name("ReqParse"), judge_model=factory.model_name("evaluation"))
    tracker = UsageTracker()
    judge = UsageTracker()
    try:
        return await _generate_and_evaluate(
            case, ablation, factory, row, tracker, judge, max_iterations, max_mb, srs_dir
        )
    finally:
        row["judge_tokens"] = judge.total_tokens if judge.tokens_known else ""
        cost = estimate_cost({**tracker.roles, **judge.roles}, prices or {})
        row["cost"] = "" if cost is None else cost


async def _generate_and_evaluate(
    case: ExperimentCase,
    ablation: Ablation,
    factory: ModelFactory,
    row: dict[str, Any],
    tracker: UsageTracker,
    judge: UsageTracker,
    max_iterations: int,
    max_mb: float,
    srs_dir: Path | None,
) -> dict[str, Any]:
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
            # blank, not 0, when the provider did not report them (llama.cpp's server
            # streams without usage): an unknown count is not a count of nothing
            tokens=tracker.total_tokens if tracker.tokens_known else "",
        )
        if result is None:
            return row
        if srs_dir is not None:
            srs_dir.mkdir(parents=True, exist_ok=True)
            (srs_dir / f"{case.name}__{ablation}.md").write_text(
                result.srs_markdown, encoding="utf-8"
            )
        row.update(_check_columns(result.srs_markdown))
    except ReferenceDocumentError as exc:
        row["error"] = exc.message("en")
        return row
    except Exception as exc:
        row["error"] = describe_failure(exc, "en")
        return row
    # The SRS exists from here on: whatever the judge does, the row says the evaluation failed
    try:
        evaluation = await evaluate_srs(reference, result.srs_markdown, factory, tracker=judge)
    except ReferenceDocumentError as exc:  # the request would not fit the judge's context
        evaluation = {"error": exc.message("en")}
    except Exception as exc:
        evaluation = {"error": describe_failure(exc, "en")}
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
    from reqstudio.check.engine import check_document

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
    skip: Collection[tuple[str, str]] = (),
    prices: dict[str, tuple[float, float]] | None = None,
) -> list[dict[str, Any]]:
    """Every case under every ablation, at most `concurrency` runs at a time, except the
    (case, ablation) pairs in `skip` (finished in an earlier run: `--resume`)."""
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
                prices=prices,
            )
        if on_row is not None:
            on_row(row)
        return row

    jobs = [
        one(case, ablation)
        for case in cases
        for ablation in ablations
        if (case.name, ablation) not in skip
    ]
    return list(await asyncio.gather(*jobs))


def write_csv(rows: Iterable[dict[str, Any]], path: Path) -> None:
    """The whole CSV, replaced in one step (written beside it, then renamed): a run stopped
    midway leaves the rows finished so far for `--resume`, never a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    with partial.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({name: row.get(name, "") for name in CSV_COLUMNS})
    os.replace(partial, path)


def read_earlier_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of an earlier run's CSV (`--resume`); [] when there is none yet."""
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as handle:
        return [
            {name: row.get(name) or "" for name in CSV_COLUMNS} for row in csv.DictReader(handle)
        ]


def finished_runs(rows: Iterable[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """(case, ablation) -> the row of each run that finished; failed rows are not finished."""
    return {(r["case"], r["ablation"]): r for r in rows if r.get("status") == FINISHED}


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
