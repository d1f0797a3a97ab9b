"""A scripted OpenAI-compatible server for tests and benchmarks.

It speaks the real wire format (`/v1/chat/completions`, plain and SSE streaming, the usage
chunk, tool calls with argument deltas) and plays back scripted replies, including faults:
HTTP 401/429/500, a slow answer, a stream cut midway, a body that is not JSON.

Replies are queued; each request takes the first queued reply whose `match` text occurs in
the request's messages (every text, when `match` is a tuple; or that has no `match`). With nothing queued it answers
"Echo: <last user message>". Control it in-process (`ScriptedLLMServer.script`) or over HTTP
(`POST /_script`, `POST /_reset`, `GET /_requests`).

    python -m tests.scripted_server --port 8011
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


@dataclass
class ToolCallScript:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str = ""

    def arguments_text(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Reply:
    """One scripted answer.

    fault: None | "400" (code context_length_exceeded, message: `content`) | "401" | "429"
           | "500" | "cut" (stream stops midway, connection dropped)
           | "truncated" (the stream ends cleanly midway: no finish reason, no [DONE])
           | "malformed" (a body or SSE chunk that is not JSON)
    finish_reason: what the answer ends with (default "stop", or "tool_calls"); "length"
           plays an answer cut at the token limit.
    delay: seconds before the first byte; chunk_delay: seconds between streamed chunks;
    stall: seconds of silence after the first piece of the content (a provider, or a local
           model's busy slot, that stops mid-answer and then goes on).
    hold: the name of a gate: the reply waits before its first byte until the test opens it
           (`server.open_gate(name)`), so a test can look at the app while a run is surely
           still going; reset and stop open every gate.
    reasoning: a reasoning model's separate thinking, sent as `reasoning_content` (deltas
           before the content when streaming), as DeepSeek-R1 and Qwen do.
    """

    content: str = ""
    tool_calls: list[ToolCallScript] = field(default_factory=list)
    match: str | tuple[str, ...] | None = None
    fault: str | None = None
    finish_reason: str | None = None
    delay: float = 0.0
    chunk_delay: float = 0.0
    stall: float = 0.0
    chunk_chars: int = 8
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning: str = ""
    sends_usage: bool = True  # False plays a server that never reports usage when streaming
    hold: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reply:
        data = dict(data)
        data["tool_calls"] = [ToolCallScript(**t) for t in data.get("tool_calls", [])]
        return cls(**data)


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _message_text(messages: list[dict[str, Any]]) -> str:
    parts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        parts.append(str(content or ""))
    return "\n".join(parts)


def _matches(match: str | tuple[str, ...] | list[str], text: str) -> bool:
    return match in text if isinstance(match, str) else all(m in text for m in match)


class ScriptedLLMServer:
    def __init__(self, host: str = "127.0.0.1", port: int = 0, model: str = "scripted-model"):
        self.host = host
        self.port = port
        self.model = model
        self.requests: list[dict[str, Any]] = []
        # Per request (same order as `requests`): when it arrived and when its answer ended,
        # in `time.monotonic()` seconds; lets tests check which calls overlapped.
        self.timeline: list[dict[str, float]] = []
        # Per request: the Authorization header it came with (which key the client used).
        self.authorizations: list[str] = []
        self._queue: list[Reply] = []
        self._lock = threading.Lock()
        self._gates: dict[str, threading.Event] = {}
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._completions, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/_script", self._script_http, methods=["POST"]),
                Route("/_reset", self._reset_http, methods=["POST"]),
                Route("/_requests", self._requests_http, methods=["GET"]),
            ]
        )

    # --- control ------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def script(self, *replies: Reply | dict[str, Any]) -> None:
        with self._lock:
            for reply in replies:
                self._queue.append(reply if isinstance(reply, Reply) else Reply.from_dict(reply))

    def gate(self, name: str) -> threading.Event:
        with self._lock:
            return self._gates.setdefault(name, threading.Event())

    def open_gate(self, name: str) -> None:
        self.gate(name).set()

    def _open_every_gate(self) -> None:
        with self._lock:
            gates, self._gates = list(self._gates.values()), {}
        for gate in gates:
            gate.set()

    def texts_with(self, marker: str) -> list[str]:
        """The text of every request received so far whose messages contain `marker` (the
        messages joined by newlines), in arrival order."""
        texts = (_message_text(request["messages"]) for request in self.requests)
        return [text for text in texts if marker in text]

    def reset(self) -> None:
        self._open_every_gate()
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.timeline.clear()
            self.authorizations.clear()

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def pending_replies(self) -> list[Reply]:
        """The scripted replies nobody has asked for yet, in script order."""
        with self._lock:
            return list(self._queue)

    def _take(self, text: str) -> Reply | None:
        with self._lock:
            for index, reply in enumerate(self._queue):
                if reply.match is None or _matches(reply.match, text):
                    return self._queue.pop(index)
        return None

    # --- lifecycle ------------------------------------------------------------

    def start(self) -> ScriptedLLMServer:
        import socket

        if self.port == 0:
            with socket.socket() as sock:
                sock.bind((self.host, 0))
                self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app, host=self.host, port=self.port, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("scripted server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self._open_every_gate()
        if self._server is not None:
            self._server.should_exit = True
            self._server.force_exit = True  # a reply still held back (`delay`) is not waited for
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- HTTP handlers -----------------------------------------------------------

    async def _models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": self.model, "object": "model"}]})

    async def _script_http(self, request: Request) -> Response:
        body = await request.json()
        self.script(*body.get("replies", []))
        return JSONResponse({"queued": self.pending})

    async def _reset_http(self, request: Request) -> Response:
        self.reset()
        return JSONResponse({"queued": 0})

    async def _requests_http(self, request: Request) -> Response:
        return JSONResponse({"requests": self.requests})

    async def _completions(self, request: Request) -> Response:
        body = await request.json()
        messages = body.get("messages", [])
        text = _message_text(messages)
        span = {"received": time.monotonic(), "answered": float("inf")}
        with self._lock:
            self.requests.append(body)
            self.timeline.append(span)
            self.authorizations.append(request.headers.get("authorization", ""))
        reply = self._take(text)
        if reply is None:
            last_user = next(
                (_message_text([m]) for m in reversed(messages) if m.get("role") == "user"), ""
            )
            reply = Reply(content=f"Echo: {last_user}")
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.hold:
            await asyncio.to_thread(self.gate(reply.hold).wait, 120)
        if not body.get("stream") or reply.fault in {"400", "401", "429", "500"}:
            span["answered"] = time.monotonic()
        if reply.fault in {"400", "401", "429", "500"}:
            status = int(reply.fault)
            kind = {
                400: "context_length_exceeded",
                401: "invalid_api_key",
                429: "rate_limit_exceeded",
                500: "server_error",
            }
            headers = {"retry-after": "0"} if status == 429 else {}
            return JSONResponse(
                {
                    "error": {
                        # a 400's text is the reply's content (a provider's own wording)
                        "message": (reply.content if status == 400 else "") or f"scripted {status}",
                        "type": kind[status],
                        "code": kind[status],
                    }
                },
                status_code=status,
                headers=headers,
            )
        prompt_tokens = reply.prompt_tokens or _estimate_tokens(text)
        completion_tokens = reply.completion_tokens or _estimate_tokens(
            reply.content + "".join(t.arguments_text() for t in reply.tool_calls)
        )
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        model = body.get("model", self.model)
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            include_usage = include_usage and reply.sends_usage
            return StreamingResponse(
                self._stream(reply, completion_id, model, usage, include_usage, span),
                media_type="text/event-stream",
            )
        if reply.fault == "malformed":
            return Response('{"id": "broken", "choices": [', media_type="application/json")
        message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id or f"call_{i}_{uuid.uuid4().hex[:6]}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text()},
                }
                for i, call in enumerate(reply.tool_calls)
            ]
        return JSONResponse(
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": reply.finish_reason
                        or ("tool_calls" if reply.tool_calls else "stop"),
                    }
                ],
                "usage": usage,
            }
        )

    async def _stream(self, reply, completion_id, model, usage, include_usage, span=None):
        try:
            async for piece in self._stream_pieces(
                reply, completion_id, model, usage, include_usage
            ):
                yield piece
        finally:
            if span is not None:
                span["answered"] = time.monotonic()

    async def _stream_pieces(
        self, reply: Reply, completion_id: str, model: str, usage, include_usage
    ):
        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            payload = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

        yield chunk({"role": "assistant", "content": ""})
        step = max(1, reply.chunk_chars)
        for start in range(0, len(reply.reasoning), step):
            if reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
            yield chunk({"reasoning_content": reply.reasoning[start : start + step]})
        pieces = [
            reply.content[i : i + reply.chunk_chars]
            for i in range(0, len(reply.content), max(1, reply.chunk_chars))
        ]
        for index, piece in enumerate(pieces):
            if reply.fault == "cut" and index >= max(1, len(pieces) // 2):
                raise ConnectionResetError("scripted cut")  # drops the connection mid-stream
            if reply.fault == "truncated" and index >= max(1, len(pieces) // 2):
                return  # a clean close, as a provider that gave up: no finish reason, no [DONE]
            if reply.fault == "malformed" and index == len(pieces) // 2:
                yield 'data: {"choices": [{"delta": {"content": "bro\n\n'
            if reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
            if reply.stall and index == 1:
                await asyncio.sleep(reply.stall)
            yield chunk({"content": piece})
        if reply.fault == "cut":
            raise ConnectionResetError("scripted cut")
        for index, call in enumerate(reply.tool_calls):
            call_id = call.id or f"call_{index}_{uuid.uuid4().hex[:6]}"
            yield chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
            arguments = call.arguments_text()
            for start in range(0, len(arguments), 10):
                if reply.chunk_delay:
                    await asyncio.sleep(reply.chunk_delay)
                yield chunk(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "function": {"arguments": arguments[start : start + 10]},
                            }
                        ]
                    }
                )
        if reply.fault == "truncated":
            return
        yield chunk({}, reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop"))
        if include_usage:
            payload = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [],
                "usage": usage,
            }
            yield f"data: {json.dumps(payload)}\n\n"
        yield "data: [DONE]\n\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8011)
    args = parser.parse_args()
    server = ScriptedLLMServer(args.host, args.port)
    uvicorn.run(server.app, host=args.host, port=args.port, log_level="info")


if __name__ == "__main__":
    main()
