"""Progress reporting (seed 003, section 4.2): the `ProgressCallbackHandler` protocol and the
CLI's handler that prints each report to stderr.

Stages, in order: `outline_generation`, `content_filling`, `review_revision`. Besides the
seed's three methods a handler may define `on_section_token(section_id, text)` to receive each
section's text as it streams, and `on_section_reset(section_id)` when a broken stream is written
again. Any method may be `async`; the engine awaits it.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any, Protocol, TextIO, runtime_checkable

STAGES = ("outline_generation", "content_filling", "review_revision")


@runtime_checkable
class ProgressCallbackHandler(Protocol):
    """The seed's progress protocol."""

    def on_stage_start(self, stage_name: str, **kwargs: Any) -> None:
        """A stage begins."""

    def on_stage_end(self, stage_name: str, **kwargs: Any) -> None:
        """A stage ended."""

    def on_stage_progress(self, stage_name: str, message: str, **kwargs: Any) -> None:
        """Finer progress inside a stage, e.g. "正在生成第 2/5 节..."."""


class CLICallbackHandler:
    """Seed 003 section 5.3: every report on stderr, the document alone on stdout."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream

    def _print(self, text: str) -> None:
        print(text, file=self.stream or sys.stderr, flush=True)

    def on_stage_start(self, stage_name: str, **kwargs: Any) -> None:
        self._print(f"INFO: Stage start: {stage_name}...")

    def on_stage_end(self, stage_name: str, **kwargs: Any) -> None:
        self._print(f"INFO: Stage end: {stage_name}.")

    def on_stage_progress(self, stage_name: str, message: str, **kwargs: Any) -> None:
        self._print(f"INFO: [{stage_name}] {message}")


async def notify(handler: Any, method: str, *args: Any, **kwargs: Any) -> None:
    """Call `handler.method(...)` if the handler has it, awaiting it when it is async."""
    if handler is None:
        return
    callback = getattr(handler, method, None)
    if callback is None:
        return
    outcome = callback(*args, **kwargs)
    if inspect.isawaitable(outcome):
        await outcome
