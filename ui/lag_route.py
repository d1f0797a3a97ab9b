"""`GET /reqstudio/loop-lag` on Chainlit's own server, while `REQSTUDIO_LOOP_MONITOR` is on."""

from __future__ import annotations

from chainlit.server import app
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from reqstudio.loop_monitor import LoopLagMonitor


def expose_loop_lag(monitor: LoopLagMonitor) -> None:
    async def loop_lag(request: Request) -> JSONResponse:
        figures = monitor.snapshot()
        if request.query_params.get("reset"):
            monitor.reset()
        return JSONResponse(figures)

    # before Chainlit's catch-all route, which serves the web app for any other path
    app.router.routes.insert(0, Route("/reqstudio/loop-lag", loop_lag, methods=["GET"]))
