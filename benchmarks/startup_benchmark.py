"""How long `reqstudio` takes to start, per command, and what a whole `srs generate` run costs
beyond its model calls.

Start-up: the median wall time of `reqstudio CMD --help` in a fresh process (N runs each), for
the top level and every mode's command; goal at most 0.8 s. A command imports only its own mode
and leaves its engine, LangChain and the model client to the run, so `--help` is its start-up.

Whole run: `reqstudio srs generate` in a fresh process against the scripted OpenAI-compatible
server, 6 model calls (ReqParse, 2 × ReqExplore + ReqClarify, DocGenerate) each answering after
LATENCY. Reported: wall time from launch to exit; when the first model request arrived (the
run's own start-up: the interpreter, the mode's imports, reading the input; LangGraph and the
graph come while that request is in flight, `reqstudio/modes/srs/first_call.py`);
the model time, twice: in flight (from a request's arrival at the server to its last byte
sent) and model-wait (the client's UsageTracker, from each call's start to its answer parsed,
so reading the streamed chunks counts as model time, as in srs_benchmark.py); and

    ratio = (run − start-up before the first model call) / model time    goal: at most 1.05

The same with `--help`'s start-up in place of the run's own is printed beside it: their
difference is the engine's imports (LangChain, LangGraph, the openai SDK), which `--help` does
not pay and the run does.

The import floor: the wall time from launch until a fresh interpreter has imported
`langchain_openai` and `langgraph.graph` and nothing else, measured before each run, in the
same process and conditions. The run's first request should leave within FIRST_CALL_GOAL of
it (everything else the run needs before its first request, and whatever it can do later or
beside that request, is the difference); a fresh run imports LangGraph after its first request
has left, so that request can leave before the floor.

    .venv/bin/python benchmarks/startup_benchmark.py [--runs 5] [--latency 0.3] [--json FILE]
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from bench import ROOT, Reply, ScriptedLLMServer, finish, parser

# The `reqstudio` entry point, run from this checkout (as the tests run it).
REQSTUDIO = [sys.executable, "-c", "from reqstudio.entry import run; run()"]
COMMANDS: dict[str, list[str]] = {
    "reqstudio --help": [],
    "chat": ["chat"],
    "agent": ["agent"],
    "srs generate": ["srs", "generate"],
    "review": ["review"],
    "rewrite": ["rewrite"],
    "team": ["team"],
}
STARTUP_GOAL = 0.8
FIRST_CALL_GOAL = 0.1  # seconds after the import floor
FLOOR = "import time, langchain_openai, langgraph.graph; print(time.process_time(), flush=True)"
PROBE = ROOT / "benchmarks" / "first_request_probe"  # sitecustomize: CPU at the first request
RATIO_GOAL = 1.05
CASE = ROOT / "tests" / "data" / "srs" / "e-store"


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REQSTUDIO_"))}
    env["PYTHONPATH"] = str(ROOT)
    return env


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def help_seconds(argv: list[str], runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of each `reqstudio ARGV --help` (CPU time varies less with load)."""
    walls, cpus = [], []
    for _ in range(runs):
        cpu = children_cpu()
        started = time.perf_counter()
        done = subprocess.run(
            [*REQSTUDIO, *argv, "--help"],
            cwd=ROOT, env=environment(), capture_output=True, timeout=120,
        )  # fmt: skip
        walls.append(time.perf_counter() - started)
        cpus.append(children_cpu() - cpu)
        if done.returncode != 0:
            raise SystemExit(f"reqstudio {' '.join(argv)} --help failed: {done.stderr.decode()}")
    return walls, cpus


def floor_seconds() -> tuple[float, float]:
    """Wall and CPU seconds from launching a fresh interpreter until it has imported the model
    client and LangGraph (the import floor of a run's first request)."""
    launched = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-c", FLOOR], cwd=ROOT, env=environment(), stdout=subprocess.PIPE
    )
    line = process.stdout.readline() if process.stdout else b""
    seconds = time.monotonic() - launched
    process.communicate(timeout=60)
    try:
        return seconds, float(line)
    except ValueError:
        raise SystemExit("the import floor could not be measured: the imports failed") from None


def fenced(value: object) -> str:
    return "```json\n" + json.dumps(value, ensure_ascii=False) + "\n```"


def paced(content: str, match: str, latency: float, burst: bool, chunk_chars: int = 8) -> Reply:
    """One answer that takes `latency` at the provider. Paced (the default), as a provider
    streams: the first token after a third of it, the rest spread over the other two thirds,
    so the client reads each chunk while the model is still writing. `burst`: every chunk at
    once after `latency`, the worst case, where all the client's reading comes after it."""
    if burst:
        return Reply(content=content, match=match, delay=latency, chunk_chars=chunk_chars)
    pieces = max(1, -(-len(content) // chunk_chars))
    return Reply(
        content=content, match=match, delay=latency / 3, chunk_chars=chunk_chars,
        chunk_delay=latency * 2 / 3 / pieces,
    )  # fmt: skip


def script_srs_run(server: ScriptedLLMServer, latency: float, burst: bool = False) -> int:
    """Replies for ReqParse, two ReqExplore/ReqClarify rounds and DocGenerate; each clarify
    round freezes one item and scores the rest 0, so both rounds run. Returns the call count."""
    items = [
        {"id": f"FR-{n:02d}", "content": f"The E-Store shall support capability {n}."}
        for n in range(1, 9)
    ]
    replies = [paced(fenced(items), "Requirement Parsing Agent", latency, burst)]
    frozen: set[str] = set()
    for round_number in (1, 2):
        items = [*items, {"id": f"NFR-{round_number}", "content": "Pages load within 2 s."}]
        open_items = [item for item in items if item["id"] not in frozen]
        scores = [
            {"id": item["id"], "score": 2 if i == 0 else 0, "reason": "benchmark"}
            for i, item in enumerate(open_items)
        ]
        frozen.add(open_items[0]["id"])
        replies += [
            paced(fenced(open_items), "Requirement Exploration Agent", latency, burst),
            paced(fenced(scores), "Requirement Clarification Agent", latency, burst),
        ]
    document = "# Software Requirements Specification\n\n" + "\n".join(
        f"## 3.{n} Requirement {n}\n\nThe E-Store shall do thing {n} within 2 seconds.\n"
        for n in range(1, 11)
    )
    replies.append(paced(document, "Document Generation Agent", latency, burst, chunk_chars=64))
    server.script(*replies)
    return len(replies)


def in_flight(spans: list[dict[str, float]]) -> float:
    """Seconds at least one model call was in flight (overlapping calls counted once)."""
    total, reach = 0.0, float("-inf")
    for span in sorted(spans, key=lambda s: s["received"]):
        start, end = max(span["received"], reach), span["answered"]
        if end > start:
            total += end - start
        reach = max(reach, end)
    return total


def srs_run(
    server: ScriptedLLMServer, latency: float, workdir: Path, burst: bool
) -> dict[str, float]:
    server.reset()
    calls = script_srs_run(server, latency, burst)
    first_cpu = workdir / "first-request-cpu"
    first_cpu.unlink(missing_ok=True)
    env = environment() | {
        "PYTHONPATH": os.pathsep.join([str(PROBE), environment()["PYTHONPATH"]]),
        "BENCH_FIRST_CPU_FILE": str(first_cpu),
        "BENCH_SERVER_PORT": server.base_url.split(":")[2].split("/")[0],
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-benchmark",
        "OPENAI_MODEL": "scripted-model",
        "REQSTUDIO_DATA_DIR": str(workdir / "data"),
    }
    argv = [
        "srs", "generate", "--input", str(CASE / "input.md"), "--reference",
        str(CASE / "reference.md"), "--max-iterations", "3", "--out", str(workdir / "srs.md"),
        "--log", str(workdir / "log.json"), "--quiet",
    ]  # fmt: skip
    cpu = children_cpu()
    launched = time.monotonic()
    done = subprocess.run([*REQSTUDIO, *argv], cwd=ROOT, env=env, capture_output=True, timeout=300)
    wall = time.monotonic() - launched
    cpu = children_cpu() - cpu
    if done.returncode != 0 or len(server.timeline) != calls or server.pending:
        raise SystemExit(
            f"the srs run did not go as scripted (exit {done.returncode}, "
            f"{len(server.timeline)} of {calls} calls): {done.stderr.decode()[-2000:]}"
        )
    return {
        "wall": wall,
        "first_call": server.timeline[0]["received"] - launched,
        "first_call_cpu": float(first_cpu.read_text()),
        "model": in_flight(server.timeline),
        # The client's side of the same calls (UsageTracker: from each call's start to its
        # answer parsed), which also holds reading the streamed chunks.
        "model_wait": json.loads((workdir / "log.json").read_text())["usage"]["model_seconds"],
        "cpu": cpu,
        "calls": calls,
    }


def main() -> None:
    options = parser(__doc__, "startup.md")
    options.add_argument("--runs", type=int, default=5, help="runs per measure (median)")
    options.add_argument("--latency", type=float, default=0.3, help="seconds per model call")
    options.add_argument(
        "--burst", action="store_true",
        help="send each answer's chunks all at once after the latency (worst case) instead of "
        "paced over the call as a provider streams them",
    )  # fmt: skip
    args = options.parse_args()

    startup = {}
    for name, argv in COMMANDS.items():
        walls, cpus = help_seconds(argv, args.runs)
        startup[name] = {
            "median": statistics.median(walls),
            "max": max(walls),
            "cpu": statistics.median(cpus),
        }
        print(f"{name}: median {startup[name]['median']:.3f} s", file=sys.stderr, flush=True)

    with ScriptedLLMServer() as server, tempfile.TemporaryDirectory() as tmp:
        runs = []
        for _ in range(args.runs):  # the floor beside each run, under the same load
            floor, floor_cpu = floor_seconds()
            run = srs_run(server, args.latency, Path(tmp), args.burst)
            runs.append(run | {"floor": floor, "floor_cpu": floor_cpu})
    for run in runs:
        run["after_floor"] = run["first_call"] - run["floor"]
        run["after_floor_cpu"] = run["first_call_cpu"] - run["floor_cpu"]
    median = {
        key: statistics.median(r[key] for r in runs)
        for key in (
            "wall", "first_call", "cpu", "floor", "after_floor",
            "floor_cpu", "first_call_cpu", "after_floor_cpu",
        )
    }  # fmt: skip
    model = statistics.median(r["model"] for r in runs)
    model_wait = statistics.median(r["model_wait"] for r in runs)
    help_startup = startup["srs generate"]["median"]
    whole = {
        "runs": args.runs,
        "model_calls": runs[0]["calls"],
        "latency": args.latency,
        "chunks": "burst" if args.burst else "paced",
        "wall": median["wall"],
        "first_model_call": median["first_call"],
        "import_floor": median["floor"],
        "first_call_after_floor": median["after_floor"],
        "import_floor_cpu": median["floor_cpu"],
        "first_model_call_cpu": median["first_call_cpu"],
        "first_call_after_floor_cpu": median["after_floor_cpu"],
        "model": model,
        "model_wait": model_wait,
        "cpu": median["cpu"],
        "ratio": (median["wall"] - median["first_call"]) / model,
        "ratio_to_model_wait": (median["wall"] - median["first_call"]) / model_wait,
        "ratio_with_help_startup": (median["wall"] - help_startup) / model,
    }
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    conditions = (
        f"{date.today()}, Python {platform.python_version()}, {os.cpu_count()} cores, "
        f"load average {load:.1f} at the end, median of {args.runs} runs"
    )
    lines = [
        f"Start-up (`reqstudio CMD --help`, {conditions}; goal ≤ {STARTUP_GOAL} s):",
        "",
        "| command | median s | slowest s | CPU s (median) | goal met |",
        "|---|---|---|---|---|",
        *(
            f"| {name} | {s['median']:.3f} | {s['max']:.3f} | {s['cpu']:.3f} | "
            f"{'yes' if s['median'] <= STARTUP_GOAL else 'NO'} |"
            for name, s in startup.items()
        ),
        "",
        f"Whole run (`srs generate`, {whole['model_calls']} model calls × {args.latency} s, "
        f"chunks {whole['chunks']}; "
        f"goal: (run − start-up) / model ≤ {RATIO_GOAL}):",
        "",
        "| run s | CPU s | first model call at s | model s: in flight (server) "
        "| model s: model-wait (client) | (run − first call) / in flight "
        "| (run − first call) / model-wait | (run − `--help` start-up) / in flight |",
        "|---|---|---|---|---|---|---|---|",
        f"| {whole['wall']:.3f} | {whole['cpu']:.3f} | {whole['first_model_call']:.3f} "
        f"| {whole['model']:.3f} | {whole['model_wait']:.3f} | {whole['ratio']:.3f} "
        f"| {whole['ratio_to_model_wait']:.3f} | {whole['ratio_with_help_startup']:.3f} |",
        "",
        "First model request beside the import floor (a fresh interpreter importing "
        "`langchain_openai` and `langgraph.graph` only, launched before each run; medians of "
        f"the same {args.runs} runs; goal: the request within {FIRST_CALL_GOAL} s of the floor):",
        "",
        "| measure | import floor s | first request at s | first request − floor s | goal met |",
        "|---|---|---|---|---|",
        *(
            f"| {label} | {whole['import_floor' + key]:.3f} | {whole['first_model_call' + key]:.3f} "
            f"| {whole['first_call_after_floor' + key]:.3f} "
            f"| {'yes' if whole['first_call_after_floor' + key] <= FIRST_CALL_GOAL else 'NO'} |"
            for label, key in (("wall (from launch)", ""), ("CPU of the process", "_cpu"))
        ),
    ]
    finish(args, "\n".join(lines) + "\n", {"startup": startup, "srs_generate": whole})


if __name__ == "__main__":
    main()
