"""Helpers shared by the mode handlers: the app runtime and saving thread state."""

from __future__ import annotations

import logging
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


def history_failures() -> int:
    """How many history statements have failed so far (0 without our data layer)."""
    return getattr(get_data_layer(), "failures", 0)


async def warn_if_history_failed(before: int, text: str) -> None:
    """Tell the user when saving this turn's history failed (the database went away): once
    per outage, until a turn is saved again. The notice itself cannot be saved either."""
    if history_failures() == before:
        cl.user_session.set("history_warned", False)
        return
    log.warning("history database unavailable; a turn was not saved")
    if not cl.user_session.get("history_warned"):
        cl.user_session.set("history_warned", True)
        await send_top_level(text)


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
