"""Agent mode's own cost: how long until the user sees something, and how much time the agent
adds on top of the model's own time.

Runs the real engine (LangGraph loop, OpenAI client over HTTP, events) against the scripted
model server, where every model call takes a fixed latency. Each run is one search round, one
"enough" round and a streamed answer: three model calls. A second scenario runs two tools of
0.2 s each in one round, to show they overlap.

    .venv/bin/python benchmarks/agent_benchmark.py [--runs 20] [--latency 0.1]

Prints a Markdown table and writes benchmarks/results/agent.md.
"""

from __future__ import annotations

import asyncio
import os
import platform
import statistics
import time

from bench import ROOT, Reply, ScriptedLLMServer, ToolCallScript, finish, parser, scripted_provider
from langchain_core.tools import StructuredTool

from reqstudio.llm import ModelFactory
from reqstudio.modes.agent import (
    AgentConfig,
    AnswerToken,
    HandOver,
    ReactAgent,
    Stats,
    ThinkingToken,
)
from reqstudio.tools.web_search import WebSearch

ANSWER = (
    "ISO/IEC/IEEE 29148:2018 is the international standard for requirements engineering; it "
    "replaced IEEE 830-1998 and describes the processes and information items for stakeholder, "
    "system and software requirements, including the qualities a good requirement has: "
    "necessary, unambiguous, complete, singular, feasible, verifiable and traceable [1][2]."
)


def instant_search(query: str, max_results: int) -> list[dict[str, str]]:
    return [
        {"title": f"{query} {i}", "href": f"https://example.org/{i}", "body": "A snippet. " * 8}
        for i in range(max_results)
    ]


def slow_tool(name: str, seconds: float) -> StructuredTool:
    async def lookup(topic: str) -> str:
        await asyncio.sleep(seconds)
        return f"{name}: facts about {topic}, enough text to count as a usable result."

    return StructuredTool.from_function(coroutine=lookup, name=name, description="Look up.")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def one_run(agent: ReactAgent, question: str) -> dict[str, float]:
    started = time.perf_counter()
    first_event = first_thought = first_answer = hand_over = None
    stats: Stats | None = None
    async for event in agent.run(question):
        now = time.perf_counter() - started
        if first_event is None:
            first_event = now
        if isinstance(event, ThinkingToken) and first_thought is None:
            first_thought = now
        if isinstance(event, HandOver):
            hand_over = now
        if isinstance(event, AnswerToken) and first_answer is None:
            first_answer = now
        if isinstance(event, Stats):
            stats = event
    wall = time.perf_counter() - started
    assert stats is not None and first_answer is not None and hand_over is not None
    model_seconds = sum(u.seconds for u in stats.per_model.values())
    return {
        "first_event": first_event or 0.0,
        "first_thought": first_thought or 0.0,
        "first_answer": first_answer,
        "tool_phase": hand_over,
        "wall": wall,
        "model": model_seconds,
        "added": wall - model_seconds,
    }


async def scenario(
    server: ScriptedLLMServer, factory: ModelFactory, runs: int, latency: float, parallel: bool
) -> list[dict[str, float]]:
    measured = []
    for index in range(runs + 1):  # the first run warms up connections and imports
        server.reset()
        if parallel:
            calls = [
                ToolCallScript("alpha", {"topic": f"a{index}"}),
                ToolCallScript("beta", {"topic": f"b{index}"}),
            ]
        else:
            calls = [ToolCallScript("web_search", {"query": f"ISO 29148 scope {index}"})]
        server.script(
            Reply(content="I should look this up first.", tool_calls=calls, delay=latency),
            Reply(content="That is enough to answer.", delay=latency),
            Reply(content=ANSWER, match="Write the final answer now", delay=latency),
        )
        tools = (
            [slow_tool("alpha", 0.2), slow_tool("beta", 0.2)]
            if parallel
            else [WebSearch(instant_search).as_tool()]
        )
        agent = ReactAgent(factory, tools, AgentConfig(language="en"))
        result = await one_run(agent, "Which standard replaced IEEE 830?")
        if index:
            measured.append(result)
    return measured


def summarise(name: str, rows: list[dict[str, float]]) -> list[str]:
    def cell(key: str) -> str:
        values = [r[key] * 1000 for r in rows]
        return f"{statistics.median(values):.1f} / {percentile(values, 0.95):.1f}"

    return [
        f"| {name} | {cell('first_event')} | {cell('first_thought')} | {cell('first_answer')} "
        f"| {cell('tool_phase')} | {cell('wall')} | {cell('model')} | {cell('added')} |"
    ]


async def main() -> None:
    options = parser(__doc__, "agent.md")
    options.add_argument("--runs", type=int, default=20)
    options.add_argument("--latency", type=float, default=0.1, help="seconds per model call")
    args = options.parse_args()

    with scripted_provider(ROOT / ".reqstudio" / "benchmark") as (server, factory):
        search_rows = await scenario(server, factory, args.runs, args.latency, parallel=False)
        parallel_rows = await scenario(server, factory, args.runs, args.latency, parallel=True)

    header = [
        "| scenario | first event | first thought token | first answer token | tool phase "
        "| wall | model (tracker) | added by agent |",
        "|---|---|---|---|---|---|---|---|",
    ]
    table = [
        *header,
        *summarise("search, 3 model calls", search_rows),
        *summarise("2 tools x 0.2 s in one round", parallel_rows),
    ]
    lines = [
        "# Agent mode benchmark",
        "",
        f"{args.runs} runs per scenario after one warm-up, each model call answering after "
        f"{args.latency * 1000:.0f} ms (scripted server, real OpenAI client over HTTP). "
        "Times in ms as median / p95, measured from calling `ReactAgent.run`.",
        "",
        *table,
        "",
        "- *first event*: the `ThinkingStarted` step, before the model is called.",
        "- *model (tracker)*: the seconds the UsageTracker counted inside model calls.",
        "- *added by agent*: wall minus model time: the graph, tools, events and prompts.",
        "  In the second scenario it includes the 0.2 s the tools take; run one after the",
        "  other they would take 0.4 s.",
        "",
        f"Machine: {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores, "
        f"{time.strftime('%Y-%m-%d')}.",
    ]
    figures = {"latency": args.latency, "search": search_rows, "parallel": parallel_rows}
    finish(args, "\n".join(lines) + "\n", figures)


if __name__ == "__main__":
    asyncio.run(main())
