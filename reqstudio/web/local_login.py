"""`GET /user` for the one local user, when no login is configured.

Chainlit's page asks `GET /user` before it holds a login cookie. With header auth that first
answer is a 401 (an error in the browser console on every page load); the page then logs in
through `POST /auth/header` and asks again. Answering the first `GET /user` with the local user
and the same signed cookie `/auth/header` would set removes the failed round trip.
"""

from __future__ import annotations

from collections.abc import Callable

from chainlit.auth import authenticate_user, create_jwt, get_token_from_cookies, set_auth_cookie
from chainlit.data import get_data_layer
from chainlit.user import User
from fastapi import HTTPException
from fastapi.encoders import jsonable_encoder
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def local_user_route(local_user: Callable[[], User]) -> Route:
    """`GET /user` answering the local user (reqstudio/web/chainlit_seam.py puts it in front of
    Chainlit's own /user route, which answers 401 until the page has logged in)."""

    async def current_user(request: Request) -> JSONResponse:
        token = get_token_from_cookies(dict(request.cookies))
        if token:
            try:
                return JSONResponse(jsonable_encoder(await authenticate_user(token)))
            except HTTPException:
                pass  # signed by another secret or expired: the local user logs in again
        user = local_user()
        shown: User = user
        if data_layer := get_data_layer():
            shown = await data_layer.create_user(user) or user
        response = JSONResponse(jsonable_encoder(shown))
        set_auth_cookie(request, response, create_jwt(user))
        return response

    return Route("/user", current_user, methods=["GET"])
