"""How much time the Review engine adds on top of waiting for the model.

One review of a real document (the PURE e-store SRS, about 20 KB) against the scripted
OpenAI-compatible server over real HTTP, every model call answering after a fixed latency:
round 1 the red team, blue team and client concurrently, then the judge, then 3 authors
concurrently (the red team found high-priority issues in 3 sections); round 2 the three
reviewers and the judge again, no high-priority issue left: stop (quality_sufficient). 11 calls;
on the critical path the reviewers count once per round, so 5 latencies. Model time on the
critical path is the time at least one model call was in flight (the union of the calls'
intervals, measured by a LangChain callback). Goal: wall time within 10 % of it.

    .venv/bin/python benchmarks/review_benchmark.py [--delay 0.2] [--runs 5]
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import bench

from reqstudio.document_model import parse_markdown
from reqstudio.llm import ModelFactory
from reqstudio.modes.review import ReviewRequest, run_review
from reqstudio.modes.review.events import AuthorToken, RunFinished
from reqstudio.usage import UsageTracker
from tests import review_support as review

HEADER = (
    "| run | sections | rounds | LLM calls | tokens | author tokens streamed | wall s "
    "| model s (critical path) | nominal s (5 × latency) | wall/model | app adds |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|"
)


def improvement(agent_id: str, priority: str, topic: str) -> dict[str, str]:
    return {
        "agent_id": agent_id,
        "category": "verifiability",
        "issue": f"{topic}: no measurable criterion is given",
        "expected": f"state {topic.lower()} with a number, a unit and the condition it holds in",
        "priority": priority,
    }


def panel(delay: float, improvements: list[dict], keep: list[tuple[str, str]]) -> list:
    """One round's answers, each after `delay`: the red team with `improvements`, the blue
    team keeping `keep`, the client, and the judge ranking the first improvement first."""
    judge = review.judge_reply(agent_id=improvements[0]["agent_id"], conflicts=False, delay=delay)
    return [
        review.red_reply(*improvements, delay=delay),
        review.blue_reply(keep, delay=delay),
        review.client_reply(delay=delay),
        judge,
    ]


def script_run(
    server: bench.ScriptedLLMServer, delay: float, targets: list[tuple[str, str]]
) -> None:
    improvements = [improvement(agent_id, "high", title) for agent_id, title in targets]
    server.script(*panel(delay, improvements, [(targets[0][0], "structure")]))
    for agent_id, title in targets:
        body = "".join(
            f"{n}. The E-Store shall meet the {title.lower()} requirement within 2 s for 95 % "
            "of requests under 500 concurrent users, measured monthly.\n"
            for n in range(1, 9)
        )
        server.script(review.author_reply(agent_id, body, delay=delay, chunk_chars=16))
    server.script(*panel(delay, [improvement(targets[0][0], "low", "wording")], []))


async def one_run(factory: ModelFactory, document: str, targets) -> dict[str, Any]:
    intervals, tracker = bench.CallIntervals(), UsageTracker()
    factory_for_role = factory.for_role

    def for_role(role, *, callbacks=(), **kwargs):
        return factory_for_role(role, callbacks=[*callbacks, intervals], **kwargs)

    factory.for_role = for_role  # type: ignore[method-assign]
    streamed = 0
    result = None
    try:
        started = time.perf_counter()
        async for event in run_review(ReviewRequest(document=document), factory, tracker=tracker):
            if isinstance(event, AuthorToken):
                streamed += 1
            elif isinstance(event, RunFinished):
                result = event.result
        wall = time.perf_counter() - started
    finally:
        factory.for_role = factory_for_role  # type: ignore[method-assign]
    revised = sum(1 for r in result.rounds for v in r.revisions if v.changed) if result else 0
    if result is None or result.stop_reason != "quality_sufficient" or revised != len(targets):
        raise RuntimeError("the benchmark run did not go as scripted")
    return {
        "sections": len(result.document.sections),
        "rounds": len(result.rounds),
        "calls": tracker.calls,
        "tokens": tracker.total_tokens,
        "streamed": streamed,
        "wall": wall,
        "model": intervals.busy_seconds(),
    }


def row(name: str, stats: dict[str, Any], delay: float) -> str:
    ratio = stats["wall"] / stats["model"]
    counts = [stats[key] for key in ("sections", "rounds", "calls", "tokens", "streamed")]
    seconds = [f"{stats['wall']:.3f}", f"{stats['model']:.3f}", f"{5 * delay:.3f}"]
    return bench.table_row(name, *counts, *seconds, f"{ratio:.3f}", f"{(ratio - 1) * 100:.1f} %")


async def benchmark(delay: float, runs: int, document: Path) -> tuple[list[str], dict]:
    text = document.read_text(encoding="utf-8")
    sections = [s for s in parse_markdown(text).sections if len(s.content.strip()) > 200]
    targets = [(s.id, s.title) for s in sections[1:4]]
    rows, figures = await bench.cold_and_warm(
        runs,
        lambda server: script_run(server, delay, targets),
        lambda factory: one_run(factory, text, targets),
        lambda name, stats: row(name, stats, delay),
    )
    return rows, {"delay": delay, **figures}


def main() -> int:
    return bench.run_document_benchmark(__doc__, "review.md", benchmark, HEADER, "document")


if __name__ == "__main__":
    raise SystemExit(main())
