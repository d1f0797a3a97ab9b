"""`reqstudio srs experiment`: the quality benchmark on the command line.

Every case under every ablation (the no-clarify baseline among them), each SRS scored by the
judge (the evaluation model, which may live at another provider) and by the deterministic
checker; one CSV row per run, written as each run ends, so `--resume` can skip the finished
ones and run the failed ones again. Progress (with tokens and cost so far) goes to stderr; the
means and the summary to stdout, the summary also beside the CSV (`.md` and `.json`).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reqstudio.cli import EXIT_FAILED, EXIT_OK, UsageError, load_mode_settings, run_mode, say
from reqstudio.modes.srs.state import ABLATIONS

if TYPE_CHECKING:
    from collections.abc import Callable

    from reqstudio.modes.srs.experiment import ExperimentCase
    from reqstudio.runtime import AppRuntime
    from reqstudio.settings import Settings


def add_arguments(experiment: argparse.ArgumentParser) -> None:
    experiment.add_argument("--cases", required=True, type=Path)
    experiment.add_argument("--ablations", nargs="+", choices=ABLATIONS, default=list(ABLATIONS))
    experiment.add_argument("--concurrency", type=int, default=2)
    experiment.add_argument("--max-iterations", type=int)
    experiment.add_argument("--out", type=Path, default=Path("results.csv"))
    experiment.add_argument(
        "--resume",
        action="store_true",
        help="keep the finished rows already in --out and run only the others (the failed "
        "ones again)",
    )
    experiment.add_argument(
        "--split", help="only the cases of this split in the cases folder's split.json"
    )
    picked = experiment.add_mutually_exclusive_group()
    picked.add_argument("--limit", type=int, metavar="N", help="only the first N cases by name")
    picked.add_argument(
        "--sample", type=int, metavar="N", help="N cases drawn at random (see --seed)"
    )
    experiment.add_argument(
        "--seed",
        type=int,
        default=0,
        help="the draw of --sample (default 0): same seed, same cases",
    )


def _progress(message: str) -> None:
    say(message)


def _command_line(args: argparse.Namespace, max_iterations: int, ablations: list[str]) -> str:
    """The command that reproduces this run (its effective values), for the summary."""
    parts = ["reqstudio", "srs", "experiment", "--cases", str(args.cases)]
    parts += ["--ablations", *ablations]
    if args.split:
        parts += ["--split", args.split]
    if args.limit is not None:
        parts += ["--limit", str(args.limit)]
    if args.sample is not None:
        parts += ["--sample", str(args.sample), "--seed", str(args.seed)]
    parts += ["--max-iterations", str(max_iterations), "--concurrency", str(args.concurrency)]
    parts += ["--out", str(args.out)]
    return shlex.join(parts)


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


class RunningTotals:
    """Tokens and cost of the runs finished so far, for the progress bar: the cost only while
    every run has one (a price for every model used, `AGENT_PRICES`), tokens always."""

    def __init__(self) -> None:
        self.tokens = 0
        self.unreported = 0  # runs whose provider did not report the tokens
        self.cost: float | None = 0.0

    def add(self, row: dict[str, Any]) -> None:
        self.tokens += int(_number(row.get("tokens")) + _number(row.get("judge_tokens")))
        # a row that stopped before any model call (an unreadable case) has no tokens to report
        called = row.get("llm_calls") not in ("", None, 0, "0")
        self.unreported += (called and row.get("tokens") == "") or row.get("judge_tokens") == ""
        if self.cost is not None:
            self.cost = None if row.get("cost") in ("", None) else self.cost + _number(row["cost"])

    def describe(self) -> str:
        text = f"tokens {self.tokens:,}"
        if self.unreported:
            runs = "run" if self.unreported == 1 else "runs"
            text += f" (not reported in {self.unreported} {runs})"
        return text if self.cost is None else f"{text}, cost {self.cost:.4f}"


def _select(args: argparse.Namespace) -> list[ExperimentCase]:
    from reqstudio.modes.srs.experiment import (
        CaseSelectionError,
        find_cases,
        read_split,
        select_cases,
    )

    if not args.cases.is_dir():
        raise UsageError(f"--cases: no such folder: {args.cases}")
    cases = find_cases(args.cases)
    if not cases:
        raise UsageError(f"--cases: no folder with input.md and reference.md under {args.cases}")
    try:
        splits = read_split(args.cases) if args.split else None
        cases = select_cases(
            cases,
            split=args.split,
            splits=splits,
            limit=args.limit,
            sample=args.sample,
            seed=args.seed,
        )
    except CaseSelectionError as exc:
        raise UsageError(str(exc)) from None
    if not cases:
        raise UsageError(f"--split {args.split}: none of its cases is under {args.cases}")
    return cases


def experiment_command(
    args: argparse.Namespace, max_iterations_of: Callable[[int | None, Settings], int]
) -> int:
    """The benchmark; `max_iterations_of` checks --max-iterations against the settings."""
    from reqstudio.modes.srs.experiment import (
        finished_runs,
        means_table,
        read_earlier_rows,
        run_experiment,
        write_csv,
    )
    from reqstudio.modes.srs.experiment_summary import (
        ALL_METRICS,
        SUMMARY_METRICS,
        summarize,
        summary_json,
        summary_table,
    )

    settings = load_mode_settings()
    cases = _select(args)
    if args.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, not {args.concurrency}")
    max_iterations = max_iterations_of(args.max_iterations, settings)
    ablations = list(dict.fromkeys(args.ablations))
    srs_dir = args.out.with_name(args.out.stem + "_srs")
    plan = [(case.name, ablation) for case in cases for ablation in ablations]
    earlier: list[dict[str, Any]] = []
    if args.resume:
        try:
            earlier = read_earlier_rows(args.out)
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--resume: cannot read {args.out} ({exc})") from None
    finished = finished_runs(earlier)
    kept = {key: finished[key] for key in plan if key in finished}
    # rows of other cases or ablations stay in the file, outside this run's summary
    outside = [r for r in earlier if (r["case"], r["ablation"]) not in set(plan)]
    if args.resume:
        retried = sum(1 for r in earlier if (r["case"], r["ablation"]) in set(plan)) - len(kept)
        _progress(
            f"--resume: {len(kept)} of {len(plan)} runs already finished in {args.out}; "
            f"running {len(plan) - len(kept)} ({retried} of them failed before)"
        )

    async def experiment(runtime: AppRuntime) -> int:
        factory = runtime.factory()
        new: dict[tuple[str, str], dict[str, Any]] = {}
        totals = RunningTotals()
        unwritable: list[str] = []

        def rows_in_plan() -> list[dict[str, Any]]:
            return [kept.get(key) or new[key] for key in plan if key in kept or key in new]

        def save() -> None:
            try:
                write_csv([*rows_in_plan(), *outside], args.out)
            except OSError as exc:
                if not unwritable:
                    _progress(f"reqstudio: could not write {args.out} ({exc.strerror or exc})")
                unwritable.append(str(exc))

        def on_row(row: dict[str, Any]) -> None:
            new[(row["case"], row["ablation"])] = row
            totals.add(row)
            bar.set_postfix_str(totals.describe(), refresh=False)
            bar.update(1)
            save()

        from tqdm import tqdm  # the progress bar of a benchmark, not of every command's start

        bar = tqdm(total=len(plan) - len(kept), desc="SRS runs", unit="run", file=sys.stderr)
        with bar:
            await run_experiment(
                cases,
                ablations,
                factory,
                concurrency=args.concurrency,
                max_iterations=max_iterations,
                max_mb=settings.reference_max_mb,
                srs_dir=srs_dir,
                on_row=on_row,
                skip=set(kept),
                prices=dict(settings.agent_prices),
            )
        save()
        rows = rows_in_plan()
        failed = [r for r in rows if r["status"] != "ok"]
        for row in failed:
            _progress(f"{row['case']} / {row['ablation']}: {row['status']}: {row['error']}")
        print(means_table(rows, ablations))
        summaries = summarize(rows, ablations, metrics=ALL_METRICS)
        about = {
            "cases": len(cases),
            "ablations": ablations,
            "model": factory.model_name("ReqParse"),
            "judge_model": factory.model_name("evaluation"),
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "command": _command_line(args, max_iterations, ablations),
            "runs": len(rows),
            "failed": len(failed),
            "run_this_time": len(new),
        }
        summary = _summary_markdown(about, summary_table(summaries, metrics=SUMMARY_METRICS))
        print()
        print(summary)
        _write_beside(args.out, "_summary.md", summary + "\n")
        data = summary_json(summaries, **about)
        _write_beside(args.out, "_summary.json", json.dumps(data, indent=2) + "\n")
        _progress(
            f"{len(rows)} runs ({len(new)} this time), {len(failed)} failed -> {args.out} "
            f"(documents in {srs_dir}); {totals.describe()} this time"
        )
        return EXIT_FAILED if failed or unwritable else EXIT_OK

    return run_mode(experiment, settings=settings, outputs={"--out": args.out})


def _summary_markdown(about: dict[str, Any], table: str) -> str:
    left_out = (
        f"; {about['failed']} failed, left out of the means and differences"
        if about["failed"]
        else ""
    )
    return "\n".join(
        [
            f"SRS benchmark: {about['cases']} cases x {len(about['ablations'])} ablations, "
            f"{about['runs']} runs{left_out}",
            f"generator: {about['model']}; judge: {about['judge_model']}; {about['date']}",
            f"command: {about['command']}",
            "",
            table,
        ]
    )


def _write_beside(csv_path: Path, suffix: str, text: str) -> None:
    path = csv_path.with_name(csv_path.stem + suffix)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        _progress(f"reqstudio: could not write {path} ({exc.strerror or exc})")
