"""Seed 000's console trail: every `[日志] …` line the reference implementation prints, emitted
as the run goes; the catalogue (`srs.trail.*`) says each in Chinese as the seed writes it and
in English.

Nodes call `say(runtime, key, ...)`: the line goes to the `reqstudio.srs` logger (in Chinese,
as the seed) and into the run's event stream as a `Trail` event, which the CLI prints on
stderr in the user's language (`--quiet` silences it) and the browser ignores (it has steps).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reqstudio.modes.srs.events import Trail

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from reqstudio.events import BaseEvent

log = logging.getLogger("reqstudio.srs")


def say(runtime: Runtime[Any], key: str, **params: Any) -> None:
    say_to(runtime.stream_writer, key, **params)


def say_to(write: Callable[[BaseEvent], None], key: str, **params: Any) -> None:
    """`say` for a step's call that writes its events itself (`first_call`)."""
    trail = Trail(key=key, values=params)
    log.info(trail.text("zh"))
    write(trail)
