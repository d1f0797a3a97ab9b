"""Shared by the ReqIF and diff tests: the samples, the schema, and `reqstudio` run as a command
(no model server: import, export and diff call no model)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "reqif"
SAMPLES = sorted((DATA / "samples").glob("*.reqif"))
SCHEMA = DATA / "schema" / "reqif.xsd"
REQSTUDIO = [sys.executable, "-c", "from reqstudio.entry import run; run()"]


def schema():
    import xmlschema

    return xmlschema.XMLSchema(str(SCHEMA), base_url=str(SCHEMA.parent))


def schema_errors(path: Path) -> list[str]:
    return [str(error) for error in schema().iter_errors(str(path))]


def reqstudio(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REQSTUDIO_"))}
    env.update(PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8", REQSTUDIO_DATA_DIR=str(cwd))
    return subprocess.run(
        [*REQSTUDIO, *[str(a) for a in args]],
        cwd=cwd, env=env, capture_output=True, text=True, encoding="utf-8", timeout=120,
    )  # fmt: skip
