"""MCP servers a user connects from the UI stay that user's, under a cap per user.

Chainlit's `POST /mcp` starts a server process (a configured stdio server such as `time`) or
opens a connection for every request: one user with many tabs, or a script opening sockets,
could start processes without limit. In front of it, this route counts the MCP connections
the caller already holds across all their sessions in this process and refuses one more than
`REQSTUDIO_MCP_USER_SERVERS` (a reconnect of a name a session already holds replaces it and
is not counted twice)."""

from __future__ import annotations

import logging

from chainlit import server as chainlit_server
from chainlit.session import WebsocketSession, ws_sessions_id
from chainlit.types import ConnectMCPRequest
from fastapi import APIRouter, HTTPException

log = logging.getLogger("reqstudio.mcp")
router = APIRouter()
LIMIT = {"per_user": 3}


def connections_held(identifier: str | None, replacing: tuple[str, str]) -> int:
    held = 0
    for session in list(ws_sessions_id.values()):
        owner = session.user.identifier if session.user else None
        if owner != identifier:
            continue
        held += sum(1 for name in session.mcp_sessions if (session.id, name) != replacing)
    return held


@router.post("/mcp")
async def connect_mcp(payload: ConnectMCPRequest, current_user: chainlit_server.UserParam):
    identifier = current_user.identifier if current_user else None
    session = WebsocketSession.get_by_id(payload.sessionId)
    if session is None or (session.user.identifier if session.user else None) != identifier:
        # (Chainlit answered 500 for a session unknown here, e.g. on another instance)
        raise HTTPException(status_code=404, detail="Not found")
    held = connections_held(identifier, (payload.sessionId, payload.name))
    if held >= LIMIT["per_user"]:
        log.warning("MCP connection refused for %r: %d held (the cap)", identifier, held)
        raise HTTPException(
            status_code=429,
            detail=f"You already have {held} MCP connections open (the limit); disconnect one "
            f"first. / 已打开 {held} 个 MCP 连接（上限），请先断开一个。",
        )
    return await chainlit_server.connect_mcp(payload, current_user)


def cap_user_mcp_servers(per_user: int) -> None:
    """The cap `connect_mcp` applies (its route is put in front of Chainlit's by
    reqstudio/web/chainlit_seam.py)."""
    LIMIT["per_user"] = per_user
