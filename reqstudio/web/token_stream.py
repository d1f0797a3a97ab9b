"""Streamed tokens go to the browser at most once every `FLUSH_SECONDS` per tab.

Every mode streams through Chainlit's emitter (`Message.stream_token` and `Step.stream_token`
call `emitter.send_token`, one Socket.IO `stream_token` event per token). A provider streams
a token every 15-30 ms per user (the model layer joins them into at most one piece per 50 ms
per answer, `reqstudio/coalesce.py`, but a tab may show several answers and steps at once);
one event each costs the app an encoding, a websocket frame and a task switch per user per
token, which at tens of users is most of the event loop's time. Here, per
tab (session):

- the first token after a pause goes out at once (nothing waits for a short answer);
- tokens that come within the next `FLUSH_SECONDS` are joined, in order, and go out together
  at its end, one `stream_token` event per message;
- any other event of that tab (a message sent, updated or finished, an ask, a step) first
  sends what is held, so the browser sees everything in the order the app produced it;
- every event is also noted, so that a browser that reconnects to the session can be sent
  again what it was shown, and asked again what the run waits for (reqstudio/web/reconnect.py).

What the user sees is the same text: the web app appends each `stream_token` event's text to
its message, and the message's final content comes whole with `update_message` anyway.
reqstudio/web/chainlit_seam.py puts `batched_emitter_members()` on Chainlit's emitter once, at
import of app.py."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from chainlit.emitter import ChainlitEmitter

from reqstudio.web.reconnect import ShownState, call_surviving_reconnects

log = logging.getLogger("reqstudio.stream")

FLUSH_SECONDS = 0.03


class TokenBatcher:
    """One tab's held tokens and the order of everything it emits."""

    def __init__(self, session: Any, interval: float = FLUSH_SECONDS):
        self.session = session
        self.interval = interval
        self.held: list[dict[str, Any]] = []
        self.window = False  # a token went out less than `interval` ago
        self.lock = asyncio.Lock()  # one emit at a time: the order events are asked in
        self.shown = ShownState()  # what a reconnecting browser is sent again

    def _join(self, token: dict[str, Any]) -> None:
        """Held tokens of one message are joined into one; messages are independent in the
        browser, so each keeps its own order and nothing else."""
        for index, held in enumerate(self.held):
            if (held["id"], held["isInput"]) == (token["id"], token["isInput"]):
                if token["isSequence"]:
                    self.held[index] = dict(token)  # the whole text again: it replaces
                else:
                    held["token"] += token["token"]
                return
        self.held.append(dict(token))

    def _take(self) -> list[dict[str, Any]]:
        """What is held, at the moment an emit is asked for (before waiting for the lock):
        what each emit sends first was streamed before it was asked for, and emits go out in
        the order they were asked for (the lock is first come, first served)."""
        held, self.held = self.held, []
        return held

    async def _send(self, held: list[dict[str, Any]]) -> None:
        for token in held:
            self.shown.note_token(token)
            await self.session.emit("stream_token", token)

    async def token(self, token: dict[str, Any]) -> None:
        self._join(token)
        if self.window:
            return
        self.window = True
        asyncio.get_running_loop().call_later(self.interval, self._window_ends)
        held = self._take()
        async with self.lock:
            await self._send(held)

    def _window_ends(self) -> None:
        held = self._take()
        if not held:
            self.window = False  # a pause: the next token goes out at once
            return
        task = asyncio.ensure_future(self._flush(held))
        task.add_done_callback(_log_failure)
        asyncio.get_running_loop().call_later(self.interval, self._window_ends)

    async def _flush(self, held: list[dict[str, Any]]) -> None:
        async with self.lock:
            await self._send(held)

    async def emit(self, event: str, data: Any) -> Any:
        held = self._take()
        async with self.lock:
            await self._send(held)
            self.shown.note(event, data)
            return await self.session.emit(event, data)

    async def emit_call(self, event: str, data: Any, timeout: Any) -> Any:
        held = self._take()
        async with self.lock:
            await self._send(held)
            self.shown.note(event, data)
        return await call_surviving_reconnects(
            self.shown,
            lambda *call: self.session.emit_call(*call),  # the socket the session has now
            event,
            data,
            timeout,
        )

    async def replay_shown(self) -> None:
        """Send a browser that reconnected what the session showed it, in order with
        everything else the tab emits (reqstudio/web/reconnect.py)."""
        held = self._take()
        async with self.lock:
            await self._send(held)
            settings_now = getattr(self.session, "chat_settings", None) or {}
            for event, data in self.shown.replay(settings_now):
                await self.session.emit(event, data)


def _log_failure(task: asyncio.Future) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("streamed tokens not sent: %s", task.exception())


def batcher_of(session: Any) -> TokenBatcher:
    batcher = getattr(session, "_reqstudio_tokens", None)
    if batcher is None:
        batcher = TokenBatcher(session)
        session._reqstudio_tokens = batcher
    return batcher


def batched_emitter_members() -> dict[str, Any]:
    """The members of Chainlit's websocket emitter that route it through each session's
    `TokenBatcher` (reqstudio/web/chainlit_seam.py puts them on `ChainlitEmitter`)."""

    def emit(self: ChainlitEmitter):
        return batcher_of(self.session).emit

    def emit_call(self: ChainlitEmitter):
        return batcher_of(self.session).emit_call

    def send_token(self: ChainlitEmitter, id: str, token: str, is_sequence=False, is_input=False):
        payload = {"id": id, "token": token, "isSequence": is_sequence, "isInput": is_input}
        return batcher_of(self.session).token(payload)

    return {
        "emit": property(emit),
        "emit_call": property(emit_call),
        "send_token": send_token,
        "_reqstudio_batched": True,
    }
