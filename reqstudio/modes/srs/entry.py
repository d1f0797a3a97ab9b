"""SRS mode behind the one entry shape (`reqstudio.events.RunEntry`)."""

from __future__ import annotations

from reqstudio.events import checkpointed_entry
from reqstudio.modes.srs.engine import run_srs

run = checkpointed_entry(
    run_srs,
    """`Started`, then `run_srs`'s events for an `SrsRequest`. `options`: `run_srs`'s own
    keywords (`tracker`, `log_dir`, and on resuming after a pause the user's `decision`).""",
)
