"""Start-up as users do it: a bad setting stops the app with one line; the CLI works."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.apps import CHAINLIT, ROOT


def test_bad_setting_stops_startup_with_one_clear_line(tmp_path: Path):
    env = os.environ | {
        "AGENT_MAX_ITERATIONS": "42",
        "OPENAI_API_KEY": "sk-secret-value",
        "REQSTUDIO_DATA_DIR": str(tmp_path),
    }
    result = subprocess.run(
        [str(CHAINLIT), "run", "app.py", "--headless", "--port", "0"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode != 0
    output = result.stdout + result.stderr
    lines = [line for line in output.splitlines() if "AGENT_MAX_ITERATIONS" in line]
    assert lines == [
        'ReqStudio cannot start. Invalid setting AGENT_MAX_ITERATIONS="42": '
        "Input should be less than or equal to 10"
    ]
    assert "sk-secret-value" not in output


def test_cli_help_lists_commands():
    result = subprocess.run(
        [sys.executable, "-m", "reqstudio.cli", "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0
    assert "chat" in result.stdout


def test_cli_bad_setting_exits_2(tmp_path: Path):
    env = os.environ | {"OPENAI_BASE_URL": "not-a-url"}
    result = subprocess.run(
        [sys.executable, "-m", "reqstudio.cli", "chat", "hi"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip().startswith("reqstudio: Invalid setting OPENAI_BASE_URL=")
