"""How the ASGI guards (foreign origin, revoked token, disabled account) refuse a request: a
WebSocket handshake is closed with 1008 (policy violation), an HTTP request gets a JSON
`{"detail": ...}` with the status."""

from __future__ import annotations

import json

from starlette.types import Scope, Send


async def refuse(scope: Scope, send: Send, status: int, detail: str) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    body = json.dumps({"detail": detail}, separators=(",", ":")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
