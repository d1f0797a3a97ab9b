"""A running SRS step shows its model's answer as it streams: the structured calls (ReqParse,
ReqExplore, ReqClarify) take no token callback of their own, so a callback handler on the
call relays each streamed piece, and a reasoning model's separate thinking, to the run's event
stream; each new try of the call starts the shown text again."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from reqstudio.events import BaseEvent
from reqstudio.modes.srs.events import NodeRestarted, NodeToken

Writer = Callable[[BaseEvent], None]


class NodeStream(BaseCallbackHandler):
    """Relays one node's model answer: `NodeRestarted` as a try starts, then `NodeToken`s."""

    run_inline = True  # in the node's own task, in order

    def __init__(self, write: Writer):
        self.write = write

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.write(NodeRestarted())

    def on_llm_new_token(self, token: str, *, chunk: Any = None, **kwargs: Any) -> None:
        message = getattr(chunk, "message", None)
        thinking = (getattr(message, "additional_kwargs", None) or {}).get("reasoning_content")
        if thinking:
            self.write(NodeToken(text=str(thinking), reasoning=True))
        if token:
            self.write(NodeToken(text=token, reasoning=False))


def node_stream() -> list[NodeStream]:
    """The relay for a call made inside a graph node (none outside one: nothing to show it)."""
    # imported here: a call started before the graph (`first_call`) needs no LangGraph
    from langgraph.config import get_stream_writer

    with contextlib.suppress(RuntimeError):
        return [NodeStream(get_stream_writer())]
    return []
