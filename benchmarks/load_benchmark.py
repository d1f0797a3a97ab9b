"""Many users on one app instance, over the app's own websocket protocol.

Starts the app as users do (`chainlit run app.py --headless`, password login, loop-lag
monitor on) and the scripted OpenAI-compatible server (its own process, every model call
answering after a fixed latency), then drives N users at once. Each user does what the
browser does, without a browser: logs in (`POST /login`), opens a Socket.IO connection on
`/ws/socket.io` with the session id, mode and language the web app sends, and then
  - Chat: 3 turns in one thread (streamed answers, memory, history saved);
  - SRS: a new thread in SRS mode, one description, "continue without a reference"
    answered to the app's question, the whole run (ReqParse, ReqExplore, DocGenerate).
Each user has its own threads. For each N it reports the mean and slowest wall time per user
against one user alone, the longest event-loop stall inside the app process, errors, and
the app process's peak memory (RSS).

Goal: at 20 users, wall time per user <= 1.3 x one user alone, and no stall over 100 ms.

    .venv/bin/python benchmarks/load_benchmark.py [--users 1,10,20,50] [--latency 0.5]
        [--database-url postgresql+asyncpg://...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import httpx
import psutil
import socketio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reqstudio.local_model import free_port  # noqa: E402

CHAINLIT = Path(sys.executable).parent / "chainlit"
RESULTS = ROOT / "benchmarks" / "results" / "load.md"
CHAT_TURNS = 3
CHAT_MARK = "load-test chat"
PASSWORD = "load-pass"

PARSE = "Requirement Parsing Agent"
EXPLORE = "Requirement Exploration Agent"
DOC = "Document Generation Agent"


def fenced(value: object) -> str:
    return "```json\n" + json.dumps(value, ensure_ascii=False) + "\n```"


def requirement_list(count: int) -> list[dict[str, str]]:
    return [
        {"id": f"FR-{n:02d}", "content": f"The library system shall support capability {n}."}
        for n in range(1, count + 1)
    ]


def srs_document() -> str:
    items = "\n".join(f"- FR-{n:02d} The system shall support capability {n}." for n in range(12))
    return f"# Software Requirements Specification\n\n## 3. Specific requirements\n\n{items}\n"


def replies_for(users: int, latency: float) -> list[dict]:
    """Enough replies for every user: 3 chat answers, then ReqParse, ReqExplore, DocGenerate.
    Each streams in chunks; `latency` is the wait before the first byte."""
    stream = {"delay": latency, "chunk_chars": 24, "chunk_delay": 0.01}
    chat = {"content": "A good requirement is testable and unambiguous. " * 4,
            "match": CHAT_MARK, **stream}  # fmt: skip
    srs = [
        {"content": fenced(requirement_list(10)), "match": PARSE, **stream},
        {"content": fenced(requirement_list(12)), "match": EXPLORE, **stream},
        {"content": srs_document(), "match": DOC, **stream},
    ]
    return [chat] * (CHAT_TURNS * users) + srs * users


@dataclass
class UserResult:
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)


class User:
    """One person in a browser, as the web app talks to the server."""

    def __init__(self, base_url: str, name: str):
        self.base_url = base_url
        self.name = name
        self.cookies: dict[str, str] = {}

    async def login(self, http: httpx.AsyncClient) -> None:
        response = await http.post(
            f"{self.base_url}/login", data={"username": self.name, "password": PASSWORD}
        )
        response.raise_for_status()
        self.cookies = dict(response.cookies)

    async def session(self, mode: str) -> Session:
        session = Session(self, mode)
        await session.connect()
        return session


class Session:
    """One browser tab: a Socket.IO connection and the events it receives."""

    def __init__(self, user: User, mode: str):
        self.user = user
        self.mode = mode
        self.id = str(uuid.uuid4())
        self.sio = socketio.AsyncClient(reconnection=False)
        self.changed = asyncio.Event()  # set on every message event (no polling)
        self.messages: dict[str, str] = {}
        self.errors: list[str] = []
        self.sio.on("new_message", self._message)
        self.sio.on("update_message", self._message)
        self.sio.on("ask", self._ask)

    async def _message(self, step: dict) -> None:
        self.messages[step["id"]] = step.get("output") or ""
        self.changed.set()
        if step.get("isError") and step.get("type") == "assistant_message":
            self.errors.append(step.get("output", "")[:200])

    async def _ask(self, data: dict) -> dict:
        # SRS asks whether to upload a reference: continue without one
        return {"name": "skip", "payload": {"choice": "skip"}, "label": "skip"}

    async def connect(self) -> None:
        cookie = "; ".join(f"{k}={v}" for k, v in self.user.cookies.items())
        await self.sio.connect(
            self.user.base_url,
            socketio_path="/ws/socket.io",
            transports=["websocket"],
            headers={"Cookie": cookie, "Accept-Language": "en-US"},
            auth={
                "clientType": "webapp",
                "sessionId": self.id,
                "threadId": "",
                "userEnv": "{}",
                "chatProfile": self.mode,
            },
            wait_timeout=30,
        )
        await self.sio.emit("connection_successful")
        await self.until(lambda: any("mode is on" in text for text in self.messages.values()))

    async def until(self, condition, timeout: float = 300.0) -> None:
        async def wait() -> None:
            while not condition():
                self.changed.clear()
                await self.changed.wait()

        try:
            await asyncio.wait_for(wait(), timeout)
        except TimeoutError:
            raise TimeoutError(f"{self.user.name}/{self.mode}: condition not reached") from None

    async def send(self, text: str, done, timeout: float = 300.0) -> None:
        """Send a message as the composer does and wait until `done(messages)` holds."""
        step = {
            "id": str(uuid.uuid4()), "threadId": "", "name": self.user.name,
            "type": "user_message", "output": text, "createdAt": "", "streaming": False,
            "metadata": {}, "modes": {},
        }  # fmt: skip
        await self.sio.emit("client_message", {"message": step, "fileReferences": None})
        await self.until(lambda: done(list(self.messages.values())), timeout)

    async def close(self) -> None:
        await self.sio.disconnect()


async def one_user(base_url: str, name: str, start: asyncio.Event) -> UserResult:
    result = UserResult()
    user = User(base_url, name)
    await start.wait()
    began = time.perf_counter()
    try:
        async with httpx.AsyncClient(timeout=60) as http:
            await user.login(http)
        chat = await user.session("Chat")
        for turn in range(1, CHAT_TURNS + 1):
            await chat.send(
                f"{CHAT_MARK} {name} turn {turn}: what makes a good requirement?",
                lambda texts, turn=turn: sum("tokens (" in t for t in texts) >= turn,
            )
        result.errors += chat.errors
        await chat.close()
        srs = await user.session("SRS")
        await srs.send(
            f"{name}: a university library lending system; readers search, reserve, borrow.",
            lambda texts: any("Done:" in t or "failed" in t for t in texts),
        )
        result.errors += srs.errors
        result.errors += [t[:200] for t in srs.messages.values() if "failed" in t]
        await srs.close()
    except Exception as exc:
        result.errors.append(f"{type(exc).__name__}: {exc}")
    result.seconds = time.perf_counter() - began
    return result


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
    def __init__(self, pid: int):
        self.process = psutil.Process(pid)
        self.peak = 0
        self._task: asyncio.Task | None = None

    async def _run(self) -> None:
        while True:
            self.peak = max(self.peak, self.process.memory_info().rss)
            await asyncio.sleep(0.25)

    def __enter__(self) -> MemoryWatch:
        self.peak = self.process.memory_info().rss
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def run_level(base_url: str, llm_url: str, users: int, latency: float, pid: int) -> dict:
    async with httpx.AsyncClient(timeout=30) as http:
        await http.post(f"{llm_url}/_reset")
        await http.post(f"{llm_url}/_script", json={"replies": replies_for(users, latency)})
        await http.get(f"{base_url}/reqstudio/loop-lag", params={"reset": 1})
        cpu_before = sum(psutil.Process(pid).cpu_times()[:2])
        start = asyncio.Event()
        names = [f"user{n:02d}" for n in range(1, users + 1)]
        tasks = [asyncio.create_task(one_user(base_url, name, start)) for name in names]
        began = time.perf_counter()
        with MemoryWatch(pid) as memory, IdleProbe() as probe:
            start.set()
            results = await asyncio.gather(*tasks)
        total = time.perf_counter() - began
        lag = (await http.get(f"{base_url}/reqstudio/loop-lag")).json()
        cpu = sum(psutil.Process(pid).cpu_times()[:2]) - cpu_before
    times = [r.seconds for r in results]
    errors = [e for r in results for e in r.errors]
    return {
        "users": users,
        "mean": sum(times) / len(times),
        "slowest": max(times),
        "total": total,
        "max_stall_ms": lag["max_ms"],
        "stalls_over_100ms": lag["stalls_over_warn"],
        "gc_max_ms": lag["gc_max_ms"],
        "idle_probe_ms": probe.max_ms,
        "cpu_per_user": cpu / users,
        "cpu_share": cpu / total,
        "errors": errors,
        "rss_mb": memory.peak / 2**20,
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


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


async def main_async(args: argparse.Namespace) -> list[dict]:
    levels = [int(n) for n in args.users.split(",")]
    work = Path(tempfile.mkdtemp(prefix="reqstudio-load-"))
    llm_port, app_port = free_port(), free_port()
    llm_url, base_url = f"http://127.0.0.1:{llm_port}", f"http://127.0.0.1:{app_port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REQSTUDIO_"))}
    env.pop("CI", None)
    llm = start_process(
        [sys.executable, "-m", "tests.scripted_server", "--port", str(llm_port)],
        env, work / "llm.log",
    )  # fmt: skip
    users = ",".join(f"user{n:02d}:{PASSWORD}" for n in range(1, max(levels) + 1))
    app_env = env | {
        "OPENAI_BASE_URL": f"{llm_url}/v1",
        "OPENAI_API_KEY": "sk-load-test-not-a-real-key",
        "OPENAI_MODEL": "scripted-model",
        "OPENAI_TIMEOUT": "120",
        "REQSTUDIO_DATA_DIR": str(work / "data"),
        "REQSTUDIO_USERS": users,
        "REQSTUDIO_LOOP_MONITOR": "trace" if args.trace else "1",
        "SRS_MAX_ITERATIONS": "1",
        "PYTHONUNBUFFERED": "1",
    }
    if args.database_url:
        app_env["REQSTUDIO_DATABASE_URL"] = args.database_url
    app = start_process(
        [str(CHAINLIT), "run", "app.py", "--headless", "--host", "127.0.0.1",
         "--port", str(app_port)],
        app_env, work / "app.log",
    )  # fmt: skip
    rows = []
    try:
        wait_http(f"{llm_url}/v1/models", llm, work / "llm.log")
        wait_http(base_url, app, work / "app.log")
        await run_level(base_url, llm_url, 1, args.latency, app.pid)  # warm-up, not reported
        for users in levels:
            row = await run_level(base_url, llm_url, users, args.latency, app.pid)
            rows.append(row)
            print(
                f"N={users}: mean {row['mean']:.2f}s slowest {row['slowest']:.2f}s "
                f"stall {row['max_stall_ms']:.0f}ms gc {row['gc_max_ms']:.0f}ms "
                f"idle probe {row['idle_probe_ms']:.0f}ms errors {len(row['errors'])} "
                f"rss {row['rss_mb']:.0f}MB",
                flush=True,
            )
            for error in row["errors"][:3]:
                print(f"   error: {error}", flush=True)
    finally:
        stop_process(app)
        stop_process(llm)
    print(f"logs in {work}")
    return rows


def table(rows: list[dict]) -> str:
    alone = rows[0]["mean"] if rows and rows[0]["users"] == 1 else None
    lines = [
        "| users | mean s / user | slowest s | × one user alone | longest loop stall ms "
        "| stalls > 100 ms | longest GC ms | idle probe's longest stall ms | errors "
        "| peak RSS MB | app CPU s / user | app CPU busy |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        ratio = f"{row['mean'] / alone:.2f}" if alone else "-"
        lines.append(
            f"| {row['users']} | {row['mean']:.2f} | {row['slowest']:.2f} | {ratio} "
            f"| {row['max_stall_ms']:.0f} | {row['stalls_over_100ms']} "
            f"| {row['gc_max_ms']:.0f} | {row['idle_probe_ms']:.0f} "
            f"| {len(row['errors'])} | {row['rss_mb']:.0f} | {row['cpu_per_user']:.2f} "
            f"| {row['cpu_share']:.0%} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", default="1,10,20,50")
    parser.add_argument("--latency", type=float, default=0.5, help="model latency, seconds")
    parser.add_argument("--database-url", default=None, help="REQSTUDIO_DATABASE_URL")
    parser.add_argument(
        "--trace", action="store_true", help="the app logs the loop thread's stack at each stall"
    )
    args = parser.parse_args()
    rows = asyncio.run(main_async(args))
    if args.trace:
        return  # a diagnosis run: the stacks are in the app's log; no results written
    store = "PostgreSQL" if args.database_url else "SQLite"
    report = (
        f"# Load benchmark ({date.today().isoformat()})\n\n"
        f"One app instance ({store} history), {platform.machine()} with {os.cpu_count()} cores; "
        f"scripted model at {args.latency:g} s latency, streamed. Each user: login, "
        f"{CHAT_TURNS} Chat turns, one SRS run (no reference, 1 round).\n\n{table(rows)}\n"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
