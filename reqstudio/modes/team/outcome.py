"""How a team run ended, as every mode says it (`reqstudio.outcomes`): the browser's closing
mark and `reqstudio team`'s exit code are both read from `team_outcome`.

Root answering the user is the team's pass. A limit, a loop, or nobody left with work ends the
run without one (the record is kept); root failing is a failure; the stop button or Ctrl-C
stops it. An agent other than root that failed does not change the ending: root heard of it and
answered, or did not."""

from __future__ import annotations

from reqstudio.modes.team.events import RunFinished, StopReason
from reqstudio.outcomes import Outcome

# Every stop reason is named here: `team_outcome` refuses one that is not.
STOP_OUTCOMES: dict[StopReason, Outcome] = {
    "answered": Outcome.PASSED,
    "idle": Outcome.WITHOUT_PASS,
    "messages": Outcome.WITHOUT_PASS,
    "time": Outcome.WITHOUT_PASS,
    "tokens": Outcome.WITHOUT_PASS,
    "loop": Outcome.WITHOUT_PASS,
    "stopped": Outcome.INTERRUPTED,
    "failed": Outcome.FAILED,
}


def team_outcome(done: RunFinished) -> Outcome:
    return STOP_OUTCOMES[done.reason]
