"""The command line's one renderer of the event union (`reqstudio.progress`): what it does
for every mode, and that every mode's command shows its run through it."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest

from reqstudio import events as core
from reqstudio.progress import Inline, Progress, Words

ROOT = Path(__file__).resolve().parent.parent
MODES = sorted(p.name for p in (ROOT / "reqstudio" / "modes").iterdir() if (p / "cli.py").exists())


class StreamedToken(core.Token):
    name: str = "streamed"


class Other(core.Token):
    name: str = "other"


class Reset(core.StepReset):
    name: str = "reset"


class Said(Words):
    def streams(self, event):
        return event.name in ("streamed", "reset")

    def lines(self, event):
        match event:
            case core.StepStarted(step=step):
                return f"[{step}] ..."
            case Other(text=text):
                return Inline(text)
            case core.StepFinished(step=step, outcome="done"):
                return [f"[{step}] done", "  and a second line"]
        return None

    def answer(self, event):
        return f"{event.result}\n" if event.type == "finished" else None


def shown(events: list[core.BaseEvent], **options) -> tuple[Progress, str, str]:
    log, out = io.StringIO(), io.StringIO()
    progress = Progress(Said(), log=log, out=out, **options)
    for event in events:
        progress.show(event)
    return progress, log.getvalue(), out.getvalue()


RUN = [
    core.StepStarted(step="write"),
    StreamedToken(text="broken "),
    Reset(step="write"),
    StreamedToken(text="whole "),
    StreamedToken(text="text"),
    Other(text="thinking…"),
    core.StepFinished(step="write"),
    core.Finished(result="the answer"),
]


def test_lines_go_to_stderr_and_a_streamed_try_that_broke_is_dropped():
    progress, log, out = shown(RUN, live=False)
    assert log == "[write] ...\nthinking…[write] done\n  and a second line\n"
    assert out == "the answer\n"  # not live: the streamed text is the command's to write
    assert progress.text == "whole text"
    assert progress.finished.result == "the answer"
    assert progress.failed is None and progress.paused is None


def test_live_the_streamed_text_goes_to_stdout_as_it_comes():
    progress, _, out = shown(RUN, live=True)
    assert out == "broken whole textthe answer\n"  # a terminal saw the broken try go by
    assert progress.text == "whole text"  # what the run keeps is the whole try only


def test_quiet_keeps_progress_back_but_not_what_the_command_says():
    progress, log, _ = shown(RUN, quiet=True)
    assert log == ""
    progress.note("done: 1 thing")
    progress.say("reqstudio: the error")
    assert progress.log.getvalue() == "reqstudio: the error\n"


def test_the_ending_is_kept_and_a_new_stream_forgets_it():
    progress, _, _ = shown(
        [core.Paused(), core.Failed(code="cut", values={"n": 1}, partial="half")]
    )
    assert progress.paused is not None and progress.failed.partial == "half"
    progress.begin()
    assert progress.paused is None and progress.failed is None and progress.text == ""


def words_classes(mode: str) -> list[str]:
    """The classes in the mode's package that subclass `Words`."""
    found = []
    for path in (ROOT / "reqstudio" / "modes" / mode).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(base, ast.Name) and base.id == "Words" for base in node.bases
            ):
                found.append(node.name)
    return found


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_command_shows_its_run_through_the_one_renderer(mode):
    """Each mode gives its words (a `Words` class in its package) and its command builds a
    `Progress` of them; none writes an event's lines itself."""
    assert MODES == ["agent", "chat", "review", "rewrite", "srs", "team"]
    assert words_classes(mode), f"{mode}: no Words class"
    source = (ROOT / "reqstudio" / "modes" / mode / "cli.py").read_text(encoding="utf-8")
    assert "Progress(" in source, f"{mode}: its command does not use reqstudio.progress"
    tree = ast.parse(source)
    printers = [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name.endswith(("Printer", "Handler"))
    ]
    assert printers == [], f"{mode}: a printer of its own: {printers}"
