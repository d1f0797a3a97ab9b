"""Shout mode's engine: no Chainlit; the model through the one factory and the one call path,
as its own role."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from reqstudio.calls import complete
from reqstudio.llm import ModelFactory


async def shout(factory: ModelFactory, text: str) -> str:
    answer = await complete(
        factory.for_role("shout"), [HumanMessage(text)], policy=factory.policy("shout")
    )
    return str(answer.content).upper()
