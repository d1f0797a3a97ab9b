"""How much time the Rewrite engine adds on top of waiting for the model.

A rewrite of a real document (the PURE e-store SRS, about 20 KB) into 6 sections against the
scripted OpenAI-compatible server over real HTTP, every model call answering after a fixed
latency: outline, 6 sections in order (streamed to a progress handler), a review finding issues
in 2 sections, the 2 patches run concurrently, a second review finding none. 11 calls, 10 on the
critical path. Model time on the critical path is the time at least one model call was in
flight (the union of the calls' intervals, measured by a LangChain callback), so the two
concurrent patches count once. Goal: wall time within 5 % of it.

    .venv/bin/python benchmarks/rewrite_benchmark.py [--delay 0.2] [--runs 5]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

import bench

from reqstudio.llm import ModelFactory
from reqstudio.modes.rewrite import RewriteChain, RewriteOptions, RewriteRequest
from reqstudio.modes.rewrite.models import ClarificationItem
from reqstudio.usage import UsageTracker

HEADER = (
    "| run | sections | LLM calls | tokens | section tokens streamed | wall s "
    "| model s (critical path) | wall/model | app adds |\n|---|---|---|---|---|---|---|---|---|"
)
SECTIONS = [
    ("Introduction", "Purpose, scope, definitions and references of the E-Store SRS."),
    ("Overall description", "Product perspective, users, constraints and assumptions."),
    ("Catalog and configuration", "Browsing the catalog and configuring a computer."),
    ("Orders and payment", "Shopping cart, checkout, credit-card payment, order tracking."),
    ("Customer accounts", "Profiles, sign-in, order history, newsletters."),
    ("Quality requirements", "Availability 24x7, performance, security, maintainability."),
]


class StreamCounter:
    """A progress handler like the CLI's and the browser's: receives every streamed piece."""

    def __init__(self) -> None:
        self.tokens = 0
        self.messages: list[str] = []

    def on_stage_start(self, stage_name: str, **kwargs: Any) -> None:
        self.messages.append(stage_name)

    def on_stage_end(self, stage_name: str, **kwargs: Any) -> None:
        self.messages.append(stage_name)

    def on_stage_progress(self, stage_name: str, message: str, **kwargs: Any) -> None:
        self.messages.append(message)

    def on_section_token(self, section_id: str, text: str) -> None:
        self.tokens += 1


def section_body(title: str) -> str:
    sentence = (
        f"The E-Store shall support {title.lower()} as the clarifications settled, with every "
        "input validated, failures logged and a confirmation shown to the customer.\n"
    )
    return "".join(f"{n}. {sentence}" for n in range(1, 13))


def script_run(server: bench.ScriptedLLMServer, delay: float) -> None:
    plan = {"title": "E-Store Software Requirements Specification",
            "sections": [{"title": t, "goal": g, "level": 2} for t, g in SECTIONS]}  # fmt: skip
    server.script(
        bench.Reply(content=bench.fenced(plan), match="senior solution architect", delay=delay)
    )
    for title, _ in SECTIONS:
        server.script(
            bench.Reply(
                content=section_body(title),
                match="section by section from an agreed outline",
                delay=delay,
                chunk_chars=16,
            )
        )
    issues = [
        {"section_id": "sec-04", "kind": "unresolved_clarification",
         "description": "Payment by credit card only, as clarified.", "suggestion": "Say so."},
        {"section_id": "sec-06", "kind": "omission",
         "description": "Availability target missing.", "suggestion": "State 99.5 %."},
    ]  # fmt: skip
    server.script(
        bench.Reply(
            content=bench.fenced({"issues": issues}),
            match="meticulous document reviewer",
            delay=delay,
        )
    )
    for title in ("Orders and payment", "Quality requirements"):
        server.script(
            bench.Reply(
                content=section_body(title + " (revised)"),
                match="Rewrite only this section's body",
                delay=delay,
                chunk_chars=16,
            )
        )
    server.script(
        bench.Reply(
            content=bench.fenced({"issues": []}), match="meticulous document reviewer", delay=delay
        )
    )


async def one_run(factory: ModelFactory, request: RewriteRequest) -> dict[str, Any]:
    intervals, tracker, counter = bench.CallIntervals(), UsageTracker(), StreamCounter()
    chain = RewriteChain(factory, options=RewriteOptions(max_review_rounds=3))
    reviewer = chain.reviewer  # the reviewer's calls are timed too
    original_review = reviewer.review

    async def timed_review(draft, callbacks):
        return await original_review(draft, [*callbacks, intervals])

    reviewer.review = timed_review  # type: ignore[method-assign]
    factory_for_role = factory.for_role

    def for_role(role, *, callbacks=(), **kwargs):
        return factory_for_role(role, callbacks=[*callbacks, intervals], **kwargs)

    factory.for_role = for_role  # type: ignore[method-assign]
    try:
        started = time.perf_counter()
        result = await chain.ainvoke(request, counter, tracker=tracker)
        wall = time.perf_counter() - started
    finally:
        factory.for_role = factory_for_role  # type: ignore[method-assign]
    if len(result.structured_document.sections) != len(SECTIONS) or result.issues_fixed != 2:
        raise RuntimeError("the benchmark run did not go as scripted")
    return {
        "sections": len(result.structured_document.sections),
        "calls": tracker.calls,
        "tokens": tracker.total_tokens,
        "streamed": counter.tokens,
        "wall": wall,
        "model": intervals.busy_seconds(),
    }


def row(name: str, stats: dict[str, Any]) -> str:
    ratio = stats["wall"] / stats["model"]
    counts = [stats[key] for key in ("sections", "calls", "tokens", "streamed")]
    seconds = [f"{stats['wall']:.3f}", f"{stats['model']:.3f}"]
    return bench.table_row(name, *counts, *seconds, f"{ratio:.3f}", f"{(ratio - 1) * 100:.1f} %")


async def benchmark(delay: float, runs: int, document: Path) -> tuple[list[str], dict]:
    request = RewriteRequest(
        original_content=document.read_text(encoding="utf-8"),
        clarifications=[
            ClarificationItem(question="How do customers pay?", answer="By credit card only."),
            ClarificationItem(question="Availability target?", answer="99.5 % per month."),
        ],
    )
    rows, figures = await bench.cold_and_warm(
        runs,
        lambda server: script_run(server, delay),
        lambda factory: one_run(factory, request),
        row,
    )
    spread = statistics.pstdev(s["wall"] for s in figures["runs"])
    print(f"warm wall time spread: {spread * 1000:.1f} ms", file=sys.stderr)
    return rows, {"delay": delay, **figures}


def main() -> int:
    return bench.run_document_benchmark(__doc__, "rewrite.md", benchmark, HEADER, "original")


if __name__ == "__main__":
    raise SystemExit(main())
