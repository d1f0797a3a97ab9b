"""Start the app as users do (`chainlit run app.py --headless`) in a subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from reqstudio.local_model import free_port

ROOT = Path(__file__).resolve().parent.parent
CHAINLIT = Path(sys.executable).parent / "chainlit"

# Variables from the developer's shell or CI that must not leak into the app under test
# (`CI` puts `chainlit run` in CI mode, which injects a fake OPENAI_API_KEY).
_PROVIDER_VARS = (
    "CI",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "REQSTUDIO_USERS",
    "REQSTUDIO_DATABASE_URL",
    "DATABASE_URL",
    "CHAINLIT_AUTH_SECRET",
)


# The apps running in this test process, so that a failing test's report carries their logs
# (tests/conftest.py): a browser test that fails in CI is then read from the app's side too.
RUNNING: list[AppProcess] = []


def stop_gently(process: subprocess.Popen, timeout: float = 40) -> None:
    """Ctrl-C to a process still running (the app saves history writes in flight), killed
    when it has not ended after `timeout` seconds."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@dataclass
class AppProcess:
    data_dir: Path
    env: dict[str, str] = field(default_factory=dict)
    port: int = 0
    log_path: Path | None = None
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 120.0) -> AppProcess:
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if k not in _PROVIDER_VARS}
        env.update({"REQSTUDIO_DATA_DIR": str(self.data_dir), "PYTHONUNBUFFERED": "1"})
        # As scripts/run.sh does: stdio MCP servers (mcp-server-time) live next to chainlit.
        env["PATH"] = f"{CHAINLIT.parent}{os.pathsep}{env.get('PATH', '')}"
        env.update(self.env)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.data_dir / f"app-{self.port}.log"
        log = open(self.log_path, "wb")  # noqa: SIM115 - owned by the process
        self.process = subprocess.Popen(
            [str(CHAINLIT), "run", "app.py", "--headless", "--host", "127.0.0.1",
             "--port", str(self.port)],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        RUNNING.append(self)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"app exited early:\n{self.log()}")
            try:
                if httpx.get(self.url, timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"app did not answer in {timeout}s:\n{self.log()}")

    def stop(self) -> None:
        RUNNING[:] = [app for app in RUNNING if app is not self]
        if self.process:
            stop_gently(self.process)
        self.process = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path else ""

    def log_tail(self, lines: int = 80) -> str:
        return "\n".join(self.log().splitlines()[-lines:])


SHARED_SECRET = "test-shared-secret-" + "x" * 40  # instances sign with one secret (README)


def shared_database_env(env: dict[str, str], database_url: str) -> dict[str, str]:
    """`env` for instances that share one database and sign sign-ins with one secret."""
    return env | {"REQSTUDIO_DATABASE_URL": database_url, "CHAINLIT_AUTH_SECRET": SHARED_SECRET}


@contextmanager
def two_instances(folder: Path, env: dict[str, str]) -> Iterator[tuple[AppProcess, AppProcess]]:
    """Two app processes with `env` (data folders `folder`/a and `folder`/b), both stopped at
    the end."""
    first = AppProcess(folder / "a", env).start()
    try:
        second = AppProcess(folder / "b", env).start()
    except BaseException:
        first.stop()
        raise
    try:
        yield first, second
    finally:
        first.stop()
        second.stop()


@contextmanager
def running_app(data_dir: Path, env: dict[str, str]) -> Iterator[AppProcess]:
    """One app process with `env` and the data folder `data_dir`, stopped at the end (a test
    that restarts the app opens a second one on the same folder)."""
    process = AppProcess(data_dir, env).start()
    try:
        yield process
    finally:
        process.stop()
