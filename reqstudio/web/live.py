"""The browser's one renderer of the event union (`reqstudio.events`): every mode's run is
shown by handing each event to `LiveRun.show`, as the command line hands it to
`reqstudio.progress.Progress`.

What is the same for every mode is done here:

- a step a mode gives a look for (`Views.look`: its title, kind and icon) opens as a running
  top-level step when its `step_started` arrives; the tokens a mode says belong to it
  (`Views.into_step`) stream into it, its reset (`outcome` "reset") clears what its broken try
  showed, and its `step_finished` ends it with the output the mode gives (`Views.output`);
- the text a mode streams as its result (`Views.streams`: an SRS document, a Rewrite draft)
  goes into one top-level message, `result`, token by token; its reset empties it;
- the stream's ending is kept for the flow to act on: `failed`, `finished`, `paused`;
- `close_step` ends the open step however the run ends (failed, stopped), with a note.

What a mode's events show is the mode's own: its `Views`, in the mode's web package, which
also shows what the shared rules do not cover (`Views.show`, called for every event after the
rules above). The engines know nothing of this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import chainlit as cl

from reqstudio.events import BaseEvent, StreamEnding
from reqstudio.web.session import finish_step, open_top_level_step, top_level_message


@dataclass(frozen=True)
class Look:
    """How a step shows: its title, its kind (`llm`, `tool`, `run`) and its Lucide icon."""

    name: str
    kind: str = "llm"
    icon: str | None = None


class Views:
    """A mode's browser views of its events. Subclasses override what they need; `live` is
    the run they show in (set by `LiveRun`)."""

    live: LiveRun

    def look(self, event: BaseEvent) -> Look | None:
        """The step a `step_started` event opens, or None (the mode shows it itself)."""
        return None

    def into_step(self, event: BaseEvent) -> bool:
        """Whether a token (or a reset) belongs to the open step."""
        return False

    def streams(self, event: BaseEvent) -> bool:
        """Whether a token (or a reset) belongs to the run's streamed result message."""
        return False

    def output(self, event: BaseEvent) -> str | None:
        """What the open step shows when this `step_finished` ends it, or None (it stays)."""
        return None

    async def show(self, event: BaseEvent) -> None:
        """Whatever else the event shows."""


class LiveRun(StreamEnding):
    def __init__(self, views: Views):
        self.views = views
        views.live = self
        self.step: cl.Step | None = None  # the open step
        self.result: cl.Message = top_level_message()  # the streamed result

    def new_result(self) -> cl.Message:
        """A new result message, to sit below what the run has shown so far."""
        self.result = top_level_message()
        return self.result

    async def open_step(self, look: Look, **options: Any) -> cl.Step:
        self.step = await open_top_level_step(look.name, look.kind, icon=look.icon, **options)
        return self.step

    async def close_step(
        self,
        outcome: str = "done",
        *,
        output: str | None = None,
        note: str | None = None,
        name: str | None = None,
    ) -> None:
        """End the open step, if one is open: its title says how (done, failed, stopped)."""
        step, self.step = self.step, None
        await finish_step(step, outcome, name=name, output=output, note=note)

    async def show(self, event: BaseEvent) -> None:
        views = self.views
        resets = getattr(event, "outcome", None) == "reset"
        if event.type == "step_started" and (look := views.look(event)) is not None:
            await self.open_step(look)
        elif event.type == "token" and views.streams(event):
            await self.result.stream_token(event.text)  # type: ignore[attr-defined]
        elif event.type == "token" and views.into_step(event) and self.step is not None:
            await self.step.stream_token(event.text)  # type: ignore[attr-defined]
        elif resets and views.streams(event):
            self.result.content = ""
            await self.result.update()
        elif resets and views.into_step(event):
            if self.step is not None and self.step.output:
                self.step.output = ""
                await self.step.update()
        elif event.type == "step_finished" and not resets and self.step is not None:
            output = views.output(event)
            if output is not None:
                await self.close_step(output=output)
        self.keep_ending(event)
        await views.show(event)

    def begin(self) -> None:
        """Forget the last stream's ending (a resumed run's stream is a new one)."""
        self.forget_ending()
