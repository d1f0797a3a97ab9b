"""The mark a run's closing message starts with, read from the run's outcome
(`reqstudio.outcomes`): the same outcome the command line's exit code is read from, so the chat
and a script checking the exit code never disagree about a run. A run the bundled offline demo
model answered is never ticked: its pass is marked as the demo model's result (a 135M model's
document is for trying the app out, not for use)."""

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
    if outcome is Outcome.PASSED and _demo_model():
        from reqstudio.web.texts import t

        return t("demo_result")
    return MARKS[outcome]


def _demo_model() -> bool:
    from reqstudio.web.session import runtime

    try:
        return runtime().endpoint.embedded
    except RuntimeError:  # no app runtime (a unit test of a closing line)
        return False


def with_mark(outcome: Outcome, text: str) -> str:
    """`text` (a closing line without a mark) after its outcome's mark."""
    return f"{ending_mark(outcome)} {text}"
