"""Helpers shared by the mode handlers: the app runtime and saving thread state."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import chainlit as cl
from chainlit.data import get_data_layer

from reqstudio.runtime import AppRuntime

log = logging.getLogger("reqstudio")

_runtime: AppRuntime | None = None
_startup_problem: str | None = None


def set_startup_problem(problem: str | None) -> None:
    """Why no model is available (the offline model failed to start), or None."""
    global _startup_problem
    _startup_problem = problem


def startup_problem() -> str | None:
    return _startup_problem


def keep_uploads_in(folder: Path) -> None:
    """Chainlit keeps uploads under `<app root>/.files` and deletes that whole folder when an
    app stops, so two apps started from one checkout (two ports, or tests running side by
    side) deleted each other's uploads mid-run ("file not found"). Each app keeps its uploads
    in its own data directory instead."""
    import chainlit.config
    import chainlit.server

    folder.mkdir(parents=True, exist_ok=True)
    chainlit.config.FILES_DIRECTORY = folder  # read by each session when it stores a file
    chainlit.server.FILES_DIRECTORY = folder  # deleted at shutdown


def set_runtime(value: AppRuntime) -> None:
    global _runtime
    _runtime = value


def runtime() -> AppRuntime:
    if _runtime is None:
        raise RuntimeError("app runtime not initialised")
    return _runtime


async def persist_thread_state() -> None:
    """Save the session (mode, settings, memory) into the thread's metadata now.

    Chainlit itself only does this when the browser disconnects; saving after each turn means
    a resumed thread has its mode and memory even after the server was stopped abruptly.
    """
    data_layer = get_data_layer()
    session = cl.context.session
    if data_layer is None or not session.thread_id:
        return
    try:
        await data_layer.update_thread(
            thread_id=session.thread_id, metadata=session.to_persistable()
        )
    except Exception:
        log.exception("could not save thread state")


# Chainlit nests what a handler sends under the handler's run, and the browser drops or
# reorders such children (messages sent in on_chat_start vanish after the first user
# message; steps show after the message of the run). Top-level items read top to bottom.


def top_level_message(content: str = "") -> cl.Message:
    message = cl.Message(content=content)
    message.parent_id = None
    return message


async def send_top_level(content: str) -> None:
    await top_level_message(content).send()


async def open_top_level_step(name: str, kind: str, **kwargs: Any) -> cl.Step:
    """A collapsed step at the top level, already shown."""
    step = cl.Step(name=name, type=kind, default_open=False, **kwargs)
    step.parent_id = None
    await step.send()
    return step
