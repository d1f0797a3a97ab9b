"""Without sign-in, a request that came in on an address beyond loopback is refused.

The start-up check (`reqstudio.bind_check`) stops an app that listens beyond loopback with no
sign-in, but it sees the sockets only after the server has bound them. This guard decides per
connection from the address the connection arrived on (ASGI `scope["server"]`), so nothing is
served in between, and nothing is served if a server's sockets cannot be read at all."""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Receive, Scope, Send

from reqstudio.bind_check import AnonymousNetworkCheck, is_loopback_host
from reqstudio.web.refusal import refuse

log = logging.getLogger("reqstudio")


class LocalOnlyWithoutSignIn:
    """ASGI middleware: 403 for HTTP requests, and closed WebSocket handshakes, that arrived on
    a non-loopback local address while the app has no sign-in and anonymous network access is
    not allowed."""

    def __init__(self, app: ASGIApp, check: AnonymousNetworkCheck):
        self.app = app
        self.check = check

    def accepts(self, scope: Scope) -> bool:
        server = scope.get("server")
        return not self.check.local_only or server is None or is_loopback_host(str(server[0]))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self.accepts(scope):
            await self.app(scope, receive, send)
            return
        log.warning(
            "refused a %s request that arrived on %s: no sign-in is configured",
            scope["type"],
            scope["server"][0],
        )
        await refuse(
            scope, send, 403, "Forbidden: without sign-in the app serves this machine only"
        )
