"""Sign-out revokes the sign-in token on the server.

Chainlit's tokens are signed JWTs that stay valid until they expire (`user_session_timeout`):
its `/logout` only asks the browser to forget the cookie, so a copied cookie kept working. At
sign-out the token's digest goes into `revoked_tokens` in the app's database (every instance
sees it) until the token would have expired; `RevokedTokenGuard` refuses any request, REST or
Socket.IO, that carries a revoked token. Each instance remembers revoked digests for good and
checks a token it has not seen revoked at most every `RECHECK_S` seconds, so a sign-out on one
instance holds on the others within that time."""

from __future__ import annotations

import hashlib
import logging
import time
from http.cookies import CookieError, SimpleCookie

import jwt
from chainlit.auth import get_token_from_cookies
from chainlit.data import get_data_layer
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from reqstudio.web.refusal import refuse

log = logging.getLogger("reqstudio.revocation")

RECHECK_S = 2.0
# The routes that sign in or out are never refused: a browser may still send an old cookie.
OPEN_PATHS = ("/login", "/logout", "/auth/")


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_of(headers: dict[str, str]) -> str | None:
    """The sign-in token a request carries: Chainlit's cookie (possibly chunked) or a bearer."""
    authorization = headers.get("authorization", "")
    if authorization.lower().startswith("bearer "):
        return authorization[7:].strip() or None
    try:
        jar = SimpleCookie(headers.get("cookie", ""))
    except CookieError:
        return None
    return get_token_from_cookies({key: morsel.value for key, morsel in jar.items()})


def guarded_token(scope: Scope) -> str | None:
    """The sign-in token of a request the guards look at (HTTP and WebSocket, outside the
    sign-in paths); None for any other request and for one that carries none."""
    if scope["type"] not in ("http", "websocket") or scope["path"].startswith(OPEN_PATHS):
        return None
    return token_of({k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]})


class RevokedTokens:
    def __init__(self) -> None:
        self.revoked: set[str] = set()
        self.checked: dict[str, float] = {}  # digest -> when it was last found not revoked

    async def _sql(self, query: str, **parameters) -> list[dict]:
        layer = get_data_layer()
        if layer is None:
            return []
        rows = await layer.execute_sql(query=query, parameters=parameters)  # type: ignore[attr-defined]
        return rows if isinstance(rows, list) else []

    async def revoke(self, token: str) -> None:
        try:
            expires = int(jwt.decode(token, options={"verify_signature": False})["exp"])
        except (jwt.PyJWTError, KeyError, TypeError, ValueError):
            expires = int(time.time()) + 30 * 86400
        key = digest(token)
        self.revoked.add(key)
        await self._sql('DELETE FROM revoked_tokens WHERE "expiresAt" < :now', now=int(time.time()))
        await self._sql(
            'INSERT INTO revoked_tokens ("digest", "expiresAt") VALUES (:digest, :expires) '
            'ON CONFLICT ("digest") DO NOTHING',
            digest=key,
            expires=expires,
        )

    async def is_revoked(self, token: str) -> bool:
        key = digest(token)
        if key in self.revoked:
            return True
        now = time.monotonic()
        if now - self.checked.get(key, -RECHECK_S) < RECHECK_S:
            return False
        rows = await self._sql(
            'SELECT 1 AS hit FROM revoked_tokens WHERE "digest" = :digest', digest=key
        )
        if rows:
            self.revoked.add(key)
            return True
        if len(self.checked) > 10_000:  # forget old entries rather than grow without bound
            self.checked.clear()
        self.checked[key] = now
        return False


REVOKED = RevokedTokens()


async def revoke_on_logout(request: Request) -> None:
    """Chainlit's `on_logout`: the token this browser signed out with is revoked."""
    token = token_of({k.lower(): v for k, v in request.headers.items()})
    if token:
        await REVOKED.revoke(token)
        log.info("sign-in token revoked at sign-out")


class RevokedTokenGuard:
    """ASGI middleware: 401 for HTTP requests, and a closed handshake for WebSockets, that carry
    a revoked token."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = guarded_token(scope)
        if token is None or not await REVOKED.is_revoked(token):
            await self.app(scope, receive, send)
            return
        await refuse(scope, send, 401, "signed out")
