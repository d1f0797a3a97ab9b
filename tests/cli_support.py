"""Running `reqstudio` in a fresh process against the scripted model server: the command, its
environment (nothing of the caller's provider, mode or data settings) and one call."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The installed `reqstudio` command's entry point. (Not `python -m reqstudio.cli`: that loads
# the module twice, as __main__ and as reqstudio.cli, and its UsageError would not be caught.)
REQSTUDIO = [sys.executable, "-c", "from reqstudio.entry import run; run()"]
TEST_KEY = "sk-test-not-a-real-key"
# The caller's settings that would change a run: left out of the command's environment.
CLEARED = ("OPENAI_", "AGENT_", "REQSTUDIO_", "TEAM_", "SRS_")
# Short timeouts and retry waits of milliseconds, for tests that meet faults.
QUICK = {"OPENAI_TIMEOUT": "10", "REQSTUDIO_RETRY_BACKOFF_SCALE": "0.01"}


def cli_env(base_url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a command pointed at `base_url`, its data under `tmp_path`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED)}
    env.update(
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY=TEST_KEY,
        OPENAI_MODEL="scripted-model",
        REQSTUDIO_DATA_DIR=str(tmp_path / "data"),
        PYTHONIOENCODING="utf-8",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


def run_reqstudio(
    base_url: str,
    tmp_path: Path,
    *args: object,
    cwd: Path | None = None,
    timeout: float = 120,
    env: dict[str, str] | None = None,
    command: Sequence[str] = REQSTUDIO,
    **extra: str,
) -> subprocess.CompletedProcess:
    """`reqstudio ARGS` (or `command` ARGS) to its end, in `cwd` (default `tmp_path`, where no
    stray .env is read), with `cli_env(base_url, tmp_path, **extra)` unless `env` is given
    whole."""
    return subprocess.run(
        [*command, *[str(a) for a in args]],
        cwd=cwd or tmp_path,
        env=cli_env(base_url, tmp_path, **extra) if env is None else env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
    )


def require_offline_model() -> None:
    """Fail (not skip) a test of the bundled offline model where it is not installed: the
    README's test command installs it, so its absence means less would be tested."""
    from reqstudio.local_model import EmbeddedModelUnavailable, find_model_file

    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("llama_cpp is not importable: run ./scripts/test.sh (or scripts/setup.sh)")
    try:
        find_model_file()
    except EmbeddedModelUnavailable as error:
        pytest.fail(f"{error}: run ./scripts/test.sh (or scripts/setup.sh)")


def run_with_embedded_model(
    tmp_path: Path, *args: object, timeout: float, **extra: str
) -> subprocess.CompletedProcess:
    """The installed `reqstudio ARGS` with no provider set, so that it starts the bundled
    offline model itself (the test fails where the model is not installed)."""
    require_offline_model()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REQSTUDIO_"))}
    env.update(REQSTUDIO_DATA_DIR=str(tmp_path / "data"), PYTHONIOENCODING="utf-8", **extra)
    installed = [str(Path(sys.executable).with_name("reqstudio"))]
    return run_reqstudio("", tmp_path, *args, timeout=timeout, env=env, command=installed)


def ctrl_c(process: subprocess.Popen) -> None:
    """Ctrl-C to a command the test started, as a terminal sends it. The command must have
    been started able to get it: a process started with SIGINT ignored or blocked (inherited
    from the test process, see `tests/conftest.py`) would run on, and the test would measure
    something else than Ctrl-C."""
    status = Path(f"/proc/{process.pid}/status").read_text()
    masks = dict(line.split(":\t") for line in status.splitlines() if line.startswith("Sig"))
    bit = 1 << (signal.SIGINT - 1)
    assert not int(masks["SigIgn"], 16) & bit, "the command was started with SIGINT ignored"
    assert not int(masks["SigBlk"], 16) & bit, "the command was started with SIGINT blocked"
    process.send_signal(signal.SIGINT)
