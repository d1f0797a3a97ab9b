"""Progress reporting (seed 003, section 4.2): the `ProgressCallbackHandler` protocol and the
CLI's handler that prints each report to stderr.

Stages, in order: `outline_generation`, `content_filling`, `review_revision`. Every
`on_stage_start` is followed by `on_stage_end` or, when the stage fails or the run is cancelled,
`on_stage_error(stage_name, reason=..., error=..., section_id=...)`; a handler without
`on_stage_error` gets `on_stage_end(stage_name, failed=True, reason=..., ...)` instead. Besides
these a handler may define `on_section_token(section_id, text)` to receive each section's text
as it streams, and `on_section_reset(section_id)` when a broken stream is written again. Any
method may be `async`; the engine awaits it.

The engine itself emits the one event union (`reqstudio.modes.rewrite.events`); `deliver`
turns each event into the call above.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any, Protocol, TextIO, runtime_checkable

from reqstudio.events import BaseEvent
from reqstudio.failures import said_or
from reqstudio.messages import language_code, messages_under
from reqstudio.modes.rewrite.events import (
    SectionReset,
    SectionToken,
    StageFailed,
    StageFinished,
    StageProgress,
    StageStarted,
)

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
    """Seed 003 section 5.3: every report on stderr, the document alone on stdout.

    `language` "en" (the default) prints the seed's lines; "zh" prints them in Chinese. The
    progress messages come from the engine in the language the run was given."""

    def __init__(self, stream: TextIO | None = None, language: str = "en"):
        self.stream = stream
        self.language = language_code(language)
        self.lines = messages_under("cli.rewrite.stage", self.language)

    def _print(self, text: str) -> None:
        print(text, file=self.stream or sys.stderr, flush=True)

    def on_stage_start(self, stage_name: str, **kwargs: Any) -> None:
        self._print(self.lines["start"].format(stage=stage_name))

    def on_stage_end(self, stage_name: str, **kwargs: Any) -> None:
        self._print(self.lines["end"].format(stage=stage_name))

    def on_stage_error(self, stage_name: str, reason: str = "", **kwargs: Any) -> None:
        section = kwargs.get("section_id")
        where = self.lines["where"].format(section_id=section) if section else ""
        reason = said_or(kwargs.get("failure") or {}, reason, self.language)
        self._print(self.lines["error"].format(stage=stage_name, where=where, reason=reason))

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


async def deliver(handler: Any, event: BaseEvent) -> None:
    """Hand one of the run's events to a `ProgressCallbackHandler` as the seed's call: the
    protocol is an adapter over the one event stream."""
    if handler is None:
        return
    if isinstance(event, StageStarted):
        await notify(handler, "on_stage_start", event.step, **event.values)
    elif isinstance(event, StageFinished):
        await notify(handler, "on_stage_end", event.step, **event.values)
    elif isinstance(event, StageFailed):
        await notify_stage_error(
            handler,
            event.step,
            reason=event.reason,
            failure=event.failure,
            error=event.error,
            section_id=event.section_id,
        )
    elif isinstance(event, StageProgress):
        await notify(handler, "on_stage_progress", event.step, event.message, **event.values)
    elif isinstance(event, SectionToken):
        await notify(handler, "on_section_token", event.section_id, event.text)
    elif isinstance(event, SectionReset):
        await notify(handler, "on_section_reset", event.section_id)


async def notify_stage_error(handler: Any, stage_name: str, **kwargs: Any) -> None:
    """`on_stage_error`, or for a handler of the seed's three methods `on_stage_end` with
    `failed=True`: either way the stage it was told about ends visibly."""
    if handler is None:
        return
    if getattr(handler, "on_stage_error", None) is not None:
        await notify(handler, "on_stage_error", stage_name, **kwargs)
    else:
        await notify(handler, "on_stage_end", stage_name, failed=True, **kwargs)
