"""The browser's one renderer of the event union (`reqstudio.web.live`): the rules it applies
for every mode, seen on a screen that applies Chainlit's messages as its browser client does,
and every mode's browser flow showing its run through it."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from chainlit.context import ChainlitContext, context_var
from chainlit.emitter import BaseChainlitEmitter
from chainlit.session import HTTPSession

from reqstudio.events import Failed, Finished, Paused, StepFinished, StepReset, StepStarted, Token
from reqstudio.web.live import LiveRun, Look, Views

WEB = Path(__file__).resolve().parents[1] / "reqstudio" / "web"


class Screen(BaseChainlitEmitter):
    """Every step and message on screen by id: its name, its text, whether it has ended."""

    def __init__(self, session: HTTPSession):
        super().__init__(session)
        self.items: dict[str, dict[str, Any]] = {}

    def _show(self, step: dict[str, Any]) -> None:
        self.items[step["id"]] = {
            "name": step.get("name"),
            "type": step.get("type"),
            "text": step.get("output") or "",
            "ended": bool(step.get("end")),
        }

    async def send_step(self, step_dict):
        self._show(step_dict)

    async def update_step(self, step_dict):
        self._show(step_dict)

    async def stream_start(self, step_dict):
        self._show(step_dict)

    async def send_token(self, id, token, is_sequence=False, is_input=False):
        item = self.items[id]
        item["text"] = token if is_sequence else item["text"] + token

    def named(self, start: str) -> dict[str, Any]:
        (item,) = [i for i in self.items.values() if (i["name"] or "").startswith(start)]
        return item


def on_screen() -> Screen:
    session = HTTPSession(id="live-test", client_type="webapp", thread_id="t-1")
    session.language = "en-US"
    screen = Screen(session)
    context_var.set(ChainlitContext(session, screen))
    return screen


class DraftViews(Views):
    """A mode with one step per section ("plan" streams into its step) and a streamed
    document (the "write" step's tokens)."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    def look(self, event):
        return Look(f"Step {event.step}", "llm", "pen-line") if event.step == "plan" else None

    def into_step(self, event):
        return getattr(event, "step", "") == "plan" or getattr(event, "name", "") == "plan_token"

    def streams(self, event):
        return getattr(event, "step", "") == "write" or getattr(event, "name", "") == "draft"

    def output(self, event):
        return "the plan, as delivered" if event.step == "plan" else None

    async def show(self, event):
        self.shown.append(event.type)


async def test_a_step_opens_streams_drops_a_broken_try_and_ends_with_the_delivered_output():
    screen = on_screen()
    views = DraftViews()
    live = LiveRun(views)
    await live.show(StepStarted(step="plan"))
    step = screen.named("Step plan")
    assert not step["ended"]  # running while the model writes
    await live.show(Token(name="plan_token", text="a broken "))
    await live.show(Token(name="plan_token", text="try"))
    assert screen.named("Step plan")["text"] == "a broken try"
    await live.show(StepReset(step="plan"))  # the try broke off: what it showed goes
    assert screen.named("Step plan")["text"] == ""
    await live.show(Token(name="plan_token", text="second try"))
    await live.show(StepFinished(step="plan"))
    ended = screen.named("Step plan")
    assert ended["ended"] and ended["text"] == "the plan, as delivered"  # not the stream
    assert live.step is None
    assert views.shown == [
        "step_started",
        "token",
        "token",
        "step_finished",
        "token",
        "step_finished",
    ]


async def test_the_streamed_result_loses_a_broken_try_and_keeps_the_next():
    screen = on_screen()
    live = LiveRun(DraftViews())
    await live.show(Token(name="draft", text="# Half a docu"))
    await live.show(StepReset(step="write"))
    await live.show(Token(name="draft", text="# The document"))
    (result,) = [i for i in screen.items.values() if i["type"] == "assistant_message"]
    assert result["text"] == "# The document"


async def test_tokens_no_view_claims_show_nothing_and_the_ending_is_kept_for_the_flow():
    screen = on_screen()
    live = LiveRun(DraftViews())
    await live.show(Token(name="elsewhere", text="not for the page"))
    assert screen.items == {}
    failed = Failed(code="length", values={"limit": 10}, partial="kept")
    await live.show(failed)
    assert live.failed is failed and live.finished is None
    await live.show(Paused())
    assert live.paused is not None
    live.begin()  # a resumed run's stream is a new one
    assert live.failed is live.paused is None
    await live.show(Finished(result="done"))
    assert live.finished is not None


async def test_a_run_that_ends_while_a_step_is_open_leaves_it_ended_with_the_reason():
    screen = on_screen()
    live = LiveRun(DraftViews())
    await live.show(StepStarted(step="plan"))
    await live.show(Token(name="plan_token", text="half"))
    await live.close_step("stopped", note="Stopped.")
    step = next(iter(screen.items.values()))
    assert step["ended"] and step["text"].endswith("Stopped.")
    await live.close_step("stopped", note="again")  # nothing open: nothing happens
    assert len(screen.items) == 1


MODE_FLOWS = {
    "agent": "agent.py",
    "chat": "chat.py",
    "review": "review/flow.py",
    "rewrite": "rewrite/flow.py",
    "srs": "srs/flow.py",
    "team": "team.py",
}


def test_every_modes_browser_flow_shows_its_run_through_the_one_renderer():
    views_by_mode: dict[str, list[str]] = {}
    for path in WEB.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                getattr(b, "id", None) == "Views" for b in node.bases
            ):
                views_by_mode.setdefault(path.relative_to(WEB).parts[0], []).append(node.name)
    for mode, flow in MODE_FLOWS.items():
        source = (WEB / flow).read_text(encoding="utf-8")
        assert "LiveRun" in source or "_live(" in source, f"{mode}: its run is not shown by LiveRun"
        where = flow.split("/")[0]
        assert views_by_mode.get(where), f"{mode}: no Views of its own"
    # no mode keeps a renderer of its own beside its views
    for path in WEB.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"class \w*(RunView|Progress|Printer)\b", source), path


def test_no_browser_flow_makes_the_events_it_shows():
    """The events a flow shows are its engine's: a flow that turned engine callbacks into
    events itself (as Chat's did, beside the same conversion in its entry) could show what the
    engine never said. Token and reset events are made by the engines only."""
    for path in WEB.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None) or ""
                assert not re.fullmatch(r"[A-Z]\w*(Token|Restarted|Reset)", name), (
                    f"{path.relative_to(WEB)}:{node.lineno} makes {name}"
                )
