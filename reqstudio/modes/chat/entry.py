"""Chat mode behind the one entry shape (`reqstudio.events.RunEntry`).

A chat turn is one streamed answer: `Started`, `AnswerToken`s (an `AnswerRestarted` when a
broken try starts again), then `Finished` with the whole answer or `Failed` with the error and
the answer so far."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackHandler
from pydantic import BaseModel, Field

from reqstudio import events as core
from reqstudio.calls import IncompleteAnswerError
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
    request: ChatRequest,
    models: ModelFactory,
    thread_id: str | None,
    callbacks: Sequence[BaseCallbackHandler] = (),
) -> AsyncIterator[core.BaseEvent]:
    engine = ChatEngine(models, callbacks=callbacks)
    shown: list[str] = []  # what the current try streamed

    async def answer(send: core.Send) -> AnswerFinished:
        async def on_token(text: str) -> None:
            shown.append(text)
            await send(AnswerToken(text=text))

        async def on_retry(attempt: int, error: BaseException, wait: float) -> None:
            shown.clear()
            await send(AnswerRestarted(attempt=attempt))

        text = await engine.reply(
            ChatMemory.load(request.history), request.text, on_token=on_token, on_retry=on_retry
        )
        return AnswerFinished(result=text)

    def failed(error: Exception) -> AnswerFailed:
        # an answer cut short keeps what its last try delivered, else what it streamed
        partial = error.partial if isinstance(error, IncompleteAnswerError) else "".join(shown)
        return AnswerFailed(code=type(error).__name__, error=error, partial=partial)

    yield core.Started(name="started", thread_id=thread_id)
    async for event in core.sent_events(answer, failed):
        yield event


run = core.unsaved_entry(
    _events,
    "a chat turn cannot be resumed",
    """One turn of `ChatEngine.reply`. Chat keeps its memory in the chat session, not in a
    checkpointer: `checkpointer` and `resume` are not used. Option: `callbacks`, LangChain
    callback handlers for the model (a `UsageTracker`).""",
)
