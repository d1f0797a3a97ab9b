"""How the SRS agents ask their model: the role's model (bounded to fit the embedded model's
context), the shared structured path, and the clock of one interaction. Nothing here needs
LangGraph, so a run can send its first request before LangGraph is imported
(`reqstudio.modes.srs.first_call`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from reqstudio.llm import ModelFactory
from reqstudio.modes.srs.state import ONE_LINE_PATTERN
from reqstudio.modes.srs.streaming import node_stream
from reqstudio.settings import ModelRole
from reqstudio.structured import StructuredResult, ask_structured
from reqstudio.usage import UsageTracker


@dataclass
class NodeClock:
    """Wall time and model usage of one node's LLM interaction."""

    usage: UsageTracker
    started: float

    @classmethod
    def start(cls) -> NodeClock:
        return cls(UsageTracker(), time.perf_counter())

    def as_log(self) -> dict[str, Any]:
        return {
            "seconds": round(time.perf_counter() - self.started, 3),
            "model_seconds": round(self.usage.model_seconds, 3),
            "llm_calls": self.usage.calls,
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
        }


T = TypeVar("T", bound=BaseModel)

# The embedded 135M model decodes against the schema; tighter bounds keep its answers inside
# its context window (unbounded, it can repeat items until the context is full).
EMBEDDED_MAX_ITEMS = 12
EMBEDDED_ONE_LINE_PATTERN = r'^[^"\\\n]{1,160}$'
EMBEDDED_DOCUMENT_TOKENS = 1024


def _bounded_for_embedded(node: Any) -> Any:
    if isinstance(node, dict):
        bounded = {key: _bounded_for_embedded(value) for key, value in node.items()}
        if "maxItems" in bounded:
            bounded["maxItems"] = min(bounded["maxItems"], EMBEDDED_MAX_ITEMS)
        if bounded.get("pattern") == ONE_LINE_PATTERN:
            bounded["pattern"] = EMBEDDED_ONE_LINE_PATTERN
        return bounded
    if isinstance(node, list):
        return [_bounded_for_embedded(value) for value in node]
    return node


# For the embedded model, DocGenerate decodes against a grammar too: a Markdown document that
# opens with its title and holds no code fence (left free, the 135M model echoes the JSON list).
EMBEDDED_DOCUMENT_GRAMMAR = r"""root ::= "# " [^\n`]+ "\n" [^`]*"""


def chat_model(factory: ModelFactory, role: ModelRole, callbacks: Sequence[Any]):
    """The role's model; on the embedded model with its output bounded to fit its context."""
    model = factory.for_role(role, callbacks=callbacks)
    if factory.endpoint.embedded and role == "DocGenerate":
        # llama-cpp-python reads `max_tokens` (ChatOpenAI would send max_completion_tokens).
        extra = {"grammar": EMBEDDED_DOCUMENT_GRAMMAR, "max_tokens": EMBEDDED_DOCUMENT_TOKENS}
        return model.bind(extra_body=extra)
    return model


async def ask_for(
    factory: ModelFactory,
    role: ModelRole,
    messages: Sequence[BaseMessage],
    schema: type[T],
    callbacks: Sequence[Any],
    relay: Sequence[Any] | None = None,
) -> StructuredResult[T]:
    """The shared structured path (schema output where supported, repair, bounded re-ask).
    `relay`: the callbacks that show the answer as it streams (default: the running graph
    node's, `reqstudio.modes.srs.streaming.node_stream`)."""
    bounded = (
        _bounded_for_embedded(schema.model_json_schema()) if factory.endpoint.embedded else None
    )
    if relay is None:
        relay = node_stream()  # the running step shows it
    return await ask_structured(
        chat_model(factory, role, [*callbacks, *relay]),
        messages,
        schema,
        response_format=factory.response_format(schema, json_schema=bounded),
        policy=factory.policy(role),
        label=role,
    )
