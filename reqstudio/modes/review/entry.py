"""Review mode behind the one entry shape (`reqstudio.events.RunEntry`)."""

from __future__ import annotations

from reqstudio.events import checkpointed_entry
from reqstudio.modes.review.engine import run_review

run = checkpointed_entry(
    run_review,
    """`Started`, then `run_review`'s events for a `ReviewRequest` (None on resuming).
    `options`: `run_review`'s own keywords (`tracker`, and on resuming after a pause the
    user's `decision` or `edits`).""",
)
