"""Agent mode's view: what the browser shows when an answer try breaks off and is retried, or
fails for good. Real engine events (scripted server, real HTTP) go through `LiveRun` and `AgentViews` into
a screen that applies Chainlit's messages as its browser client does (a message id sent again
replaces the message; tokens append)."""

from __future__ import annotations

from typing import Any

import pytest
from chainlit.context import ChainlitContext, context_var
from chainlit.emitter import BaseChainlitEmitter
from chainlit.session import HTTPSession

from reqstudio.modes.agent import AgentConfig, Failed, ReactAgent
from reqstudio.web.agent import AgentViews
from reqstudio.web.live import LiveRun
from tests.scripted_server import Reply

ANSWER = "Write the final answer now"  # reqstudio/prompts/agent/answer_context.md
WHOLE = "ISO/IEC/IEEE 29148 replaced IEEE 830 in 2011; it covers the contents of an SRS [1]."


class Screen(BaseChainlitEmitter):
    """The messages on screen, by id, in the order they first appeared."""

    def __init__(self, session: HTTPSession):
        super().__init__(session)
        self.messages: dict[str, str] = {}
        self.seen: list[str] = []  # every state any message was in, in order

    def _set(self, id: str, text: str) -> None:
        self.messages[id] = text
        self.seen.append(text)

    def _show(self, step: dict[str, Any]) -> None:
        if step.get("type") == "assistant_message":
            self._set(step["id"], step.get("output") or "")

    async def send_step(self, step_dict):
        self._show(step_dict)

    async def update_step(self, step_dict):
        if step_dict["id"] in self.messages:
            self._show(step_dict)

    async def stream_start(self, step_dict):
        self._show(step_dict)

    async def send_token(self, id, token, is_sequence=False, is_input=False):
        if id in self.messages:
            self._set(id, token if is_sequence else self.messages[id] + token)


def on_screen() -> Screen:
    """A Chainlit context for this task whose emitter is the screen."""
    session = HTTPSession(id="agent-view-test", client_type="webapp", thread_id="t-1")
    shown = Screen(session)
    context_var.set(ChainlitContext(session, shown))
    return shown


async def show_run(factory) -> tuple[list[Any], Screen]:
    screen = on_screen()
    agent = ReactAgent(factory, [], AgentConfig(language="en", max_execution_time=20))
    live = LiveRun(AgentViews())
    events = []
    async for event in agent.run("Which standard replaced IEEE 830?"):
        events.append(event)
        await live.show(event)
    return events, screen


@pytest.mark.parametrize(
    "broken",
    [
        Reply(match=ANSWER, content=WHOLE, fault="truncated", chunk_chars=6),
        Reply(match=ANSWER, content=WHOLE, finish_reason="content_filter", chunk_chars=6),
    ],
    ids=["cut", "content_filter"],
)
async def test_a_retried_answer_shows_once_without_the_broken_try(llm_server, factory, broken):
    llm_server.script(Reply(content="Enough."), broken, Reply(match=ANSWER, content=WHOLE))
    _, screen = await show_run(factory)
    holding = [text for text in screen.messages.values() if "29148" in text]
    assert holding == [WHOLE]
    # while it streamed, the answer never showed the broken try joined to the new one
    answer_states = [text for text in screen.seen if text.startswith("ISO")]
    assert all(WHOLE.startswith(text) for text in answer_states), answer_states


async def test_a_failed_answer_shows_what_was_written_once_with_the_notice(llm_server, factory):
    llm_server.script(
        Reply(content="Enough."),
        *[Reply(match=ANSWER, content=WHOLE, finish_reason="content_filter")] * 3,
    )
    events, screen = await show_run(factory)
    failed = next(e for e in events if isinstance(e, Failed))
    assert failed.partial_answer == WHOLE
    holding = [text for text in screen.messages.values() if "29148" in text]
    assert len(holding) == 1, screen.messages  # the partial answer is not repeated
    assert holding[0].startswith(WHOLE) and "content_filter" in holding[0]
    assert holding[0].count("29148") == 1
