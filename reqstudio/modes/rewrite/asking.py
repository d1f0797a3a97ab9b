"""How a Rewrite stage asks a model for a structured answer (outline, questions, review,
placements): the prompt as the user message, the answer validated as a Pydantic model (its
schema bounded for the embedded model), within the role's retry policy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from reqstudio.calls import policy_for
from reqstudio.llm import ModelFactory
from reqstudio.modes.rewrite import embedded
from reqstudio.settings import ModelRole
from reqstudio.structured import StructuredResult, ask_structured

T = TypeVar("T", bound=BaseModel)


async def ask_role(
    factory: ModelFactory,
    role: ModelRole,
    prompt: str,
    schema: type[T],
    *,
    callbacks: Sequence[Any],
    label: str,
) -> StructuredResult[T]:
    return await ask_structured(
        factory.for_role(role, callbacks=list(callbacks)),
        [HumanMessage(prompt)],
        schema,
        response_format=embedded.response_format(factory, schema),
        policy=policy_for(role, factory.settings),
        label=label,
    )
