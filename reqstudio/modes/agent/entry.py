"""Agent mode behind the one entry shape (`reqstudio.events.RunEntry`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from pydantic import BaseModel, Field

from reqstudio.events import BaseEvent, Failed, Finished, Started, unsaved_entry
from reqstudio.llm import ModelFactory
from reqstudio.modes.agent.engine import ReactAgent
from reqstudio.modes.agent.events import AnswerFinished
from reqstudio.modes.agent.state import AgentConfig


class AgentRequest(BaseModel):
    question: str
    history: list[dict[str, Any]] = Field(default_factory=list)  # prior turns


async def _events(
    request: AgentRequest,
    models: ModelFactory,
    thread_id: str | None,
    tools: Sequence[Any] = (),
    config: AgentConfig | None = None,
) -> AsyncIterator[BaseEvent]:
    agent = ReactAgent(models, list(tools), config or AgentConfig.from_settings(models.settings))
    yield Started(name="started", thread_id=thread_id)
    answer: str | None = None
    failed = False
    async for event in agent.run(request.question, request.history or None):
        if isinstance(event, AnswerFinished):
            answer = event.text
        failed = failed or isinstance(event, Failed)
        yield event
    if not failed:
        yield Finished(name="finished", result=answer)


run = unsaved_entry(
    _events,
    "Agent mode has no saved runs to resume",
    """`Started`, `ReactAgent.run`'s events (its `Stats` last, also after a failure), then
    `Finished` with the answer unless the run failed. Agent mode keeps its memory in the chat
    session, not in a checkpointer: `checkpointer` and `resume` are not used. `options`:
    `tools` and `config` (an `AgentConfig`).""",
)
