"""A closed tab ends its run; a socket that drops and comes back does not."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from reqstudio.web.session import end_run_unless_reconnected


@dataclass
class FakeSession:
    socket_id: str
    current_task: asyncio.Task | None = None


async def _long_run() -> None:
    await asyncio.sleep(60)


async def test_a_run_whose_browser_is_gone_is_cancelled():
    session = FakeSession("socket-1", asyncio.create_task(_long_run()))
    end_run_unless_reconnected(session, grace=0.05)
    await asyncio.wait({session.current_task}, timeout=5)
    assert session.current_task.cancelled()


async def test_a_run_survives_its_socket_reconnecting():
    session = FakeSession("socket-1", asyncio.create_task(_long_run()))
    end_run_unless_reconnected(session, grace=0.05)
    session.socket_id = "socket-2"  # Chainlit restored the session on a new socket
    done, _ = await asyncio.wait({session.current_task}, timeout=0.3)
    assert not done  # still running
    session.current_task.cancel()


@dataclass
class ReconnectingSession(FakeSession):
    emitted: list[str] | None = None

    async def emit(self, event: str, data: dict) -> None:
        self.emitted.append(event)


async def test_a_browser_that_reconnects_mid_run_is_told_the_run_goes_on(monkeypatch):
    # Chainlit's own handler tells the browser "task_end" on every (re)connection; the
    # browser then hides the stop button while the run goes on.
    import chainlit.socket
    from chainlit.session import WebsocketSession

    from reqstudio.web.chainlit_seam import show_the_session_again_on_reconnect

    async def chainlit_handler(sid: str) -> None:
        sessions[sid].emitted.append("task_end")

    handlers = dict(chainlit.socket.sio.handlers["/"], connection_successful=chainlit_handler)
    monkeypatch.setitem(chainlit.socket.sio.handlers, "/", handlers)
    sessions = {
        "running": ReconnectingSession("running", asyncio.create_task(_long_run()), []),
        "idle": ReconnectingSession("idle", None, []),
    }
    monkeypatch.setattr(WebsocketSession, "get", classmethod(lambda cls, sid: sessions[sid]))
    show_the_session_again_on_reconnect()
    show_the_session_again_on_reconnect()  # installed once, however often it is called

    await handlers["connection_successful"]("running")
    await handlers["connection_successful"]("idle")
    assert sessions["running"].emitted == ["task_end", "task_start"]
    assert sessions["idle"].emitted == ["task_end"]
    sessions["running"].current_task.cancel()
