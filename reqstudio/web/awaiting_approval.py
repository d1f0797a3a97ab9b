"""A single sign-on identity that waits for approval is told so on the login page.

Chainlit sends every refused OAuth sign-in back to `/login?error=oauthSignin` ("sign-in
failed: try again or another way"), which misleads someone whose account exists and only
waits for an administrator. The sign-in callback notes the pending identity for its request,
and the callback route, put in front of Chainlit's, sends that browser to
`/login?error=accountPending` instead: the login form shows `auth.login.errors.accountPending`
from `.chainlit/translations` in the browser's language.
"""

from __future__ import annotations

from contextvars import ContextVar

from chainlit import server as chainlit_server
from fastapi import APIRouter, Request, Response

PENDING_ERROR = "accountPending"

# Set by the route for its request; the sign-in callback runs inside it, in the same task.
_NOTED: ContextVar[list[bool] | None] = ContextVar("awaiting_approval", default=None)

router = APIRouter()


def note_awaiting_approval() -> None:
    """The identity of this sign-in has an account that waits for approval."""
    noted = _NOTED.get()
    if noted is not None:
        noted.append(True)


@router.get("/auth/oauth/{provider_id}/callback")
async def oauth_callback(
    provider_id: str,
    request: Request,
    error: str | None = None,
    code: str | None = None,
    state: str | None = None,
) -> Response:
    noted: list[bool] = []
    token = _NOTED.set(noted)
    try:
        response = await chainlit_server.oauth_callback(provider_id, request, error, code, state)
    finally:
        _NOTED.reset(token)
    location = response.headers.get("location", "")
    if noted and "error=oauthSignin" in location:
        response.headers["location"] = location.replace(
            "error=oauthSignin", f"error={PENDING_ERROR}"
        )
    return response
