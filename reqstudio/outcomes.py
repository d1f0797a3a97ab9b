"""How a run ended, in the five words every mode shares.

Each mode has one function that maps its finished run (its stop reason, the reviewers or agents
that failed, what its result still holds) to an `Outcome`. The browser's mark
(`reqstudio.web.endings.ending_mark`) and the command line's exit code (`reqstudio.cli.exit_code`) are both
read from that outcome, never decided apart, so a script checking the exit code and a person
looking at the chat are told the same thing. Standard library only: `reqstudio --help` imports
it through the CLI harness.
"""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    PASSED = "passed"  # complete, and where the mode judges its result, judged good
    WITHOUT_PASS = "without_pass"  # finished, its result written, but not passed or not whole
    INCOMPLETE = "incomplete"  # failed midway; the incomplete result is kept, marked as such
    FAILED = "failed"  # failed; no result
    INTERRUPTED = "interrupted"  # stopped by the user (the stop button, Ctrl-C)
