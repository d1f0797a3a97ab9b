"""`GET /reqstudio/loop-lag` on Chainlit's own server, while `REQSTUDIO_LOOP_MONITOR` is on."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from reqstudio.loop_monitor import LoopLagMonitor


def loop_lag_route(monitor: LoopLagMonitor) -> Route:
    async def loop_lag(request: Request) -> JSONResponse:
        figures = monitor.snapshot()
        if request.query_params.get("reset"):
            monitor.reset()
        return JSONResponse(figures)

    return Route("/reqstudio/loop-lag", loop_lag, methods=["GET"])
