"""Chat mode behind the one entry shape (`reqstudio.events.RunEntry`).

A chat turn is one streamed answer: `Started`, `AnswerToken`s (an `AnswerRestarted` when a
broken try starts again), then `Finished` with the whole answer or `Failed` with the error and
the answer so far."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Literal

from pydantic import BaseModel, Field

from reqstudio import events as core
from reqstudio.llm import ModelFactory
from reqstudio.modes.chat.engine import ChatEngine, ChatMemory


class ChatRequest(BaseModel):
    text: str
    history: list[dict[str, Any]] = Field(default_factory=list)  # ChatMemory.dump()


class AnswerToken(core.Token):
    name: Literal["answer_token"] = "answer_token"


class AnswerRestarted(core.StepReset):
    """A try broke off; the answer starts again (drop what was shown)."""

    name: Literal["answer_restarted"] = "answer_restarted"
    step: str = "answer"
    attempt: int


class AnswerFinished(core.Finished):
    name: Literal["answer_finished"] = "answer_finished"
    result: str


class AnswerFailed(core.Failed):
    name: Literal["answer_failed"] = "answer_failed"
    error: Any = Field(default=None, exclude=True)
    partial: str = ""


async def _events(
    request: ChatRequest, models: ModelFactory, thread_id: str | None
) -> AsyncIterator[core.BaseEvent]:
    engine = ChatEngine(models)
    queue: asyncio.Queue[core.BaseEvent | None] = asyncio.Queue()
    shown: list[str] = []

    async def on_token(text: str) -> None:
        shown.append(text)
        await queue.put(AnswerToken(text=text))

    async def on_retry(attempt: int, error: BaseException, wait: float) -> None:
        shown.clear()
        await queue.put(AnswerRestarted(attempt=attempt))

    async def answer() -> None:
        try:
            text = await engine.reply(
                ChatMemory.load(request.history), request.text, on_token=on_token,
                on_retry=on_retry,
            )  # fmt: skip
            await queue.put(AnswerFinished(result=text))
        except Exception as error:
            await queue.put(
                AnswerFailed(code=type(error).__name__, error=error, partial="".join(shown))
            )
        finally:
            await queue.put(None)

    yield core.Started(name="started", thread_id=thread_id)
    task = asyncio.create_task(answer())
    try:
        while (event := await queue.get()) is not None:
            yield event
    finally:
        if not task.done():
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)


run = core.unsaved_entry(
    _events,
    "a chat turn cannot be resumed",
    """One turn of `ChatEngine.reply`. Chat keeps its memory in the chat session, not in a
    checkpointer: `checkpointer` and `resume` are not used.""",
)
