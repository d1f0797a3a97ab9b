"""`GET /reqstudio/health` on Chainlit's own server: for a container's or a load balancer's
health check. 200 `{"status": "ok"}` while the app serves and its database answers a query;
503 `{"status": "unavailable", "database": "..."}` while it does not. The server answers
only once the app's start-up has finished (schema made, pools open), so a 200 also says that
start-up went through. Nothing about users or threads is in the answer, and it needs no
sign-in (like the login page, it is still behind the rule that keeps an app without sign-in
on this machine)."""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy import text
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from reqstudio.pools import data_engine

HEALTH_PATH = "/reqstudio/health"
# Below a health check's usual timeout (5 s), so that the check hears why.
DATABASE_TIMEOUT = 3.0

log = logging.getLogger("reqstudio")


def health_route(database_url: str) -> Route:
    async def health(request: Request) -> JSONResponse:
        try:
            async with asyncio.timeout(DATABASE_TIMEOUT):
                async with data_engine(database_url).connect() as connection:
                    await connection.execute(text("SELECT 1"))
        except Exception as error:
            reason = (
                "no answer in time" if isinstance(error, TimeoutError) else type(error).__name__
            )
            log.warning("health check: the database is unavailable (%s)", reason)
            return JSONResponse(
                {"status": "unavailable", "database": reason},
                status_code=503,
                headers={"Cache-Control": "no-store"},
            )
        return JSONResponse({"status": "ok"}, headers={"Cache-Control": "no-store"})

    return Route(HEALTH_PATH, health, methods=["GET"])
