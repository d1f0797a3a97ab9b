"""How a Chat answer ended, as every mode says it (`reqstudio.outcomes`): the browser's mark and
`reqstudio chat`'s exit code are both read from `chat_outcome`.

A whole answer is the pass. The bundled offline model's answers are bounded on purpose (it
loops when left free): reaching that bound ends the answer without a pass. Every other answer
that did not end whole is a failure; the stop button or Ctrl-C stops it."""

from __future__ import annotations

from typing import Literal

from reqstudio.calls import IncompleteAnswerError
from reqstudio.outcomes import Outcome

ChatEnding = Literal["answered", "truncated", "failed", "stopped"]

# Every ending is named here: `chat_outcome` refuses one that is not.
ENDING_OUTCOMES: dict[ChatEnding, Outcome] = {
    "answered": Outcome.PASSED,
    "truncated": Outcome.WITHOUT_PASS,
    "failed": Outcome.FAILED,
    "stopped": Outcome.INTERRUPTED,
}


def failed_ending(error: BaseException, embedded: bool) -> ChatEnding:
    """A failed answer's ending: "truncated" when the bundled model reached its bound."""
    bounded = isinstance(error, IncompleteAnswerError) and error.reason == "length"
    return "truncated" if embedded and bounded else "failed"


def chat_outcome(ending: ChatEnding) -> Outcome:
    return ENDING_OUTCOMES[ending]
