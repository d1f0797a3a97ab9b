"""Seed 000's console trail: every `[日志] …` line the reference implementation prints, emitted
as the run goes; the catalogue (`srs.trail.*`) says each in Chinese as the seed writes it and
in English.

Nodes call `say(runtime, key, ...)`: the line goes to the `reqstudio.srs` logger (in Chinese,
as the seed) and into the run's event stream as a `Trail` event, which the CLI prints on
stderr in the user's language (`--quiet` silences it) and the browser ignores (it has steps).
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.runtime import Runtime

from reqstudio.modes.srs.events import Trail

log = logging.getLogger("reqstudio.srs")


def say(runtime: Runtime[Any], key: str, **params: Any) -> None:
    trail = Trail(key=key, values=params)
    log.info(trail.text("zh"))
    runtime.stream_writer(trail)
