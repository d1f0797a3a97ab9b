"""The mark a run's closing message starts with, read from the run's outcome
(`reqstudio.outcomes`): the same outcome the command line's exit code is read from, so the chat
and a script checking the exit code never disagree about a run."""

from __future__ import annotations

from reqstudio.outcomes import Outcome

MARKS: dict[Outcome, str] = {
    Outcome.PASSED: "✅",
    Outcome.WITHOUT_PASS: "⚠️",  # exit code 4: finished without a pass
    Outcome.INCOMPLETE: "❌",  # exit code 3: an incomplete result, kept
    Outcome.FAILED: "❌",  # exit code 1
    Outcome.INTERRUPTED: "⏹",  # exit code 130
}


def ending_mark(outcome: Outcome) -> str:
    return MARKS[outcome]


def with_mark(outcome: Outcome, text: str) -> str:
    """`text` (a closing line without a mark) after its outcome's mark."""
    return f"{ending_mark(outcome)} {text}"
