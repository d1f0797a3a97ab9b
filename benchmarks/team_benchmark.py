"""Team mode's own cost: what the society and scheduler add per delivered message, and wall
time against the model time on the critical path.

Runs the real team (society, scheduler, LangGraph turns, OpenAI client over HTTP, SQLite
record) against the scripted model server, where every model call takes a fixed latency.
Root spawns 7 workers (8 agents); the workers report to root in parallel until 100 messages
were delivered. "Model busy" is the union of all model-call intervals, so calls of agents
running in parallel count once; what the wall time adds on top is the runtime's own cost.
A second measurement sends messages through the society alone (no model) to isolate the
protocol's cost per message (validation, delivery, events, SQLite record).

    .venv/bin/python benchmarks/team_benchmark.py [--runs 5] [--latency 0.1]

Prints a Markdown table and writes benchmarks/results/team.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import bench

from reqstudio.llm import ModelFactory
from reqstudio.modes.team import AgentSociety, EventStore, SocietyLimits, TeamConfig, TeamRun
from reqstudio.modes.team.protocol import ROOT_ID

WORKERS = 7
MESSAGES = 100
BRIEF = {
    "objective": "整理一部分需求",
    "constraints": ["Python 后端"],
    "inputs": ["任务描述"],
    "outputs": ["需求列表"],
    "completion_criteria": ["每条可测试"],
}


def me(agent_id: str) -> str:
    return f"你的 ID：{agent_id}；"


def script(server: bench.ScriptedLLMServer, latency: float) -> None:
    # 1 user message + 7 task assignments + 92 reports = 100 delivered messages
    reports = [13] * (WORKERS - 1) + [14]
    spawns = [
        bench.ToolCallScript("spawn_agent", {"role": "worker", "brief": BRIEF})
        for _ in range(WORKERS)
    ]
    role = bench.ToolCallScript("create_role", {"name": "worker", "role_prompt": "你整理需求。"})
    server.script(
        bench.Reply(match=me(ROOT_ID), tool_calls=[role, *spawns], delay=latency),
        *[bench.Reply(match=me(ROOT_ID), content="收到。", delay=latency) for _ in range(60)],
    )
    for number, count in enumerate(reports, start=1):
        sends = [
            bench.ToolCallScript(
                "send_message",
                {"to": ROOT_ID, "message_type": "status_report", "content": f"第 {i} 条需求：……"},
            )
            for i in range(count)
        ]
        server.script(
            bench.Reply(match=me(f"agent-{number}"), tool_calls=sends, delay=latency),
            bench.Reply(match=me(f"agent-{number}"), content="完成。", delay=latency),
        )


def busy_time(intervals: list[tuple[str, float, float]]) -> float:
    """The union of the model-call intervals: parallel calls count once."""
    return bench.busy_seconds((start, stop) for _, start, stop in intervals)


async def one_team_run(
    factory: ModelFactory, server: bench.ScriptedLLMServer, latency: float, data: Path
):
    server.reset()
    script(server, latency)
    store = EventStore.in_data_dir(data)
    team = TeamRun(factory, TeamConfig(max_messages=MESSAGES, max_agents=8), store=store)
    started = time.monotonic()
    finished = await team.run("整理需求")
    await store.flush()
    wall = time.monotonic() - started
    store.close()
    delivered = len(team.society.messages)
    busy = busy_time(team.model_calls)
    latency_path = busy_time([(a, start, start + latency) for a, start, _ in team.model_calls])
    serial = sum(stop - start for _, start, stop in team.model_calls)
    return {
        "reason": finished.reason,
        "agents": len(team.society.agents),
        "messages": delivered,
        "calls": len(team.model_calls),
        "wall": wall,
        "busy": busy,
        "latency_path": latency_path,
        "serial": serial,
        "per_message_ms": (wall - busy) / delivered * 1000,
    }


def society_only(messages: int, data: Path) -> float:
    """µs per delivered message through the society alone, with the SQLite record."""
    store = EventStore.in_data_dir(data)
    society = AgentSociety(SocietyLimits(max_messages=messages + 10))
    society.subscribe(lambda event: store.append("bench", event.model_dump()))
    store.start_run("bench", "society only")
    society.create_role(ROOT_ID, "worker", "你整理需求。")
    child = society.spawn_agent(ROOT_ID, "worker", BRIEF).data["agent_id"]
    started = time.perf_counter()
    for i in range(messages):
        society.send_message(
            child, ROOT_ID, "status_report", f"第 {i} 条需求", {"status": "in_progress"}
        )
        society.take_inbox(ROOT_ID)
    store.close()  # waits for every write
    return (time.perf_counter() - started) / messages * 1e6


async def main_async(args: argparse.Namespace) -> tuple[str, dict]:
    os.environ.setdefault("REQSTUDIO_RETRY_BACKOFF_SCALE", "0")
    with tempfile.TemporaryDirectory() as tmp, bench.scripted_provider(tmp) as (server, factory):
        await one_team_run(factory, server, args.latency, Path(tmp) / "warmup")
        runs = [
            await one_team_run(factory, server, args.latency, Path(tmp) / f"run{i}")
            for i in range(args.runs)
        ]
        protocol_us = society_only(2000, Path(tmp) / "society")

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    first = runs[0]
    lines = [
        f"Team mode, {first['agents']} agents, {first['messages']} delivered messages, "
        f"{first['calls']} model calls at {args.latency:g} s each; median of {args.runs} runs "
        f"(ends: {', '.join(sorted({r['reason'] for r in runs}))}).",
        "",
        "| measure | value |",
        "|---|---|",
        f"| wall time | {med('wall'):.3f} s |",
        f"| model time, serial sum of all calls | {med('serial'):.3f} s |",
        f"| model latency on the critical path (parallel calls counted once) | {med('latency_path'):.3f} s |",
        f"| model calls on the critical path as the client timed them (latency + the openai SDK building each request from the growing history + parsing the answer) | {med('busy'):.3f} s |",
        f"| wall / critical-path model latency | {med('wall') / med('latency_path'):.3f} |",
        f"| runtime's own cost per delivered message: (wall − client-side model calls) / messages | {med('per_message_ms'):.2f} ms |",
        f"| protocol alone per message (validate, deliver, event, SQLite record; no model) | {protocol_us:.0f} µs |",
        "",
        f"Python {platform.python_version()}, {os.cpu_count()} CPU cores, {time.strftime('%Y-%m-%d')}.",
    ]
    return "\n".join(lines), {"latency": args.latency, "runs": runs, "protocol_us": protocol_us}


def main() -> None:
    options = bench.parser(__doc__, "team.md")
    options.add_argument("--runs", type=int, default=5)
    options.add_argument("--latency", type=float, default=0.1)
    args = options.parse_args()
    report, figures = asyncio.run(main_async(args))
    bench.finish(args, report, figures)


if __name__ == "__main__":
    main()
