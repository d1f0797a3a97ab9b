"""The command line's one renderer of the event union (`reqstudio.events`): every mode's
command shows its run by handing each event to `Progress.show`.

What is the same for every mode is done here:

- a mode's words for an event are written to stderr as lines, as they come, flushed; an
  `Inline` piece is written as it is, without a line break (a model's thinking, token by
  token);
- the text a mode gives as its answer (`Words.answer`) goes to stdout, flushed;
- the text a mode streams as its result (`Words.streams`: a Chat answer, an SRS document) is
  kept for the current try and, when `live` (a terminal; a pipe gets the finished text from
  the command), written to stdout as it comes; a step that starts again (`outcome` "reset")
  drops what its broken try had written;
- the stream's ending is kept for the command to act on: `failed`, `finished`, `paused`;
- `quiet` keeps the progress lines back (what the command itself says of an ending, its
  errors above all, is not progress and is not kept back).

What a mode's events say is the mode's own: its `Words`, in the mode's CLI package, next to
the command that uses them. A mode's words read `type` and the mode's own fields; an event a
mode has nothing to say about gives None.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TextIO

from reqstudio.events import BaseEvent, StreamEnding


class Inline(str):
    """Words written to stderr as they are, with no line break after them."""


Said = str | Iterable[str] | None


class Words:
    """A mode's words for its events. Subclasses override what they need."""

    def lines(self, event: BaseEvent) -> Said:
        """The progress lines `event` gives on stderr (a string, several, or None)."""
        return None

    def answer(self, event: BaseEvent) -> str | None:
        """Text `event` gives to stdout at once (an answer delivered whole), or None."""
        return None

    def streams(self, event: BaseEvent) -> bool:
        """Whether `event` is a token of the streamed result (kept, and shown when live), or
        the reset of the step that streams it (what its try wrote is dropped)."""
        return False


@dataclass
class Progress(StreamEnding):
    words: Words
    live: bool = False
    quiet: bool = False
    log: TextIO = field(default_factory=lambda: sys.stderr)
    out: TextIO = field(default_factory=lambda: sys.stdout)
    streamed: list[str] = field(default_factory=list)  # the streamed result's current try

    @property
    def text(self) -> str:
        """What the streamed result's current try has written so far."""
        return "".join(self.streamed)

    def show(self, event: BaseEvent) -> None:
        if event.type == "token" and self.words.streams(event):
            self.streamed.append(event.text)  # type: ignore[attr-defined]
            if self.live:
                self.write_out(event.text)  # type: ignore[attr-defined]
        elif getattr(event, "outcome", None) == "reset" and self.words.streams(event):
            self.streamed.clear()
        self.keep_ending(event)
        answer = self.words.answer(event)
        if answer is not None:
            self.write_out(answer)
        self.note(self.words.lines(event))

    def note(self, said: Said) -> None:
        """Progress the command says itself (a run's last line): as `say`, unless `quiet`."""
        if not self.quiet:
            self.say(said)

    def say(self, said: Said) -> None:
        """Write `said` to stderr (lines; an `Inline` piece as it is), even when `quiet`."""
        if said is None:
            return
        for piece in [said] if isinstance(said, str) else said:
            if isinstance(piece, Inline):
                self.log.write(piece)
                self.log.flush()
            else:
                print(piece, file=self.log, flush=True)

    def write_out(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def begin(self) -> None:
        """Forget the last stream's ending (a resumed run's stream is a new one)."""
        self.forget_ending()
        self.streamed.clear()
