"""Sign-in by a proxy that authenticates users and names them in a header (`X-Forwarded-User`).

Chainlit's `POST /auth/header` signs in whoever its header callback names, from any address:
anyone who reaches the app could send `X-Forwarded-User: admin`. Here the header is believed
only on a connection from an address in `REQSTUDIO_TRUSTED_PROXIES`; from anywhere else (and
when the setting is empty, from everywhere) the request is refused with a log line.

The address checked is the connection's own. Uvicorn replaces the client address with the
`X-Forwarded-For` a loopback peer sends (its `FORWARDED_ALLOW_IPS`), which anyone on the
machine could set to a trusted proxy's address; so the peer is noted before that happens.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable
from typing import Any

from chainlit import server as chainlit_server
from fastapi import APIRouter, HTTPException, Request

log = logging.getLogger("reqstudio.login")

PEER_KEY = "reqstudio.peer"
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def trusted(address: str | None, networks: Iterable[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return False
    return any(ip in network for network in networks)


def peer_address(request: Request) -> str | None:
    """The address of the connection itself, whatever `X-Forwarded-For` says."""
    peer = request.scope.get(PEER_KEY) or request.scope.get("client")
    return peer[0] if peer else None


def noting_peer_addresses(proxy_headers: type) -> type:
    """Uvicorn's proxy-header middleware, keeping each connection's own address in its scope
    before it replaces it (reqstudio/web/chainlit_seam.py puts it in uvicorn's place)."""

    class NotingProxyHeaders(proxy_headers):
        notes_peer = True

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] in ("http", "websocket") and scope.get("client"):
                scope[PEER_KEY] = tuple(scope["client"])
            await super().__call__(scope, receive, send)

    return NotingProxyHeaders


router = APIRouter()
_TRUST: dict[str, tuple[Network, ...]] = {"networks": ()}


@router.post("/auth/header")
async def header_sign_in(request: Request):
    address = peer_address(request)
    if not trusted(address, _TRUST["networks"]):
        log.warning(
            "header sign-in refused from %s: not a proxy listed in REQSTUDIO_TRUSTED_PROXIES",
            address,
        )
        raise HTTPException(status_code=401, detail="credentialssignin")
    return await chainlit_server.header_auth(request)


def trust_header_sign_in_from(networks: tuple[Network, ...]) -> None:
    """The proxies whose header the checked `/auth/header` believes (reqstudio/web/chainlit_seam.py
    puts that route in front of Chainlit's own, and the noting middleware in uvicorn's place)."""
    _TRUST["networks"] = networks
