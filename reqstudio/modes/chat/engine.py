"""Chat mode: a streaming conversation with memory of the thread."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from reqstudio.calls import RetryCallback, TokenCallback, complete
from reqstudio.llm import ModelFactory
from reqstudio.prompts import render_prompt
from reqstudio.rewind import first_turn_of


class ChatTurn(BaseModel):
    role: Literal["user", "assistant"]
    content: str
    # The user message the turn belongs to (its question, or the answer to it): an edited or
    # regenerated message rewinds the memory to it.
    message_id: str | None = None


@dataclass
class ChatMemory:
    """The conversation so far; only the most recent `window` turns are sent to the model."""

    turns: list[ChatTurn] = field(default_factory=list)
    window: int = 40

    def add(
        self, role: Literal["user", "assistant"], content: str, message_id: str | None = None
    ) -> None:
        self.turns.append(ChatTurn(role=role, content=content, message_id=message_id))

    def rewind_to(self, message_id: str | None) -> int:
        """Forget the turns of the user message `message_id` and every later turn (the user
        edited or regenerated it: what followed is discarded); how many turns went."""
        index = first_turn_of(self.turns, message_id)
        if index is None:
            return 0
        dropped = len(self.turns) - index
        del self.turns[index:]
        return dropped

    def as_messages(self) -> list[BaseMessage]:
        recent = self.turns[-self.window :]
        return [
            HumanMessage(t.content) if t.role == "user" else AIMessage(t.content) for t in recent
        ]

    def dump(self) -> list[dict[str, str]]:
        return [t.model_dump(exclude_none=True) for t in self.turns]

    @classmethod
    def load(cls, data: Sequence[dict] | None) -> ChatMemory:
        return cls([ChatTurn.model_validate(item) for item in data or []])


class ChatEngine:
    def __init__(self, factory: ModelFactory, callbacks: Sequence[BaseCallbackHandler] = ()):
        self.model = factory.for_role("chat", callbacks=callbacks)
        self.policy = factory.policy("chat")
        self.system_prompt = render_prompt("chat/system.md")

    async def reply(
        self,
        memory: ChatMemory,
        user_text: str,
        *,
        on_token: TokenCallback | None = None,
        on_retry: RetryCallback | None = None,
    ) -> str:
        """The whole answer to `user_text`, streamed through `on_token`.

        A try that breaks off is started again (`on_retry` tells the caller to drop what it
        showed of it); the answer is returned only when the model finished it. The caller
        records the turn in `memory`, a partial answer included if the call fails."""
        messages = [
            SystemMessage(self.system_prompt),
            *memory.as_messages(),
            HumanMessage(user_text),
        ]
        answer = await complete(
            self.model, messages, policy=self.policy, on_token=on_token, on_retry=on_retry,
            label="chat", text_required=True,
        )  # fmt: skip
        return str(answer.content)
