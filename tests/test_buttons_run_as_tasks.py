"""Every button's work runs as its session's task (reqstudio/web/session.py `button_action`).

Chainlit runs an action callback inside the HTTP request: SRS's Review & improve, Review's and
Rewrite's Resume and Chat's Regenerate ran whole model runs there, with no stop button, out of
Stop's reach, and cut short when the request was."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import reqstudio

PACKAGE = Path(reqstudio.__file__).parent


def test_no_module_registers_a_button_but_through_button_action():
    registering = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if re.search(r"\bcl\.action_callback\(", path.read_text(encoding="utf-8"))
    )
    assert registering == ["web/session.py"]


def test_every_button_the_app_offers_has_its_work_registered():
    """The buttons' names the app sends (`cl.Action(name=...)`) all have a callback, and each
    callback is button_action's (named after the work, run as a task)."""
    from chainlit.config import config

    import reqstudio.web.app  # noqa: F401  (registers every mode's buttons)

    callbacks = config.code.action_callbacks
    for name in ("srs_review", "srs_evaluate", "srs_resume", "review_resume", "rewrite_resume"):
        assert name in callbacks, name
    assert all(
        callback.__wrapped__.__module__ == "reqstudio.web.session"
        for callback in callbacks.values()
    )


async def test_a_button_s_work_is_the_session_s_task_stop_reaches_it_and_at_click_can_hold_it():
    import chainlit as cl
    from chainlit.config import config
    from chainlit.context import init_ws_context
    from chainlit.session import WebsocketSession

    from reqstudio.web.session import button_action

    events: list[tuple[str, object]] = []
    ended = asyncio.Event()

    async def emit(event: str, data: object) -> None:
        events.append((event, data))
        if event == "task_end":
            ended.set()

    session = WebsocketSession(
        id="s-buttons", socket_id="sock-buttons", emit=emit, emit_call=lambda *a: None,
        user_env={}, client_type="webapp", thread_id="t-buttons",
    )  # fmt: skip
    init_ws_context(session)
    started, stopped = asyncio.Event(), asyncio.Event()

    @button_action("test_long_work")
    async def long_work(action: cl.Action) -> None:
        started.set()
        try:
            await asyncio.Event().wait()  # a model run that goes on until stopped
        except asyncio.CancelledError:
            stopped.set()
            raise

    held: list[str] = []

    async def already_running(action: cl.Action) -> bool:
        held.append(action.name)
        return False

    @button_action("test_held_work", at_click=already_running)
    async def held_work(action: cl.Action) -> None:
        raise AssertionError("at_click said no")

    click = config.code.action_callbacks["test_long_work"]
    try:
        first = asyncio.create_task(click(cl.Action(name="test_long_work", payload={})))
        await asyncio.wait_for(started.wait(), 5)
        running = session.current_task
        assert running is not None and not running.done()
        assert [e for e, _ in events] == ["task_start"]  # the browser shows its stop button

        await config.code.action_callbacks["test_held_work"](
            cl.Action(name="test_held_work", payload={})
        )
        assert held == ["test_held_work"] and session.current_task is running

        running.cancel()  # what Chainlit's Stop does
        await asyncio.wait_for(first, 5)
        assert stopped.is_set()
        await asyncio.wait_for(ended.wait(), 5)  # told from the task's done callback
        assert session.current_task is None
    finally:
        config.code.action_callbacks.pop("test_long_work", None)
        config.code.action_callbacks.pop("test_held_work", None)
        await session.delete()
