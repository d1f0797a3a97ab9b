"""Conditional edges that run on the event loop.

LangGraph runs a plain function given as a conditional edge in a worker thread (LangChain's
`run_in_executor`): a hop to another thread and back at every step, between one model answer
and the next request, in a pool of six workers on a two-core machine shared by every user's
run. A route is pure and quick, so it is made a coroutine that LangGraph awaits in place;
its signature and return annotation (LangGraph reads both) stay the route's.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

R = TypeVar("R")


def on_the_loop(route: Callable[..., R]) -> Callable[..., Awaitable[R]]:
    """`route`, awaited on the event loop instead of run in a worker thread."""

    @functools.wraps(route)
    async def awaited(*args: Any, **kwargs: Any) -> R:
        return route(*args, **kwargs)

    return awaited
