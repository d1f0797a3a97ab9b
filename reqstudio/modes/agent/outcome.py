"""How an Agent run ended, as every mode says it (`reqstudio.outcomes`): the browser's mark and
`reqstudio agent`'s exit code are both read from `agent_outcome`.

A whole answer is the pass. The time limit reached while the answer was being written finishes
the run without one (what was written and the results gathered are kept, not given as the
answer); a model failure, or an "answer" that only gives back the app's own instructions, is a
failure; the stop button or Ctrl-C stops it. A tool-phase limit (calls, time, a loop) only
hands over to the answer: the run still ends by how its answer ended."""

from __future__ import annotations

from typing import Literal

from reqstudio.modes.agent.events import Failed
from reqstudio.outcomes import Outcome

AgentEnding = Literal["answered", "time_limit", "no_answer", "failed", "stopped"]

# Every ending is named here: `agent_outcome` refuses one that is not.
ENDING_OUTCOMES: dict[AgentEnding, Outcome] = {
    "answered": Outcome.PASSED,
    "time_limit": Outcome.WITHOUT_PASS,
    "no_answer": Outcome.FAILED,
    "failed": Outcome.FAILED,
    "stopped": Outcome.INTERRUPTED,
}


def ending_of(failure: Failed | None, *, echoed: bool = False) -> AgentEnding:
    """A run's ending from its `Failed` event (None: it answered) and whether its answer only
    gave back the app's instructions."""
    if failure is not None:
        return "time_limit" if failure.limit == "time" else "failed"
    return "no_answer" if echoed else "answered"


def agent_outcome(ending: AgentEnding) -> Outcome:
    return ENDING_OUTCOMES[ending]
