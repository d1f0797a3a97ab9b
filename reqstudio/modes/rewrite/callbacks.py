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
from reqstudio.messages import language_code, messages_under
from reqstudio.modes.rewrite.events import (
    SectionReset,
    SectionToken,
    StageFailed,
    StageFinished,
    StageProgress,
    StageStarted,
)
from reqstudio.progress import Progress, Said, Words

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


class RewriteWords(Words):
    """The run's stages in words on stderr (seed 003 section 5.3): `language` "en" (the
    default) gives the seed's lines, "zh" the same in Chinese. The progress messages come
    from the engine in the language the run was given."""

    def __init__(self, language: str = "en"):
        self.language = language_code(language)
        self.said = messages_under("cli.rewrite.stage", self.language)

    def lines(self, event: BaseEvent) -> Said:
        match event:
            case StageStarted(step=stage):
                return self.said["start"].format(stage=stage)
            case StageFinished(step=stage):
                return self.said["end"].format(stage=stage)
            case StageFailed(step=stage, section_id=section):
                where = self.said["where"].format(section_id=section) if section else ""
                reason = event.text(self.language)
                return self.said["error"].format(stage=stage, where=where, reason=reason)
            case StageProgress(step=stage, message=message):
                return f"INFO: [{stage}] {message}"
        return None


class CLICallbackHandler:
    """Seed 003 section 5.3: every report on stderr (in `RewriteWords`), the document alone
    on stdout; for a caller of `RewriteChain.invoke`, as the seed's handler."""

    def __init__(self, stream: TextIO | None = None, language: str = "en"):
        self.stream = stream
        self.words = RewriteWords(language)

    def _print(self, event: BaseEvent) -> None:
        Progress(self.words, log=self.stream or sys.stderr).show(event)

    def on_stage_start(self, stage_name: str, **kwargs: Any) -> None:
        self._print(StageStarted(step=stage_name, values=kwargs))

    def on_stage_end(self, stage_name: str, **kwargs: Any) -> None:
        self._print(StageFinished(step=stage_name, values=kwargs))

    def on_stage_error(self, stage_name: str, reason: str = "", **kwargs: Any) -> None:
        failure = kwargs.get("failure") or {}
        section = kwargs.get("section_id")
        self._print(
            StageFailed(step=stage_name, reason=reason, failure=failure, section_id=section)
        )

    def on_stage_progress(self, stage_name: str, message: str, **kwargs: Any) -> None:
        self._print(StageProgress(step=stage_name, message=message, values=kwargs))


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
