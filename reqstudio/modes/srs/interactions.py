"""The interaction log of one SRS run (seed 000's `logs`), kept out of the checkpointed state.

In the graph state the log was copied into every checkpoint, so each ReqClarify prompt (which
holds the whole reference SRS) was stored again after every node: a 1.5 MB reference made a
114 MB checkpoint database in one run. Here every entry is stored once: in memory, and, for a
run that can be resumed, appended as one JSON line to `<folder>/<run>.jsonl`. The state keeps
only how many entries belong to completed nodes (`log_count`), so a resumed run reads back
exactly those.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any


def _file_name(run_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", run_id) + ".jsonl"


class InteractionLog:
    def __init__(self, folder: Path | None = None, run_id: str | None = None):
        self.entries: list[dict[str, Any]] = []
        self.path = folder / _file_name(run_id) if folder is not None and run_id else None

    def load(self, count: int) -> None:
        """Read back the first `count` entries saved by an earlier part of this run (entries
        of a node that did not complete are dropped: it runs again)."""
        self.entries = []
        if self.path is None or not self.path.is_file():
            return
        with self.path.open(encoding="utf-8") as handle:
            for line in handle:
                if len(self.entries) == count:
                    break
                if line.strip():
                    self.entries.append(json.loads(line))
        self._rewrite()

    def append(self, entry: dict[str, Any]) -> int:
        self.entries.append(entry)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
        return len(self.entries)

    def discard(self) -> None:
        """The run finished and its result carries the log: the file is no longer needed."""
        if self.path is not None:
            self.path.unlink(missing_ok=True)

    def _rewrite(self) -> None:
        if self.path is not None and self.path.is_file():
            with self.path.open("w", encoding="utf-8") as handle:
                for entry in self.entries:
                    handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
