"""What one instance costs the database and the machine per user: connections, memory, CPU.

Starts a real PostgreSQL (Debian's server binaries, as the tests do), the scripted
OpenAI-compatible server, and one app instance on that database with the pool settings given
(the defaults unless told), then has N users run an SRS thread each at the same time (with a
reference, two ReqExplore/ReqClarify rounds, every model call answering after `--latency`
seconds), over the app's socket as the browser does. For each N it prints:
  - the most connections the instance held (`pg_stat_activity`, sampled every 20 ms) and how
    many it keeps when idle again;
  - the app process's peak memory (RSS) above its idle size, per user;
  - the app process's CPU seconds per user's SRS run.

    .venv/bin/python benchmarks/connections_benchmark.py [--users 1,10,20] [--latency 0.3]
        [--pool-size 5 --pool-overflow 5 --checkpoint-pool-size 4]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import test_srs_support as srs  # noqa: E402
from tests.apps import AppProcess  # noqa: E402
from tests.browser_support import provider_env  # noqa: E402
from tests.postgres_support import PostgresServer, postgres_bin_dir  # noqa: E402
from tests.sampling import PeakSampler  # noqa: E402
from tests.socket_tabs import ScriptedLLMServer, runs_at_once  # noqa: E402
from tests.test_pools import ConnectionCounter  # noqa: E402

ROUNDS = 2


def script_runs(server: ScriptedLLMServer, users: int, latency: float) -> None:
    for _ in range(users):
        server.script(srs.parse_reply(("FR-01", "Readers search books."), delay=latency))
        for _ in range(ROUNDS):
            server.script(
                srs.explore_reply(("FR-01", "Readers search books by title."), delay=latency),
                srs.clarify_reply(FR_01=0),
            )
        server.script(srs.doc_reply(srs.SRS_TEXT * 20, delay=latency, chunk_delay=0.01))


class Peak(PeakSampler):
    """The app process's peak RSS while sampling."""

    def __init__(self, pid: int):
        super().__init__()
        self.process = psutil.Process(pid)

    def sample(self) -> int:
        return self.process.memory_info().rss


def measure(app: AppProcess, server: ScriptedLLMServer, url: str, users: int, latency: float):
    script_runs(server, users, latency)
    process = psutil.Process(app.process.pid)
    idle_rss = process.memory_info().rss
    cpu_before = sum(process.cpu_times()[:2])
    with ConnectionCounter(url) as counter, Peak(app.process.pid) as memory:
        started = time.monotonic()
        asyncio.run(runs_at_once(app, users, srs.E_STORE / "reference.md", timeout=600))
        wall = time.monotonic() - started
    cpu = sum(process.cpu_times()[:2]) - cpu_before
    time.sleep(1.0)
    with ConnectionCounter(url) as idle:
        time.sleep(0.3)
    return {
        "users": users,
        "wall_s": wall,
        "peak_connections": counter.peak,
        "idle_connections": idle.peak,
        "rss_idle_mb": idle_rss / 2**20,
        "rss_per_user_mb": max(0, memory.peak - idle_rss) / 2**20 / users,
        "cpu_s_per_user": cpu / users,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", default="1,10,20")
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--pool-size", type=int, default=5)
    parser.add_argument("--pool-overflow", type=int, default=5)
    parser.add_argument("--checkpoint-pool-size", type=int, default=4)
    args = parser.parse_args()
    bin_dir = postgres_bin_dir()
    if bin_dir is None:
        sys.exit("PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin)")
    database = PostgresServer(bin_dir).init().start()
    try:
        url = database.create_database()
        with ScriptedLLMServer() as server, tempfile.TemporaryDirectory() as folder:
            env = provider_env(server) | {
                "REQSTUDIO_DATABASE_URL": url,
                "SRS_MAX_ITERATIONS": str(ROUNDS + 1),
                "REQSTUDIO_DB_POOL_SIZE": str(args.pool_size),
                "REQSTUDIO_DB_POOL_OVERFLOW": str(args.pool_overflow),
                "REQSTUDIO_CHECKPOINT_POOL_SIZE": str(args.checkpoint_pool_size),
            }
            app = AppProcess(Path(folder) / "data", env).start()
            try:
                print(
                    f"pools: data {args.pool_size}+{args.pool_overflow}, checkpoints "
                    f"{args.checkpoint_pool_size}; model latency {args.latency} s; SRS with "
                    f"{ROUNDS} rounds\n"
                )
                print("| users | wall s | peak connections | idle connections | idle RSS MB "
                      "| RSS MB / user | CPU s / user |")  # fmt: skip
                print("|---|---|---|---|---|---|---|")
                for users in (int(n) for n in args.users.split(",")):
                    row = measure(app, server, url, users, args.latency)
                    print(
                        f"| {row['users']} | {row['wall_s']:.1f} | {row['peak_connections']} | "
                        f"{row['idle_connections']} | {row['rss_idle_mb']:.0f} | "
                        f"{row['rss_per_user_mb']:.1f} | {row['cpu_s_per_user']:.2f} |",
                        flush=True,
                    )
            finally:
                app.stop()
    finally:
        database.cleanup()


if __name__ == "__main__":
    main()
