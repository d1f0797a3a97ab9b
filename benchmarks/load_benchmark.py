"""Many users on one app instance (or two behind nginx), over the app's own websocket protocol.

Starts the app as users do (`chainlit run app.py --headless`, password login, loop-lag
monitor on) and the scripted OpenAI-compatible server (its own process), then drives N users
at once. Every model answer streams as a provider streams: token-sized chunks (4 characters)
at 40 chunks a second per user, after a first-byte latency, with answers of realistic length.
Each user does what the browser does, without a browser: logs in (`POST /login`), lists the
history sidebar (`POST /project/threads`), and over Socket.IO (`/ws/socket.io`, with the
session id, mode and language the web app sends)
  - Chat: 2 turns in one thread (streamed answers, memory, history saved);
  - Agent: one question (a thinking round that needs no tool, then the streamed answer);
  - SRS: one description, "continue without a reference", the whole run with the app's own
    number of rounds (ReqParse, 4 x ReqExplore + ReqClarify, DocGenerate streaming the SRS);
then lists the sidebar again and reopens the Chat thread (`GET /project/thread/<id>` and a
socket resuming it, as clicking it in the sidebar does).

For each user count it prints the mean wall time per user against one user alone (the
ratio; one user is always measured first, in the same run), the event loop's stalls inside
the app (p50, p99, max of how late a 10 ms timer woke), the app's CPU seconds per user and
per 1 000 streamed tokens, its peak RSS, and errors. `--json PATH` writes the same figures.

Goals (2 cores): 20 users <= 1.2 x one user with p99 stall <= 50 ms and max <= 100 ms;
50 users <= 1.5 x.

    .venv/bin/python benchmarks/load_benchmark.py [--users 1,10,20,50] [--latency 0.5]
        [--database sqlite|postgres] [--database-url postgresql+asyncpg://...]
        [--instances 2] [--json PATH] [--markdown PATH]

`--database postgres` starts a real PostgreSQL as the tests do (tests/postgres_support.py).
`--instances 2` starts two instances on one PostgreSQL behind the deployment page's nginx example
(`ip_hash`; each user connects from its own loopback address 127.0.<n>.1, as users on
different machines would) and needs nginx on PATH (skipped with a message otherwise).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.load_workload import (  # noqa: E402
    PASSWORD,
    SKIPPED,
    Shape,
    User,
    one_user,
    replies_for,
    streamed_tokens,
)
from reqstudio.local_model import free_port  # noqa: E402
from tests.apps import stop_gently  # noqa: E402

CHAINLIT = Path(sys.executable).parent / "chainlit"
RESULTS = ROOT / "benchmarks" / "results" / "load.md"
PROBE = """
import asyncio, sys, time
async def main():
    worst = 0.0
    while True:
        asked = time.perf_counter()
        await asyncio.sleep(0.01)
        worst = max(worst, (time.perf_counter() - asked - 0.01) * 1000)
        print(f"{worst:.1f}", flush=True)
asyncio.run(main())
"""


class IdleProbe:
    """A control: an idle event loop in its own process, measured the same way as the app's.
    Its longest stall is what the machine's scheduler alone costs (other load on the cores)."""

    def __enter__(self) -> IdleProbe:
        self.process = subprocess.Popen([sys.executable, "-c", PROBE], stdout=subprocess.PIPE,
                                        text=True)  # fmt: skip
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        out, _ = self.process.communicate(timeout=10)
        lines = out.split()
        self.max_ms = float(lines[-1]) if lines else float("nan")


class MemoryWatch:
    """The peak RSS of each app process."""

    def __init__(self, pids: list[int]):
        self.processes = [psutil.Process(pid) for pid in pids]
        self.peaks = [0] * len(pids)
        self._task: asyncio.Task | None = None

    def _sample(self) -> None:
        for i, process in enumerate(self.processes):
            self.peaks[i] = max(self.peaks[i], process.memory_info().rss)

    async def _run(self) -> None:
        while True:
            self._sample()
            await asyncio.sleep(0.25)

    def __enter__(self) -> MemoryWatch:
        self._sample()
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


def cpu_seconds(pids: list[int], children: bool = False) -> float:
    """User + system CPU seconds of these processes (and their children's: nginx's workers)."""
    processes = [psutil.Process(pid) for pid in pids]
    if children:
        processes += [c for p in processes for c in p.children(recursive=True)]
    return sum(sum(p.cpu_times()[:2]) for p in processes)


@dataclass
class Deployment:
    """Where users connect (`url`) and the app instances behind it (their own URLs and pids)."""

    url: str
    llm_url: str
    instances: list[tuple[str, int]]
    proxied: bool = False
    others: dict[str, int] = field(default_factory=dict)  # the model server, nginx: their pids


async def run_level(deployment: Deployment, users: int, shape: Shape) -> dict:
    names = [f"user{n:03d}" for n in range(1, users + 1)]
    scripts = [replies_for(name, shape) for name in names]
    pids = [pid for _, pid in deployment.instances]
    async with httpx.AsyncClient(timeout=30) as http:
        await http.post(f"{deployment.llm_url}/_reset")
        await http.post(
            f"{deployment.llm_url}/_script", json={"replies": [r for s in scripts for r in s]}
        )
        for url, _ in deployment.instances:
            await http.get(f"{url}/reqstudio/loop-lag", params={"reset": 1})
        cpu_before = cpu_seconds(pids)
        each_before = [cpu_seconds([pid]) for pid in pids]
        others_before = {n: cpu_seconds([pid], True) for n, pid in deployment.others.items()}
        driver_before = cpu_seconds([os.getpid()])
        start = asyncio.Event()
        people = [
            User(deployment.url, name, f"127.0.{n}.1" if deployment.proxied else None)
            for n, name in enumerate(names, start=1)
        ]
        tasks = [asyncio.create_task(one_user(person, shape, start)) for person in people]
        began = time.perf_counter()
        with MemoryWatch(pids) as memory, IdleProbe() as probe:
            start.set()
            results = await asyncio.gather(*tasks)
        total = time.perf_counter() - began
        lags = [
            (await http.get(f"{url}/reqstudio/loop-lag")).json() for url, _ in deployment.instances
        ]
        cpu = cpu_seconds(pids) - cpu_before
        each = [round(cpu_seconds([pid]) - b, 1) for pid, b in zip(pids, each_before, strict=True)]
        # on the same 2 cores: what the scripted model, nginx and these simulated users cost
        others = {
            name: round(cpu_seconds([pid], True) - others_before[name], 1)
            for name, pid in deployment.others.items()
        } | {"users (this script)": round(cpu_seconds([os.getpid()]) - driver_before, 1)}
        unused = (await http.post(f"{deployment.llm_url}/_script", json={"replies": []})).json()
    times = [r.seconds for r in results]
    errors = [e for r in results for e in r.errors]
    if unused["queued"]:  # a request got another's reply, or a step did not run
        errors.append(f"{unused['queued']} scripted replies were not asked for")
    tokens = sum(streamed_tokens(s) for s in scripts)
    return {
        "users": users,
        "mean_s_per_user": round(sum(times) / len(times), 2),
        "slowest_s": round(max(times), 2),
        "total_s": round(total, 2),
        # the worst instance's figure where there are several
        "p50_stall_ms": max(lag["p50_ms"] for lag in lags),
        "p99_stall_ms": max(lag["p99_ms"] for lag in lags),
        "max_stall_ms": max(lag["max_ms"] for lag in lags),
        "stalls_over_100ms": sum(lag["stalls_over_warn"] for lag in lags),
        "gc_max_ms": max(lag["gc_max_ms"] for lag in lags),
        "idle_probe_max_stall_ms": probe.max_ms,
        "cpu_s_per_user": round(cpu / users, 3),
        "cpu_s_per_1000_tokens": round(cpu / tokens * 1000, 3),
        "streamed_tokens": tokens,
        "cpu_s_per_instance": each,  # how the proxy split the users
        "cpu_busy": round(cpu / total / len(pids), 3),
        "peak_rss_mb": round(max(memory.peaks) / 2**20, 1),
        "peak_rss_mb_per_instance": [round(p / 2**20, 1) for p in memory.peaks],
        "cpu_s_elsewhere": others,
        "errors": errors,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def start_process(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("wb"),
                            stderr=subprocess.STDOUT)  # fmt: skip


def wait_http(url: str, process: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"exited early:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer in {timeout}s")


def readme_nginx() -> str:
    """The nginx example of the deployment page (docs/deployment.md), as it is written there."""
    text = (ROOT / "docs" / "deployment.md").read_text(encoding="utf-8")
    found = re.search(r"```nginx\n(.*?)```", text, re.S)
    if not found:
        raise RuntimeError("docs/deployment.md has no nginx example")
    return found.group(1)


def nginx_config(ports: list[int], listen: int, work: Path) -> str:
    """The deployment page's example with this run's instances and port; the rest as written."""
    example = readme_nginx()
    servers = "".join(f"    server 127.0.0.1:{port};\n" for port in ports)
    example = re.sub(r"(upstream reqstudio \{\n\s*ip_hash;\n)(?:\s*server [^\n]+\n)+",
                     lambda m: m.group(1) + servers, example)  # fmt: skip
    example = example.replace("listen 80;", f"listen 127.0.0.1:{listen};")
    temp = work / "nginx"
    return (
        f"worker_processes 1;\npid {work}/nginx.pid;\nerror_log {work}/nginx-error.log;\n"
        "events { worker_connections 4096; }\n"
        f"http {{\naccess_log off;\nclient_body_temp_path {temp}/body;\n"
        f"proxy_temp_path {temp}/proxy;\nfastcgi_temp_path {temp}/fastcgi;\n"
        f"uwsgi_temp_path {temp}/uwsgi;\nscgi_temp_path {temp}/scgi;\n{example}}}\n"
    )


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(p).exists()), None
    )


def postgres_or_none():
    from tests.postgres_support import PostgresServer, postgres_bin_dir

    bin_dir = postgres_bin_dir()
    return PostgresServer(bin_dir).init().start() if bin_dir else None


async def main_async(args: argparse.Namespace, shape: Shape) -> list[dict]:
    levels = sorted({1, *(int(n) for n in args.users.split(","))})
    work = Path(tempfile.mkdtemp(prefix="reqstudio-load-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REQSTUDIO_"))}
    env.pop("CI", None)
    env.pop("CHAINLIT_AUTH_SECRET", None)
    env["PATH"] = f"{CHAINLIT.parent}{os.pathsep}{env.get('PATH', '')}"  # as scripts/run.sh
    processes: list[subprocess.Popen] = []
    postgres = None
    rows: list[dict] = []
    try:
        database_url = args.database_url
        if args.database == "postgres" and not database_url:
            postgres = postgres_or_none()
            if postgres is None:
                print("skipped: PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin)")
                sys.exit(SKIPPED)
            database_url = postgres.create_database()
        llm_port = free_port()
        llm_url = f"http://127.0.0.1:{llm_port}"
        llm = start_process(
            [sys.executable, "-m", "tests.scripted_server", "--port", str(llm_port)],
            env, work / "llm.log",
        )  # fmt: skip
        processes.append(llm)
        wait_http(f"{llm_url}/v1/models", llm, work / "llm.log")
        accounts = ",".join(f"user{n:03d}:{PASSWORD}" for n in range(1, max(levels) + 1))
        app_env = env | {
            "OPENAI_BASE_URL": f"{llm_url}/v1",
            "OPENAI_API_KEY": "sk-load-test-not-a-real-key",
            "OPENAI_MODEL": "scripted-model",
            "OPENAI_TIMEOUT": "300",
            "REQSTUDIO_USERS": accounts,
            "REQSTUDIO_LOOP_MONITOR": "trace" if args.trace else "1",
            "SRS_MAX_ITERATIONS": str(shape.srs_rounds + 1),  # ReqParse counts as one
            "CHAINLIT_AUTH_SECRET": secrets.token_urlsafe(48),  # shared by the instances
            "PYTHONUNBUFFERED": "1",
        }
        if database_url:
            app_env["REQSTUDIO_DATABASE_URL"] = database_url
        app_env |= dict(setting.split("=", 1) for setting in args.app_env)
        instances = []
        for n in range(1, args.instances + 1):  # one after the other: each seeds the accounts
            port = free_port()
            log = work / f"app{n}.log"
            app = start_process(
                [str(CHAINLIT), "run", "app.py", "--headless", "--host", "127.0.0.1",
                 "--port", str(port)],
                app_env | {"REQSTUDIO_DATA_DIR": str(work / f"data{n}")}, log,
            )  # fmt: skip
            processes.append(app)
            wait_http(f"http://127.0.0.1:{port}", app, log)
            instances.append((f"http://127.0.0.1:{port}", app.pid))
        url, proxied = instances[0][0], False
        if args.instances > 1:
            listen = free_port()
            (work / "nginx").mkdir(mode=0o777)  # nginx's workers run as another user
            (work / "nginx").chmod(0o777)
            work.chmod(0o755)
            conf = work / "nginx.conf"
            conf.write_text(nginx_config([int(u.rsplit(":", 1)[1]) for u, _ in instances],
                                         listen, work))  # fmt: skip
            nginx = start_process(
                [args.nginx, "-c", str(conf), "-p", str(work), "-g", "daemon off;"],
                env, work / "nginx.log",
            )  # fmt: skip
            processes.append(nginx)
            url, proxied = f"http://127.0.0.1:{listen}", True
            wait_http(url, nginx, work / "nginx.log")
        others = {"model server": llm.pid} | ({"nginx": nginx.pid} if proxied else {})
        if postgres is not None:  # the server and its backends (one per connection)
            pid_file = postgres.data / "postmaster.pid"
            others["PostgreSQL"] = int(pid_file.read_text().split()[0])
        deployment = Deployment(url, llm_url, instances, proxied, others)
        for instance_url, pid in instances if args.warm_up else ():  # not reported
            await run_level(Deployment(instance_url, llm_url, [(instance_url, pid)]), 1,
                            shape.small())  # fmt: skip
        for users in levels:
            row = await run_level(deployment, users, shape)
            baseline = rows[0]["mean_s_per_user"] if rows else row["mean_s_per_user"]
            row = {"users": users, "ratio": round(row["mean_s_per_user"] / baseline, 3)} | row
            rows.append(row)
            print(
                f"N={users}: ratio {row['ratio']:.2f} (mean {row['mean_s_per_user']:.2f}s, "
                f"slowest {row['slowest_s']:.2f}s) stall p50 {row['p50_stall_ms']:.1f} "
                f"p99 {row['p99_stall_ms']:.1f} max {row['max_stall_ms']:.0f} ms "
                f"(gc {row['gc_max_ms']:.0f}, idle probe {row['idle_probe_max_stall_ms']:.0f}) "
                f"CPU {row['cpu_s_per_user']:.2f} s/user {row['cpu_s_per_1000_tokens']:.2f} "
                f"s/1000 tokens, busy {row['cpu_busy']:.0%}, peak RSS {row['peak_rss_mb']:.0f} "
                f"MB, errors {len(row['errors'])}, load {row['load_average'][0]:.1f}; CPU s "
                f"elsewhere {row['cpu_s_elsewhere']}",
                flush=True,
            )
            for error in row["errors"][:3]:
                print(f"   error: {error}", flush=True)
    finally:
        for process in reversed(processes):
            stop_gently(process, timeout=30)
        if postgres is not None:
            postgres.cleanup()
    print(f"logs in {work}")
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| users | × one user | mean s / user | slowest s | stall p50 ms | stall p99 ms "
        "| stall max ms | longest GC ms | idle probe max ms | CPU s / user "
        "| CPU s / 1000 tokens | CPU busy | peak RSS MB | errors | load avg |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['users']} | {row['ratio']:.2f} | {row['mean_s_per_user']:.1f} "
            f"| {row['slowest_s']:.1f} | {row['p50_stall_ms']:.1f} | {row['p99_stall_ms']:.1f} "
            f"| {row['max_stall_ms']:.0f} | {row['gc_max_ms']:.0f} "
            f"| {row['idle_probe_max_stall_ms']:.0f} | {row['cpu_s_per_user']:.2f} "
            f"| {row['cpu_s_per_1000_tokens']:.2f} | {row['cpu_busy']:.0%} "
            f"| {row['peak_rss_mb']:.0f} | {len(row['errors'])} | {row['load_average'][0]:.1f} |"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, Shape]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--users",
        default="1,10,20,50",
        help="user counts; one user is always measured first (the ratio's base)",
    )
    parser.add_argument("--latency", type=float, default=0.5, help="model latency, seconds")
    parser.add_argument(
        "--database",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="postgres: start a real PostgreSQL for the run",
    )
    parser.add_argument("--database-url", default=None, help="REQSTUDIO_DATABASE_URL")
    parser.add_argument(
        "--instances",
        type=int,
        default=1,
        help="app instances; more than one: behind the deployment page's nginx example, on one PostgreSQL",
    )
    parser.add_argument("--nginx", default=None, help="the nginx binary (default: on PATH)")
    parser.add_argument("--chunk-chars", type=int, default=4, help="characters per streamed chunk")
    parser.add_argument(
        "--chunk-rate", type=float, default=40.0, help="streamed chunks a second, per user"
    )
    parser.add_argument("--answer-chars", type=int, default=1200, help="Chat and Agent answers")
    parser.add_argument("--document-chars", type=int, default=4000, help="the SRS document")
    parser.add_argument("--chat-turns", type=int, default=2)
    parser.add_argument(
        "--srs-rounds",
        type=int,
        default=4,
        help="ReqExplore/ReqClarify rounds (the app's default is 4)",
    )
    parser.add_argument("--modes", default="Chat,Agent,SRS")
    parser.add_argument(
        "--app-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting for the instances, e.g. REQSTUDIO_DB_POOL_SIZE=20",
    )
    parser.add_argument(
        "--no-warm-up",
        dest="warm_up",
        action="store_false",
        help="skip the unreported short run that loads each instance's code",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument(
        "--markdown",
        type=lambda value: Path(value) if value else None,
        default=RESULTS,
        help=f"write the table here (default {RESULTS.relative_to(ROOT)}; '': nowhere)",
    )
    parser.add_argument(
        "--trace", action="store_true", help="the app logs the loop thread's stack at each stall"
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.instances > 1 and args.database != "postgres" and not args.database_url:
        args.database = "postgres"  # several instances share one PostgreSQL
    shape = Shape(
        chunk_chars=args.chunk_chars, chunk_rate=args.chunk_rate, latency=args.latency,
        answer_chars=args.answer_chars, document_chars=args.document_chars,
        chat_turns=args.chat_turns, srs_rounds=args.srs_rounds,
        modes=tuple(m.strip() for m in args.modes.split(",") if m.strip()),
    )  # fmt: skip
    return args, shape


def main(argv: list[str] | None = None) -> None:
    args, shape = parse_args(argv)
    if args.instances > 1:
        args.nginx = args.nginx or nginx_binary()
        if not args.nginx:
            print("skipped: two instances behind nginx need nginx (apt-get install -y nginx)")
            sys.exit(SKIPPED)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `timeout`: still clean up
    load_before = [round(x, 2) for x in os.getloadavg()]
    rows = asyncio.run(main_async(args, shape))
    if args.trace:
        return  # a diagnosis run: the stacks are in the app's log; no results written
    store = "PostgreSQL" if args.database_url or args.database == "postgres" else "SQLite"
    where = (
        f"{args.instances} instances behind the deployment page's nginx example"
        if args.instances > 1
        else "One app instance"
    )
    command = "benchmarks/load_benchmark.py " + " ".join(sys.argv[1:] if argv is None else argv)
    figures = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command.strip(),
        "database": store.lower(),
        "instances": args.instances,
        "nproc": os.cpu_count(),
        "load_average_before": load_before,
        "shape": shape.__dict__ | {"modes": list(shape.modes)},
        "levels": rows,
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False), encoding="utf-8")
    report = (
        f"# Load benchmark ({figures['date']})\n\n"
        f"{where} ({store} history), {platform.machine()} with {os.cpu_count()} cores, load "
        f"average {load_before[0]} before the run; `{figures['command']}`. Scripted model: "
        f"{shape.latency:g} s to the first byte, then {shape.chunk_chars}-character chunks at "
        f"{shape.chunk_rate:g} a second. Each user: login, sidebar, "
        f"{', '.join(shape.modes)} (Chat {shape.chat_turns} turns of {shape.answer_chars} "
        f"characters; Agent one answer of {shape.answer_chars}; SRS {shape.srs_rounds} rounds "
        f"and a {shape.document_chars}-character document), sidebar, reopen the Chat "
        f"thread.\n\n{table(rows)}\n"
    )
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
