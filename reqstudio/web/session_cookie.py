"""Chainlit's `/set-session-cookie`, with the cookie's flags taken from the request's scheme.

Chainlit marks the session cookie `SameSite=None; Secure` for every client not on loopback,
and a browser drops a Secure cookie it receives over plain HTTP: behind the README's nginx
example reached from another machine the session cookie never stuck, so the proxy's
`ip_hash`-less cookie affinity and reconnects lost the session. Here the cookie is Secure when
the page was served over https (the request's own scheme, or the proxy's
`X-Forwarded-Proto`), and `SameSite=Lax` always: the app is only ever used from its own origin
(reqstudio/web/origins.py refuses others). A forged `X-Forwarded-Proto` can only make a client's own
cookie stricter."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SESSION_COOKIE = "X-Chainlit-Session-id"


def served_over_https(request: Request) -> bool:
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return (forwarded or request.url.scheme) == "https"


async def set_session_cookie(request: Request) -> JSONResponse:
    body = await request.json()
    session_id = body.get("session_id") if isinstance(body, dict) else None
    if not isinstance(session_id, str) or not session_id:
        return JSONResponse({"detail": "session_id required"}, status_code=400)
    response = JSONResponse({"message": "Session cookie set"})
    response.set_cookie(
        key=SESSION_COOKIE,
        value=session_id,
        path="/",
        httponly=True,
        secure=served_over_https(request),
        samesite="lax",
    )
    return response


class SecureCookiesOverHttps:
    """ASGI middleware: over https (or behind a proxy saying `X-Forwarded-Proto: https`) every
    cookie the app sets is Secure, the sign-in cookie included (Chainlit marks it Secure only
    when CHAINLIT_COOKIE_SAMESITE=none)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not served_over_https(Request(scope)):
            await self.app(scope, receive, send)
            return

        async def send_secure(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    (name, value + b"; Secure")
                    if name.lower() == b"set-cookie" and b"secure" not in value.lower()
                    else (name, value)
                    for name, value in message.get("headers", [])
                ]
            await send(message)

        await self.app(scope, receive, send_secure)
