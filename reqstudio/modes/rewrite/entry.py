"""Rewrite mode behind the one entry shape (`reqstudio.events.RunEntry`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from reqstudio.events import BaseEvent, new_thread_id, opened
from reqstudio.llm import ModelFactory
from reqstudio.modes.rewrite.chain import RewriteChain
from reqstudio.modes.rewrite.models import RewriteRequest


def run(
    request: RewriteRequest | None,
    models: ModelFactory,
    *,
    checkpointer: Any = None,
    thread_id: str | None = None,
    resume: bool = False,
    **options: Any,
) -> AsyncIterator[BaseEvent]:
    """`Started`, then `RewriteChain.astream`'s events (the thread id is the chain's
    `run_id`). `options`: `RewriteChain`'s own keywords (`reviewer`, `options`) and `tracker`."""
    thread_id = new_thread_id(checkpointer, thread_id)
    tracker = options.pop("tracker", None)
    chain = RewriteChain(models, **options)
    return opened(
        thread_id,
        chain.astream(
            request, tracker=tracker, checkpointer=checkpointer, run_id=thread_id, resume=resume
        ),
    )
