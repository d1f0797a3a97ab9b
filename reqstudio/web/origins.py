"""The app trusts no origin but its own: a request that a browser sends from another origin
(a page on another port or host, with the user's cookie) is refused before Chainlit sees it.

Browsers send `Origin` on every cross-origin request and on every WebSocket handshake, so a
request whose `Origin` names another host (or port) than the one it was sent to is a page of
someone else's acting with the user's cookie. Requests without `Origin` (curl, same-origin
navigations) are not a browser acting for another site and pass. Chainlit's CORS middleware
only decides what a browser may *read*; this decides what reaches the app at all, REST and
Socket.IO alike (Chainlit's Socket.IO server checks no origin).

`REQSTUDIO_ALLOWED_ORIGINS` lists further origins (`https://intranet.example.com,...`), e.g. a
proxy that rewrites the Host header."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from reqstudio.web.refusal import refuse

log = logging.getLogger("reqstudio.origins")


def same_origin(origin: str, host: str) -> bool:
    """Whether `origin` (scheme://host[:port]) names the host:port the request was sent to."""
    netloc = urlsplit(origin).netloc.lower()
    return bool(netloc) and netloc == host.lower()


class ForeignOriginGuard:
    """ASGI middleware: 403 for HTTP requests and closes WebSocket handshakes whose `Origin`
    is neither the app's own nor listed."""

    def __init__(self, app: ASGIApp, allowed: tuple[str, ...] = ()):
        self.app = app
        self.allowed = {origin.rstrip("/").lower() for origin in allowed}

    def accepts(self, scope: Scope) -> bool:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        origin = headers.get("origin")
        if origin is None:
            return True
        if origin.rstrip("/").lower() in self.allowed:
            return True
        return same_origin(origin, headers.get("host", ""))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self.accepts(scope):
            await self.app(scope, receive, send)
            return
        log.warning(
            "refused a %s request to %s from a foreign origin", scope["type"], scope["path"]
        )
        await refuse(scope, send, 403, "Forbidden: foreign origin")
