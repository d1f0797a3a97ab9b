"""While the database is away, the routes that need it say so in the user's language.

Chainlit answers a sign-in whose account lookup failed with a bare 500, and the history list of
a signed-in user with `404 User not found` (its user lookup fails quietly): the browser showed
an English "Not Found" toast, and a list whose query found no pool connection in time a 500.
All answer `503` instead, with a sentence in the language the
browser asks for (`Accept-Language`); the login form shows its own translation of a 503
(`auth.login.errors["service unavailable"]` in `.chainlit/translations`).
"""

from __future__ import annotations

import logging
from contextvars import ContextVar

from chainlit import server as chainlit_server
from chainlit.data import get_data_layer
from chainlit.server import GetThreadsRequest, UserParam
from fastapi import APIRouter, HTTPException, Request

from reqstudio.errors import describe_database_away, is_database_failure
from reqstudio.messages import language_code

log = logging.getLogger("reqstudio")


def request_language(request: Request) -> str:
    """'zh' or 'en', from the browser's Accept-Language (its first language)."""
    return language_code(request.headers.get("accept-language", "").split(",")[0].strip())


def database_unavailable(request: Request, what: str) -> HTTPException:
    return HTTPException(
        status_code=503, detail=describe_database_away(what, request_language(request))
    )


# Chainlit turns an exception in the sign-in callback into "wrong password" (401): the callback
# notes here, for the sign-in route of the same request, that the database was the cause.
_SIGN_IN_DATABASE_FAILURE: ContextVar[BaseException | None] = ContextVar(
    "sign_in_database_failure", default=None
)


def note_sign_in_database_failure(error: BaseException) -> None:
    _SIGN_IN_DATABASE_FAILURE.set(error)


def sign_in_database_failure() -> BaseException | None:
    return _SIGN_IN_DATABASE_FAILURE.get()


router = APIRouter()


@router.post("/project/threads")
async def list_threads(request: Request, payload: GetThreadsRequest, current_user: UserParam):
    try:
        return await chainlit_server.get_user_threads(request, payload, current_user)
    except HTTPException as error:
        layer = get_data_layer()
        if error.status_code == 404 and not getattr(layer, "available", True):
            log.warning("history list refused: the database is unavailable")
            raise database_unavailable(request, "threads") from None
        raise
    except Exception as error:  # e.g. no pool connection within its timeout, under load
        if not is_database_failure(error):
            raise
        log.warning("history list refused: %s", type(error).__name__)
        raise database_unavailable(request, "threads") from None
