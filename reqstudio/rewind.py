"""Where a mode's memory rewinds to when the user edits or regenerates a message."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def first_turn_of(turns: Sequence[Any], message_id: str | None) -> int | None:
    """The index of the first turn recorded for the browser message `message_id` (turns carry
    a `message_id`), or None: no id, or a turn of an older memory written without ids."""
    if not message_id:
        return None
    return next((i for i, turn in enumerate(turns) if turn.message_id == message_id), None)
