"""What a failed command-line run leaves behind.

A run that fails after the model has worked (a partial answer, the requirements parsed so
far, the interaction log) writes that work to `<data dir>/failed-runs/` (else the temp
folder), and the command names the file in one line on stderr. Nothing there is ever taken
for a result: every record says `"complete": false` and why the run failed.
"""

from __future__ import annotations

import json
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FOLDER = "failed-runs"


def _write(name: str, text: str, data_dir: Path) -> Path:
    problem: OSError | None = None
    for folder in (data_dir / FOLDER, Path(tempfile.gettempdir()) / f"reqstudio-{FOLDER}"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / name
            path.write_text(text, encoding="utf-8")
            return path.resolve()
        except OSError as exc:
            problem = exc
    assert problem is not None
    raise problem


def keep_failed_run(
    data_dir: Path, mode: str, record: dict[str, Any], documents: dict[str, str] | None = None
) -> list[Path]:
    """Write the failed run's `record` (JSON) and any partial `documents` ({suffix: text},
    e.g. {".partial.md": ...}; empty texts are skipped) under one stamped name. Returns the
    files written, the record first."""
    stem = f"{mode}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    body = {"mode": mode, "complete": False, **record}
    paths = [_write(f"{stem}.json", json.dumps(body, ensure_ascii=False, indent=2), data_dir)]
    for suffix, text in (documents or {}).items():
        if text.strip():
            paths.append(_write(f"{stem}{suffix}", text, data_dir))
    return paths


def kept_line(paths: list[Path]) -> str:
    """The one stderr line naming what was kept."""
    return "reqstudio: what the run produced is kept (not complete) in " + ", ".join(
        str(p) for p in paths
    )


def keep_and_say(
    data_dir: Path,
    mode: str,
    record: dict[str, Any],
    documents: dict[str, str] | None = None,
    *,
    what: str = "what the run produced",
) -> None:
    """`keep_failed_run`, then the line naming the files on stderr (or why nothing was kept)."""
    try:
        kept = keep_failed_run(data_dir, mode, record, documents)
    except OSError as problem:
        print(f"reqstudio: could not keep {what} ({problem})", file=sys.stderr, flush=True)
        return
    print(kept_line(kept), file=sys.stderr, flush=True)
