"""How an SRS generation ended, as every mode says it (`reqstudio.outcomes`): the browser's mark
and `reqstudio srs generate`'s exit code are both read from `srs_outcome`.

The pipeline has no verdict of its own to fail (the evaluation against a reference is a separate
step): a finished run is complete, a failed agent fails it (what it produced is kept, never as
the result), the stop button or Ctrl-C stops it."""

from __future__ import annotations

from typing import Literal

from reqstudio.outcomes import Outcome

SrsEnding = Literal["done", "failed", "stopped"]

# Every ending is named here: `srs_outcome` refuses one that is not.
ENDING_OUTCOMES: dict[SrsEnding, Outcome] = {
    "done": Outcome.PASSED,
    "failed": Outcome.FAILED,
    "stopped": Outcome.INTERRUPTED,
}


def srs_outcome(ending: SrsEnding) -> Outcome:
    return ENDING_OUTCOMES[ending]
