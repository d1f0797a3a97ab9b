"""What every benchmark shares: the scripted provider started with settings and a model factory
pointed at it, the time with a model call in flight, the conditions line, and the ending (the
table printed, written to `benchmarks/results/`, and with `--json FILE` the figures as JSON).

Run a benchmark from the repository root, `.venv/bin/python benchmarks/NAME.py`: its own folder
is on `sys.path`, so `from bench import ...` comes first and puts the repository there for the
project's imports (`agents`, `reqstudio`, and the scripted server in `tests/scripted_server.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402

from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript  # noqa: E402

if TYPE_CHECKING:
    from reqstudio.llm import ModelFactory

__all__ = ["ROOT", "Reply", "ScriptedLLMServer", "ToolCallScript"]

RESULTS = ROOT / "benchmarks" / "results"
PURE = ROOT / "tests" / "data" / "pure"  # vendored; source and licence in its README
PURE_CASE = "2007-e-store-doc/reference.md"
KEY = "sk-benchmark"
MODEL = "scripted-model"


@contextmanager
def scripted_provider(
    data_dir: Path | str | None = None,
) -> Iterator[tuple[ScriptedLLMServer, ModelFactory]]:
    """The scripted OpenAI-compatible server over real HTTP, and a model factory using it."""
    from reqstudio.llm import Endpoint, ModelFactory
    from reqstudio.settings import load_settings

    with ScriptedLLMServer() as server:
        extra = {} if data_dir is None else {"REQSTUDIO_DATA_DIR": str(data_dir)}
        settings = load_settings(
            OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY=KEY, OPENAI_MODEL=MODEL, **extra
        )
        yield server, ModelFactory(settings, Endpoint(server.base_url, KEY, MODEL))


def busy_seconds(intervals: Iterable[tuple[float, float]]) -> float:
    """Length of the union of (start, end) intervals: the time with a model call in flight,
    concurrent calls counted once."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total


class CallIntervals(BaseCallbackHandler):
    """(start, end) of every chat-model call, from a LangChain callback."""

    run_inline = True

    def __init__(self) -> None:
        self.started: dict[UUID, float] = {}
        self.intervals: list[tuple[float, float]] = []

    def on_chat_model_start(self, serialized, messages, *, run_id: UUID, **kwargs: Any) -> None:
        self.started[run_id] = time.perf_counter()

    def on_llm_end(self, response, *, run_id: UUID, **kwargs: Any) -> None:
        self.intervals.append((self.started.pop(run_id), time.perf_counter()))

    def busy_seconds(self) -> float:
        return busy_seconds(self.intervals)


def fenced(value: Any) -> str:
    """A JSON answer as models write it, in a fenced block."""
    return "```json\n" + json.dumps(value, ensure_ascii=False) + "\n```"


def pure_document(path: Path | None) -> Path:
    """`path`, or the vendored PURE e-store SRS (about 20 KB)."""
    if path is not None:
        return path
    if (PURE / PURE_CASE).is_file():
        return PURE / PURE_CASE
    raise SystemExit(f"no {PURE_CASE} under {PURE} (it belongs to the repository); pass one")


def conditions() -> str:
    """When and where the figures were measured."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{date.today().isoformat()}, Python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} cores, load average {load:.1f} at the end"
    )


def parser(doc: str | None, results: str) -> argparse.ArgumentParser:
    """The benchmark's argument parser with the shared `--out` (the Markdown results file,
    default `benchmarks/results/<results>`) and `--json FILE`."""
    made = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    made.add_argument("--out", type=Path, default=RESULTS / results, help="Markdown results")
    made.add_argument("--json", type=Path, metavar="FILE", help="write the figures as JSON")
    return made


def finish(
    args: argparse.Namespace, report: str, figures: dict[str, Any], *, table: str | None = None
) -> None:
    """Print `table` (default: the whole report), write `report` to `--out` and `figures`, with
    the conditions, to `--json`."""
    print(report if table is None else table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report.rstrip("\n") + "\n", encoding="utf-8")
    print(f"\nwritten to {args.out}", file=sys.stderr)
    if args.json is not None:
        data = {"conditions": conditions(), **figures}
        args.json.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", "utf-8")


async def cold_and_warm(
    runs: int,
    script: Callable[[ScriptedLLMServer], None],
    one_run: Callable[[ModelFactory], Awaitable[dict[str, Any]]],
    row: Callable[[str, dict[str, Any]], str],
) -> tuple[list[str], dict[str, Any]]:
    """Against the scripted provider, `script`ed afresh for each run: the first run in the
    process (cold), then `runs` warm ones; the table rows of the cold run and of the warm
    median and worst (by wall time / model time), and the figures."""
    rows, warm = [], []
    with scripted_provider() as (server, factory):
        for index in range(runs + 1):
            server.reset()
            script(server)
            stats = await one_run(factory)
            if index == 0:
                rows.append(row("cold (first run in the process)", stats))
            else:
                warm.append(stats)
    by_ratio = sorted(warm, key=lambda s: s["wall"] / s["model"])
    median, worst = by_ratio[len(warm) // 2], by_ratio[-1]
    rows += [row(f"warm (median of {runs})", median), row(f"warm (worst of {runs})", worst)]
    return rows, {"median": median, "worst": worst, "runs": warm}


def run_document_benchmark(
    doc: str,
    results: str,
    benchmark: Callable[[float, int, Path], Awaitable[tuple[list[str], dict[str, Any]]]],
    header: str,
    role: str,
) -> int:
    """The `main` of a benchmark running an engine over one document: its arguments
    (`--delay`, `--runs`, `--document`: `role` says what the document is to the engine), the
    runs, and the report, whose title and description are the benchmark's docstring (its first
    line, and its second paragraph: what a run does)."""
    options = parser(doc, results)
    options.add_argument("--delay", type=float, default=0.2, help="model latency per call (s)")
    options.add_argument("--runs", type=int, default=5, help="warm runs")
    options.add_argument("--document", type=Path, help=f"{role} (default: PURE {PURE_CASE})")
    args = options.parse_args()
    document = pure_document(args.document)
    rows, figures = asyncio.run(benchmark(args.delay, args.runs, document))
    title, scenario = [" ".join(part.split()) for part in doc.split("\n\n")[:2]]
    how = (
        f"{role}: `{document.name}` ({document.stat().st_size // 1024} KB), "
        f"{args.delay} s latency per model call. {scenario}"
    )
    return finish_table(args, title.rstrip("."), how, (header, rows), figures)


def table_row(*cells: object) -> str:
    """One row of a Markdown table."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def finish_table(
    args: argparse.Namespace,
    title: str,
    how: str,
    table: tuple[str, list[str]],
    figures: dict[str, Any],
) -> int:
    """`finish` with the report `# title`, the conditions, `how` the figures were measured and
    the table (its header and rows), which is also what is printed; returns the exit code 0."""
    header, rows = table
    text = "\n".join([header, *rows])
    finish(args, f"# {title}\n\n{conditions()}; {how}\n\n{text}", figures, table=text)
    return 0
