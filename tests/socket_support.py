"""A Chainlit chat as the browser holds it, over the app's real Socket.IO endpoint: connect
with a sign-in cookie, upload a file to the session, send a message, and keep every event
the app sent (to wait on, and to search for what must never reach a browser)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import socketio


def sign_in_cookie(url: str, user: str | None = None, password: str | None = None) -> str:
    """The `Cookie` header of a signed-in browser: a password user's, or the local user's."""
    with httpx.Client(base_url=url, timeout=20) as http:
        if user is None:
            http.get("/user")
        else:
            reply = http.post("/login", data={"username": user, "password": password})
            assert reply.status_code == 200, reply.text
        return "; ".join(f"{k}={v}" for k, v in http.cookies.items())


NO_ANSWER: Any = object()  # from `answer_actions`: leave the app's question unanswered


class ChatSocket:
    def __init__(
        self,
        url: str,
        cookie: str,
        *,
        profile: str = "Chat",
        thread_id: str | None = None,
        session_id: str | None = None,
        answer_actions: Callable[[dict], dict | None] | None = None,
    ):
        self.url = url
        self.cookie = cookie
        self.session_id = session_id or str(uuid.uuid4())
        self.thread_id = thread_id
        self.profile = profile
        self.events: list[tuple[str, Any]] = []
        self.answer_actions = answer_actions  # what to click when the app asks (AskAction)
        self.client = socketio.AsyncClient(reconnection=False)
        self._changed = asyncio.Event()
        self._sent_at = 0  # how many events had come when the last message was sent
        self.client.on("*", self._record)

    async def _record(self, event: str, data: Any = None) -> Any:
        self.events.append((event, data))
        self._changed.set()
        if isinstance(data, dict) and not self.thread_id:  # the session's thread
            self.thread_id = data.get("thread_id") or data.get("threadId") or None
        if event == "ask" and self.answer_actions is not None:
            answer = self.answer_actions(data)
            if answer is NO_ANSWER:  # the user looks away: the question is never answered
                await asyncio.Event().wait()
            return answer
        return None

    async def connect(self) -> ChatSocket:
        auth = {"sessionId": self.session_id, "clientType": "webapp", "chatProfile": self.profile}
        if self.thread_id:
            auth["threadId"] = self.thread_id
        await self.client.connect(
            self.url,
            socketio_path="/ws/socket.io",
            transports=["websocket"],
            headers={"Cookie": self.cookie},
            auth=auth,
        )
        await self.client.emit("connection_successful")
        return self

    async def upload(self, name: str, content: bytes, mime: str = "text/markdown") -> str:
        async with httpx.AsyncClient(base_url=self.url, timeout=20) as http:
            reply = await http.post(
                "/project/file",
                params={"session_id": self.session_id},
                files={"file": (name, content, mime)},
                headers={"Cookie": self.cookie},
            )
        assert reply.status_code == 200, reply.text
        return reply.json()["id"]

    async def send(self, text: str, files: list[str] = (), message_id: str | None = None) -> str:
        message_id = message_id or str(uuid.uuid4())
        self._sent_at = len(self.events)
        message = {
            "id": message_id,
            "threadId": self.thread_id or "",
            "name": "user",
            "type": "user_message",
            "output": text,
            "createdAt": datetime.now(UTC).isoformat(),
        }
        await self.client.emit(
            "client_message",
            {"message": message, "fileReferences": [{"id": f} for f in files]},
        )
        return message_id

    async def wait_for(self, found: Callable[[str, Any], bool], timeout: float = 60) -> Any:
        """The first event (name, data) for which `found` is true, waiting for it to come."""
        async with asyncio.timeout(timeout):
            seen = 0
            while True:
                for event, data in self.events[seen:]:
                    if found(event, data):
                        return data
                seen = len(self.events)
                self._changed.clear()
                await self._changed.wait()

    async def wait_until_idle(self, timeout: float = 120) -> None:
        """Until the run of the message sent last has ended: a `task_end` after the last
        `task_start` that came after it was sent."""

        def ended() -> bool:
            names = [event for event, _ in self.events[self._sent_at :]]
            if "task_start" not in names:
                return False
            last_start = len(names) - 1 - names[::-1].index("task_start")
            return "task_end" in names[last_start:]

        async with asyncio.timeout(timeout):
            while not ended():
                self._changed.clear()
                await self._changed.wait()

    async def click(self, action: dict) -> None:
        """Click one of the buttons the app sent (an `action` event's data), as the page does:
        Chainlit's page posts it with the session's id."""
        async with httpx.AsyncClient(base_url=self.url, headers={"Cookie": self.cookie}) as http:
            reply = await http.post(
                "/project/action",
                json={"sessionId": self.session_id, "action": action},
                timeout=120,
            )
        assert reply.status_code == 200, reply.text

    def shown(self) -> list[dict[str, Any]]:
        """The messages and steps on the page now: each in its latest state (updates and
        streamed tokens applied, deleted ones gone), as the browser holds them."""
        from reqstudio.web.reconnect import ShownState

        state = ShownState()
        for event, data in self.events:
            if event == "stream_token":
                state.note_token(data)
            else:
                state.note(event, data)
        return list(state.messages.values())

    def received_text(self) -> str:
        return json.dumps(self.events, ensure_ascii=False, default=str)

    async def close(self) -> None:
        if self.client.connected:
            await self.client.disconnect()
