"""Agent mode's time limit bounds the whole run: wall time with a provider or a tool that
hangs, measured against the documented bound (AGENT_MAX_EXECUTION_TIME + 5 s).

Runs the real engine with the settings a user has (AGENT_MAX_EXECUTION_TIME=10, the default
OPENAI_TIMEOUT=60 and retry waits) against the scripted model server, which plays each fault.

    .venv/bin/python benchmarks/agent_time_bound.py

Prints a Markdown table and writes benchmarks/results/agent_time_bound.md.
"""

from __future__ import annotations

import asyncio
import os
import platform
import time
from typing import Any

from bench import ROOT, Reply, ScriptedLLMServer, ToolCallScript, finish, parser
from langchain_core.tools import StructuredTool

from reqstudio.llm import Endpoint, ModelFactory
from reqstudio.modes.agent import AgentConfig, AnswerFinished, Failed, HandOver, ReactAgent
from reqstudio.settings import load_settings
from reqstudio.tools.web_search import WebSearch

LIMIT = 10
REASONING = "research agent"
ANSWER_MARK = "Write the final answer now"
ANSWER = "ISO/IEC/IEEE 29148 replaced IEEE 830 [1]. " * 8
HANG = 600.0  # longer than any bound: the provider never answers in time


def search(query: str, max_results: int) -> list[dict[str, str]]:
    return [{"title": query, "href": "https://example.org/1", "body": "A snippet. " * 4}]


def hanging_tool() -> StructuredTool:
    async def lookup(topic: str) -> str:
        await asyncio.Event().wait()
        return ""

    return StructuredTool.from_function(coroutine=lookup, name="slow_lookup", description="Slow.")


def round_with_search() -> Reply:
    return Reply(
        match=REASONING,
        content="Search.",
        tool_calls=[ToolCallScript("web_search", {"query": "IEEE 830"})],
    )


SCENARIOS: dict[str, tuple[list[Reply], bool]] = {
    "function-call provider hangs": (
        [
            Reply(match=REASONING, content="...", delay=HANG),
            Reply(match=ANSWER_MARK, content=ANSWER),
        ],
        False,
    ),
    "a tool hangs": (
        [
            Reply(
                match=REASONING,
                tool_calls=[
                    ToolCallScript("web_search", {"query": "IEEE 830"}),
                    ToolCallScript("slow_lookup", {"topic": "x"}),
                ],
            ),
            Reply(match=ANSWER_MARK, content=ANSWER),
        ],
        True,
    ),
    "answer provider hangs": (
        [
            round_with_search(),
            Reply(match=REASONING, content="Enough."),
            Reply(match=ANSWER_MARK, content=ANSWER, delay=HANG),
        ],
        False,
    ),
    "answer streams too slowly": (
        [
            round_with_search(),
            Reply(match=REASONING, content="Enough."),
            Reply(match=ANSWER_MARK, content=ANSWER, chunk_chars=4, chunk_delay=0.5),
        ],
        False,
    ),
    "answer provider: 500 on every try": (
        [
            round_with_search(),
            Reply(match=REASONING, content="Enough."),
            *[Reply(match=ANSWER_MARK, fault="500") for _ in range(3)],
        ],
        False,
    ),
}


async def one(server: ScriptedLLMServer, replies: list[Reply], with_hanging_tool: bool) -> dict:
    server.reset()
    server.script(*replies)
    settings = load_settings(
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY="sk-benchmark",
        OPENAI_MODEL="scripted-model",
        AGENT_MAX_EXECUTION_TIME=LIMIT,
        REQSTUDIO_DATA_DIR=str(ROOT / ".reqstudio-benchmark"),
    )
    factory = ModelFactory(settings, Endpoint(server.base_url, "sk-benchmark", "scripted-model"))
    tools = [WebSearch(search).as_tool(), *([hanging_tool()] if with_hanging_tool else [])]
    config = AgentConfig.from_settings(settings, language="en")
    agent = ReactAgent(factory, tools, config)
    started = time.perf_counter()
    handed_over = None
    ending: Any = None
    async for event in agent.run("Which standard replaced IEEE 830?"):
        if isinstance(event, HandOver):
            handed_over = time.perf_counter() - started
        if isinstance(event, AnswerFinished | Failed):
            ending = event
    wall = time.perf_counter() - started
    if isinstance(ending, AnswerFinished):
        outcome = "whole answer" if ending.text == ANSWER else "SHORTER answer"
    else:
        kept = f", {len(ending.partial_answer)} chars kept" if ending.partial_answer else ""
        outcome = f"message{kept}"
    return {
        "wall": wall,
        "handed_over": handed_over,
        "outcome": outcome,
        "bound": config.run_deadline_seconds,
    }


async def main() -> None:
    args = parser(__doc__, "agent_time_bound.md").parse_args()
    rows, figures = [], {}
    with ScriptedLLMServer() as server:
        for name, (replies, with_tool) in SCENARIOS.items():
            result = figures[name] = await one(server, replies, with_tool)
            within = "yes" if result["wall"] <= result["bound"] + 1.0 else "NO"
            hand = "—" if result["handed_over"] is None else f"{result['handed_over']:.1f}"
            rows.append(
                f"| {name} | {hand} | {result['wall']:.1f} | {result['bound']:g} | {within} | "
                f"{result['outcome']} |"
            )
            print(rows[-1], flush=True)
    header = [
        f"AGENT_MAX_EXECUTION_TIME={LIMIT}, OPENAI_TIMEOUT=60, default retries "
        f"({platform.python_version()}, {os.cpu_count()} cores)",
        "",
        "| scenario | hand-over at s | wall s | bound s | within (+1 s) | the user gets |",
        "|---|---|---|---|---|---|",
    ]
    finish(args, "\n".join([*header, *rows]) + "\n", {"limit": LIMIT, "scenarios": figures})


if __name__ == "__main__":
    asyncio.run(main())
