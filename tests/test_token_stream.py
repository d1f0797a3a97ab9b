"""Streamed tokens are batched (at most one send per 30 ms per tab) without changing what the
browser shows: every character, in order, and no token after the event that followed it."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from reqstudio.web.token_stream import TokenBatcher
from tests.apps import AppProcess
from tests.browser_support import provider_env
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.socket_support import ChatSocket, sign_in_cookie


class RecordingSession:
    """What a tab's socket receives, with sends that take a little while (a slow socket)."""

    def __init__(self):
        self.sent: list[tuple[str, dict]] = []

    async def emit(self, event: str, data: dict) -> None:
        await asyncio.sleep(random.choice((0, 0, 0.001)))
        self.sent.append((event, dict(data)))

    async def emit_call(self, event: str, data: dict, timeout: float) -> dict:
        self.sent.append((event, dict(data)))
        return {"ok": True}


def shown_text(sent: list[tuple[str, dict]], message_id: str) -> str:
    """What the web app shows for one message: stream_token events appended, a sequence
    token replacing the text."""
    text = ""
    for event, data in sent:
        if event == "stream_token" and data["id"] == message_id:
            text = data["token"] if data["isSequence"] else text + data["token"]
    return text


def token(message_id: str, text: str, sequence: bool = False) -> dict:
    return {"id": message_id, "token": text, "isSequence": sequence, "isInput": False}


async def test_batched_tokens_keep_every_character_in_order_and_before_later_events():
    random.seed(19)
    session = RecordingSession()
    batcher = TokenBatcher(session, interval=0.03)
    answer = [f"w{n:03d} " for n in range(400)]
    thinking = [f"t{n:03d} " for n in range(150)]

    async def stream_answer() -> None:
        for n, piece in enumerate(answer):
            await batcher.token(token("answer", piece))
            if n == 200:  # the app updates another message in the middle of the stream
                await batcher.emit("update_message", {"id": "other", "output": "updated"})
            await asyncio.sleep(random.choice((0, 0.001, 0.002)))
        await batcher.emit("update_message", {"id": "answer", "output": "".join(answer)})

    async def stream_thinking() -> None:  # another message of the same tab, at the same time
        for piece in thinking:
            await batcher.token(token("thinking", piece))
            await asyncio.sleep(0.001)
        await batcher.emit_call("ask", {"id": "question"}, 10)

    await asyncio.gather(stream_answer(), stream_thinking())
    await asyncio.sleep(0.1)  # the last window closes

    assert shown_text(session.sent, "answer") == "".join(answer)
    assert shown_text(session.sent, "thinking") == "".join(thinking)
    tokens_sent = [e for e in session.sent if e[0] == "stream_token"]
    assert len(tokens_sent) < (len(answer) + len(thinking)) / 3  # batched, not one each
    assert session.sent[0][1]["token"] == "w000 "  # the first token did not wait for the window

    events = [(event, data.get("id"), data.get("token")) for event, data in session.sent]
    final = events.index(("update_message", "answer", None))
    assert all(e[1] != "answer" for e in events[final + 1 :])  # nothing after the final text
    middle = events.index(("update_message", "other", None))
    shown_before = "".join(
        t for e, i, t in events[:middle] if e == "stream_token" and i == "answer"
    )
    assert shown_before == "".join(answer[:201])  # everything streamed before it, nothing after
    ask = events.index(("ask", "question", None))
    thinking_before = "".join(
        t for e, i, t in events[:ask] if e == "stream_token" and i == "thinking"
    )
    assert thinking_before == "".join(thinking)


async def test_a_sequence_token_replaces_what_was_held():
    session = RecordingSession()
    batcher = TokenBatcher(session, interval=0.05)
    await batcher.token(token("m", "first "))
    await batcher.token(token("m", "held "))
    await batcher.token(token("m", "all again: ", sequence=True))
    await batcher.token(token("m", "more"))
    await asyncio.sleep(0.12)
    assert shown_text(session.sent, "m") == "all again: more"


async def test_the_app_streams_a_whole_answer_in_fewer_events_and_the_same_text(tmp_path: Path):
    """The real app, over its socket: a Chat answer streamed in 4-character chunks arrives
    whole and in order, in fewer stream_token events than chunks."""
    answer = "".join(f"Requirement {n} shall be testable and unambiguous. " for n in range(40))
    with ScriptedLLMServer() as server:
        server.script(Reply(content=answer, chunk_chars=4, chunk_delay=0.002))
        app = AppProcess(tmp_path / "data", provider_env(server)).start()
        try:
            chat = await ChatSocket(app.url, sign_in_cookie(app.url)).connect()
            await chat.wait_for(lambda event, data: event == "new_message")  # the greeting
            # the chat's start is over before the user types (its end is not the answer's)
            await chat.wait_until_idle(timeout=60)
            await chat.send("What makes a requirement good?")
            await chat.wait_until_idle(timeout=60)
            await chat.close()
        finally:
            app.stop()
    started = [d for e, d in chat.events if e == "stream_start" and answer[:4] in d["output"]]
    assert len(started) == 1
    reply_id = started[0]["id"]
    streamed = started[0]["output"] + "".join(
        d["token"] for e, d in chat.events if e == "stream_token" and d["id"] == reply_id
    )
    assert streamed == answer
    chunks = len(answer) // 4
    assert sum(1 for e, d in chat.events if e == "stream_token") < chunks / 2
    final = [
        d for e, d in chat.events if e in ("new_message", "update_message") and d["id"] == reply_id
    ]
    assert final and final[-1]["output"].startswith(answer)  # then the stats footer
