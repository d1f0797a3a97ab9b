"""Start-up as users do it: a bad setting stops the app with one line; the CLI works."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.apps import CHAINLIT, ROOT


def start_app(tmp_path: Path, **settings: str) -> str:
    """`chainlit run app.py` with `settings` (and a secret key that must not be printed) until
    it stops; what it printed."""
    env = (
        os.environ
        | settings
        | {
            "OPENAI_API_KEY": "sk-secret-value",
            "REQSTUDIO_DATA_DIR": str(tmp_path),
        }
    )
    result = subprocess.run(
        [str(CHAINLIT), "run", "app.py", "--headless", "--port", "0"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "Traceback" not in output and "sk-secret-value" not in output
    return output


def test_bad_setting_stops_startup_with_one_clear_line(tmp_path: Path):
    output = start_app(tmp_path, AGENT_MAX_ITERATIONS="42")
    lines = [line for line in output.splitlines() if "AGENT_MAX_ITERATIONS" in line]
    assert lines == [
        'ReqStudio cannot start. Invalid setting AGENT_MAX_ITERATIONS="42": '
        "Input should be less than or equal to 10"
    ]


def test_invalid_json_in_a_setting_stops_the_app_with_one_line(tmp_path: Path):
    output = start_app(tmp_path, AGENT_PRICES="{oops")
    assert [line for line in output.splitlines() if "AGENT_PRICES" in line] == [
        "ReqStudio cannot start. Invalid setting AGENT_PRICES: not valid JSON "
        "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"
    ]


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
