"""What the browser shows of a rewrite's endings: the engine runs
for real against the scripted server; Chainlit's steps and messages are stand-ins that record
what the page would show."""

from __future__ import annotations

from typing import Any

import pytest

import reqstudio.web.live as live_ui
import reqstudio.web.rewrite.flow as rewrite_ui
import reqstudio.web.rewrite.progress as progress_ui
from reqstudio.modes.rewrite import (
    RewriteChain,
    RewriteStageError,
)
from tests.rewrite_support import (
    BODIES,
    FILL,
    english_request,
    fill_replies,
    outline_reply,
    review_reply,
)
from tests.scripted_server import Reply

REQUEST = english_request()


class ShownStep:
    def __init__(self, name: str) -> None:
        self.name, self.output, self.is_error, self.updates = name, "", False, 0

    async def update(self) -> None:
        self.updates += 1

    async def stream_token(self, text: str) -> None:
        self.output += text


class ShownMessage:
    def __init__(self, content: str = "") -> None:
        self.content, self.elements, self.actions = content, [], []

    async def send(self) -> None:
        sent.append(self)

    async def update(self) -> None:
        pass

    async def stream_token(self, text: str) -> None:
        self.content += text


steps: list[ShownStep] = []
sent: list[ShownMessage] = []


@pytest.fixture(autouse=True)
def page(monkeypatch):
    steps.clear()
    sent.clear()

    async def open_step(name: str, kind: str, **kwargs: Any) -> ShownStep:
        steps.append(ShownStep(name))
        return steps[-1]

    async def nothing(*args: Any, **kwargs: Any) -> None:
        return None

    monkeypatch.setattr(progress_ui, "open_top_level_step", open_step)
    monkeypatch.setattr(live_ui, "open_top_level_step", open_step)
    monkeypatch.setattr(live_ui, "top_level_message", ShownMessage)
    monkeypatch.setattr(rewrite_ui, "top_level_message", ShownMessage)
    monkeypatch.setattr(rewrite_ui, "persist_thread_state", nothing)

    async def files(*args: Any, **kwargs: Any) -> list[str]:
        return ["files"]

    monkeypatch.setattr(rewrite_ui, "downloads", files)


async def test_an_incomplete_rewrite_names_the_sections_not_patched(factory, llm_server):
    sharper = "The system lets owners book visits; vets see their schedule; nothing else.\n"
    llm_server.script(
        outline_reply(),
        *fill_replies(),
        review_reply(("sec-01", "Too vague."), ("sec-03", "SMS provider unnamed.")),
        Reply(content=sharper, match="[sec-01] Overview (heading"),
        *[Reply(content="", match="[sec-03] Payment and reminders (heading") for _ in range(5)],
    )
    live = progress_ui.rewrite_live()
    progress = live.views
    result = await RewriteChain(factory).arun(REQUEST, live.show)
    await rewrite_ui.finish(progress, result, 1.0)
    review_step = steps[-1]
    assert review_step.name == "③ Review · round 1 · failed"  # a patch failed: says so
    assert "Could not patch “Payment and reminders” (sec-03); it stays as before" in (
        review_step.output
    )
    assert "Patched “Overview”" in review_step.output
    summary = sent[-1]
    assert summary.content.startswith(
        "❌ Rewrite incomplete: these sections could not be patched and stay as drafted: "
        "sec-03「Payment and reminders」."
    )
    assert not summary.content.startswith("✅")


async def test_a_failed_section_closes_its_step_as_an_error_naming_the_finish_reason(
    factory, llm_server
):
    llm_server.script(
        outline_reply(),
        Reply(content=BODIES[0], match=FILL),
        *[
            Reply(content="Owners pick", match=FILL, finish_reason="content_filter")
            for _ in range(5)
        ],
    )
    live = progress_ui.rewrite_live()
    progress = live.views
    with pytest.raises(RewriteStageError):
        await RewriteChain(factory).arun(REQUEST, live.show)
    filling = steps[-1]
    assert filling.name == "② Sections · failed"
    assert filling.is_error
    assert (
        "This stage failed at section sec-02 “Booking”: the provider's content filter stopped "
        "the answer (`finish reason: " in (filling.output)
    )
    assert progress.step is None  # closed: the page no longer shows it running


async def test_a_review_a_reviewer_failed_in_is_never_no_issues_found(factory, llm_server):
    from reqstudio.modes.review.rewrite_panel import panel_reviewer
    from tests.review_support import BLUE, CLIENT, JUDGE, RED, fenced

    judge_low = {
        "prioritized_improvements": [
            {"priority": 3, "agent_id": "sec-03", "task": "polish wording", "rationale": "x"}
        ],
        "consensus_issues": [],
        "conflicting_views": [],
    }
    llm_server.script(
        outline_reply(),
        *fill_replies(),
        *[Reply(fault="500", match=RED)] * 3,
        Reply(content=fenced({"keep_as_is": [], "enhancement_suggestions": []}), match=BLUE),
        Reply(
            content=fenced(
                {"business_gaps": [], "market_concerns": [], "feasibility_concerns": []}
            ),
            match=CLIENT,
        ),
        Reply(content=fenced(judge_low), match=JUDGE),
    )
    live = progress_ui.rewrite_live()
    progress = live.views
    result = await RewriteChain(factory, reviewer=panel_reviewer(factory)).arun(REQUEST, live.show)
    await rewrite_ui.finish(progress, result, 1.0)
    review_step = steps[-1]
    assert "No issues found" not in review_step.output
    assert "⚠️ Red team could not review; this round is no pass:" in review_step.output
    assert "not every reviewer could review: this round is no pass" in review_step.output
    summary = sent[-1].content
    assert summary.startswith(
        "⚠️ Rewrite finished without a pass: not every reviewer could review (1: Red team)."
    )
    assert "✅" not in summary
