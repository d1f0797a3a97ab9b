"""A closed tab ends its run; a socket that drops and comes back does not."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from ui.session import end_run_unless_reconnected


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
