"""How much time the SRS engine adds on top of waiting for the model.

One full run (ablation "none") against the scripted OpenAI-compatible server over real HTTP,
every model call answering after a fixed latency. Model-wait time is what the UsageTracker
measured from each call's start to its end; the rest of the wall time is the app (graph,
prompts, JSON parsing, merging, events, checkpoints). Goal: the app adds under 5 %.

    .venv/bin/python benchmarks/srs_benchmark.py [--delay 0.2] [--iterations 2]
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

from bench import (
    ROOT,
    Reply,
    ScriptedLLMServer,
    finish_table,
    parser,
    scripted_provider,
)
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from reqstudio.llm import ModelFactory
from reqstudio.modes.srs.engine import SrsRequest, run_srs
from reqstudio.modes.srs.events import DocumentToken, RunFinished
from reqstudio.usage import UsageTracker

CASE = ROOT / "tests" / "data" / "srs" / "e-store"
HEADER = (
    "| run | ablation | rounds | LLM calls | tokens | doc tokens streamed | wall s "
    "| model-wait s | wall/model | app adds |\n"
    "|---|---|---|---|---|---|---|---|---|---|"
)


def fenced(value: object) -> str:
    return "```json\n" + json.dumps(value, ensure_ascii=False) + "\n```"


def requirement_list(count: int) -> list[dict[str, str]]:
    return [
        {
            "id": f"FR-{n:02d}",
            "content": f"The E-Store shall support customer capability number {n}, "
            "with its inputs validated, failures logged and a confirmation shown.",
        }
        for n in range(1, count + 1)
    ]


def script_run(server: ScriptedLLMServer, rounds: int, delay: float) -> None:
    """ReqParse gives 12 items; each ReqExplore adds 3; each ReqClarify freezes the first open
    item (+2) and scores the rest 0, so the loop runs all `rounds`."""
    items = requirement_list(12)
    server.script(Reply(content=fenced(items), match="Requirement Parsing Agent", delay=delay))
    frozen: set[str] = set()
    for round_number in range(1, rounds + 1):
        items = items + [
            {"id": f"NFR-{round_number}{k}", "content": f"Round {round_number} quality rule {k}."}
            for k in range(1, 4)
        ]
        open_items = [it for it in items if it["id"] not in frozen]
        server.script(
            Reply(content=fenced(open_items), match="Requirement Exploration Agent", delay=delay)
        )
        scores = [
            {"id": it["id"], "score": 2 if i == 0 else 0, "reason": "benchmark"}
            for i, it in enumerate(open_items)
        ]
        frozen.add(open_items[0]["id"])
        server.script(
            Reply(content=fenced(scores), match="Requirement Clarification Agent", delay=delay)
        )
    document = "# Software Requirements Specification\n\n" + "\n".join(
        f"## 3.{n} Requirement {n}\n\nThe E-Store shall do thing {n} within 2 seconds.\n"
        for n in range(1, 60)
    )
    server.script(
        Reply(content=document, match="Document Generation Agent", delay=delay, chunk_chars=16)
    )


async def one_run(factory: ModelFactory, rounds: int, checkpoint_file: Path | None) -> dict:
    request = SrsRequest(
        user_input=(CASE / "input.md").read_text(encoding="utf-8"),
        reference_srs=(CASE / "reference.md").read_text(encoding="utf-8"),
        ablation="none",
        max_iterations=rounds + 1,  # the seed's count: ReqParse is iteration 1
    )
    tracker = UsageTracker()
    tokens_streamed = 0
    result = None

    async def consume(saver=None) -> None:
        nonlocal tokens_streamed, result
        async for event in run_srs(request, factory, tracker=tracker, checkpointer=saver):
            if isinstance(event, DocumentToken):
                tokens_streamed += 1
            elif isinstance(event, RunFinished):
                result = event.result

    started = time.perf_counter()
    if checkpoint_file is None:
        await consume()
    else:
        async with AsyncSqliteSaver.from_conn_string(str(checkpoint_file)) as saver:
            await consume(saver)
    wall = time.perf_counter() - started
    if result is None:
        raise RuntimeError("the benchmark run did not finish")
    return {
        "rounds": result.rounds,
        "calls": tracker.calls,
        "tokens": tracker.total_tokens,
        "streamed": tokens_streamed,
        "wall": wall,
        "model": tracker.model_seconds,
    }


def row(name: str, stats: dict) -> str:
    ratio = stats["wall"] / stats["model"]
    return (
        f"| {name} | none | {stats['rounds']} | {stats['calls']} | {stats['tokens']} "
        f"| {stats['streamed']} | {stats['wall']:.3f} | {stats['model']:.3f} | {ratio:.3f} "
        f"| {(ratio - 1) * 100:.1f} % |"
    )


async def benchmark(delay: float, rounds: int) -> tuple[list[str], dict]:
    rows = []
    figures = {}
    with tempfile.TemporaryDirectory() as tmp, scripted_provider(tmp) as (server, factory):
        runs = [
            ("cold (first run in the process)", None),
            ("warm", None),
            ("warm, SQLite checkpoint per node", Path(tmp) / "checkpoints.sqlite"),
        ]
        for name, checkpoint_file in runs:
            server.reset()
            script_run(server, rounds, delay)
            figures[name] = await one_run(factory, rounds, checkpoint_file)
            rows.append(row(name, figures[name]))
    return rows, {"delay": delay, "rounds": rounds, "runs": figures}


def main() -> int:
    options = parser(__doc__, "srs.md")
    options.add_argument("--delay", type=float, default=0.2, help="model latency per call (s)")
    options.add_argument("--iterations", type=int, default=2, help="ReqExplore/ReqClarify rounds")
    args = options.parse_args()
    rows, figures = asyncio.run(benchmark(args.delay, args.iterations))
    how = (
        f"scripted server over HTTP, {args.delay} s latency per model call, {args.iterations} "
        "rounds. `wall/model` = wall time / time spent waiting on model calls (UsageTracker); "
        "`app adds` is the rest, relative to model time."
    )
    return finish_table(args, "SRS engine overhead", how, (HEADER, rows), figures)


if __name__ == "__main__":
    raise SystemExit(main())
