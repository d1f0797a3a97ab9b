"""`scripts/run.sh` runs `scripts/setup.sh` on every start: the install must run only when
something it installs from has changed, not on every start (a pip run of many seconds)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of what setup.sh reads, with a `.venv/bin/python` that only logs its arguments
    (the install itself is pip's business; what is checked is whether setup asks for it)."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    log = tmp_path / "python-calls.log"
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/usr/bin/env bash\necho "$*" >> {log}\n')
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    return tmp_path, log


def setup(folder: Path, **env: str) -> None:
    environment = {k: v for k, v in os.environ.items() if k not in ("EXTRAS", "CMAKE_ARGS")}
    subprocess.run(
        ["bash", "scripts/setup.sh"], cwd=folder, env=environment | env, check=True, timeout=60
    )


def installs(log: Path) -> list[str]:
    calls = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return [c for c in calls if "pip install" in c]


def test_a_second_start_installs_nothing(tmp_path: Path):
    folder, log = checkout(tmp_path)
    setup(folder)
    assert any("-e .[local]" in c for c in installs(log))
    setup(folder)
    assert installs(log) == []


def test_a_changed_pyproject_or_other_extras_install_again(tmp_path: Path):
    folder, log = checkout(tmp_path)
    setup(folder)
    installs(log)
    with open(folder / "pyproject.toml", "a") as pyproject:
        pyproject.write("\n# a dependency changed\n")
    setup(folder)
    assert any("-e .[local]" in c for c in installs(log))
    setup(folder, EXTRAS="dev")
    assert any("-e .[local,dev]" in c for c in installs(log))
    setup(folder)  # the installs for both stay recorded: switching back installs nothing
    setup(folder, EXTRAS="dev")
    assert installs(log) == []


def test_a_failed_install_is_tried_again(tmp_path: Path):
    folder, log = checkout(tmp_path)
    python = folder / ".venv" / "bin" / "python"
    python.write_text(f'#!/usr/bin/env bash\necho "$*" >> {log}\nexit 1\n')
    result = subprocess.run(["bash", "scripts/setup.sh"], cwd=folder, timeout=60)
    assert result.returncode != 0
    installs(log)
    python.write_text(f'#!/usr/bin/env bash\necho "$*" >> {log}\n')
    setup(folder)
    assert any("-e .[local]" in c for c in installs(log))
