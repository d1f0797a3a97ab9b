"""A browser tab on a real app instance, over its Socket.IO socket and HTTP routes as the web
app drives them: open a new chat in a mode or resume a thread, send a message with a file,
press Stop, click an action button, and wait for what the app shows."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import socketio

from tests.apps import AppProcess
from tests.scripted_server import ScriptedLLMServer

__all__ = ["ScriptedLLMServer", "Tab", "cookie_of", "runs_at_once"]


async def cookie_of(base_url: str) -> str:
    """The one local user's sign-in cookie (no password accounts configured)."""
    async with httpx.AsyncClient(base_url=base_url) as http:
        await http.get("/user")
        return "; ".join(f"{k}={v}" for k, v in http.cookies.items())


class Tab:
    def __init__(
        self, app: AppProcess, *, mode: str = "SRS", thread_id: str = "", language: str = "en-US"
    ):
        self.app = app
        self.mode = mode
        self.thread_id = thread_id
        self.language = language
        self.session_id = str(uuid.uuid4())
        self.cookie = ""
        self.client = socketio.AsyncClient(reconnection=False)
        self.messages: dict[str, dict[str, Any]] = {}  # id -> the message or step as shown
        self.actions: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        for name in ("new_message", "update_message", "stream_start"):
            self.client.on(name, self._on_message)
        self.client.on("action", self._on_action)
        self.client.on("first_interaction", self._on_first_interaction)
        self.resumed: dict[str, Any] | None = None  # the stored thread, when one is resumed
        self.resume_error: str | None = None
        self.client.on("resume_thread", self._on_resume_thread)
        self.client.on("resume_thread_error", self._on_resume_error)

    async def _on_message(self, data: dict) -> None:
        self.messages[data["id"]] = {**self.messages.get(data["id"], {}), **data}
        self._changed.set()

    async def _on_action(self, data: dict) -> None:
        self.actions.append(data)
        self._changed.set()

    async def _on_resume_thread(self, data: dict) -> None:
        self.resumed = data
        self._changed.set()

    async def _on_resume_error(self, data: Any) -> None:
        self.resume_error = str(data)
        self._changed.set()

    async def _on_first_interaction(self, data: dict) -> None:
        self.thread_id = data.get("thread_id") or self.thread_id
        self._changed.set()

    # --- what the tab shows ---------------------------------------------------------------

    def texts(self) -> list[str]:
        return [m.get("output") or "" for m in self.messages.values()]

    def shows(self, text: str) -> bool:
        return any(text in shown for shown in self.texts())

    def step_names(self) -> list[str]:
        return [m.get("name", "") for m in self.messages.values() if m.get("type") == "llm"]

    def action(self, name: str) -> dict[str, Any] | None:
        return next((a for a in reversed(self.actions) if a.get("name") == name), None)

    async def until(self, condition: Callable[[], bool], timeout: float = 90) -> None:
        """Wait until `condition()` (about the tab, or anything else) holds."""

        async def wait() -> None:
            while not condition():  # woken by what the tab receives, or every 0.1 s
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), 0.1)

        try:
            await asyncio.wait_for(wait(), timeout)
        except TimeoutError:
            raise AssertionError(
                f"not shown within {timeout} s; the tab shows: {self.texts()}\n"
                f"resumed thread's metadata: {(self.resumed or {}).get('metadata')}; "
                f"resume error: {self.resume_error}\n"
                f"app log:\n{self.app.log()[-4000:]}"
            ) from None

    async def until_shown(self, text: str, timeout: float = 90) -> None:
        await self.until(lambda: self.shows(text), timeout)

    # --- what the user does ---------------------------------------------------------------

    async def open(self) -> Tab:
        self.cookie = await cookie_of(self.app.url)
        await self.client.connect(
            self.app.url,
            socketio_path="/ws/socket.io",
            transports=["websocket"],
            headers={"Cookie": self.cookie, "Accept-Language": self.language},
            auth={"clientType": "webapp", "sessionId": self.session_id,
                  "threadId": self.thread_id, "userEnv": "{}", "chatProfile": self.mode},
        )  # fmt: skip
        await self.client.emit("connection_successful")
        return self

    def http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.app.url, headers={"Cookie": self.cookie}, timeout=120
        )

    async def send(self, text: str, attach: Path | None = None) -> None:
        references = None
        if attach is not None:
            async with self.http() as http:
                uploaded = await http.post(
                    "/project/file",
                    params={"session_id": self.session_id},
                    files={"file": (attach.name, attach.read_bytes(), "text/markdown")},
                )
            assert uploaded.status_code == 200, uploaded.text
            references = [uploaded.json()]
        step = {
            "id": str(uuid.uuid4()), "threadId": "", "name": "local", "type": "user_message",
            "output": text, "createdAt": "", "streaming": False, "metadata": {}, "modes": {},
        }  # fmt: skip
        await self.client.emit("client_message", {"message": step, "fileReferences": references})

    async def stop(self) -> None:
        """The Stop button."""
        await self.client.emit("stop")

    def click(self, action: dict[str, Any]) -> asyncio.Task:
        """Click an action button; the request lasts as long as the work it starts."""

        async def post() -> httpx.Response:
            async with self.http() as http:
                return await http.post(
                    "/project/action", json={"sessionId": self.session_id, "action": action}
                )

        return asyncio.get_running_loop().create_task(post())

    async def close(self) -> None:
        if self.client.connected:
            await self.client.disconnect()


async def runs_at_once(app: AppProcess, count: int, attach: Path, timeout: float) -> None:
    """`count` tabs on `app` each send a system description with `attach` in the mode a new
    thread starts in (SRS), all before any ends, and wait until every run is done."""
    tabs = [await Tab(app).open() for _ in range(count)]
    await asyncio.gather(*(tab.until_shown("mode is on") for tab in tabs))
    for number, tab in enumerate(tabs):
        await tab.send(f"System {number}: a library.", attach=attach)
    try:
        await asyncio.gather(*(tab.until_shown("✅ Done", timeout=timeout) for tab in tabs))
    finally:
        for tab in tabs:
            await tab.close()
