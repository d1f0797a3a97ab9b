"""A review that failed midway: what its finished rounds leave, so that nothing is lost.

The document of a failed run is the one its last finished round left (state is saved per
node, so it is always a whole version, never a half-revised one), marked incomplete at its
top; the JSON is every review so far, marked incomplete. The CLI writes both, the browser
offers both as downloads."""

from __future__ import annotations

from typing import Any

from reqstudio.messages import text
from reqstudio.modes.review.engine import ReviewResult


def revised_through(result: ReviewResult) -> int:
    """The last round whose revisions changed the document (0: none did)."""
    return max(
        (r.round for r in result.rounds if any(v.changed for v in r.revisions)),
        default=0,
    )


def failed_round(result: ReviewResult) -> int:
    """The round the run failed in: after the last finished one, or the last one when it was
    decided but not revised."""
    if not result.rounds:
        return 1
    last = result.rounds[-1]
    finished = last.decision is not None and (
        last.decision.action == "approve" or bool(last.revisions)
    )
    return last.round + 1 if finished else last.round


def incomplete_notice(result: ReviewResult, error: str, language: str | None = None) -> str:
    """The line that opens an incomplete document: where the run stopped, and which version
    this is."""
    failed, revised = failed_round(result), revised_through(result)
    language = language or result.language
    version = (
        text("review.engine.incomplete_revised", language, revised=revised)
        if revised
        else text("review.engine.incomplete_original", language)
    )
    return text(
        "review.engine.incomplete_notice", language, failed=failed, error=error, version=version
    )


def incomplete_markdown(result: ReviewResult, error: str, language: str | None = None) -> str:
    """The last finished version, with `incomplete_notice` as its first line."""
    return incomplete_notice(result, error, language) + "\n\n" + result.improved_markdown


def incomplete_json(result: ReviewResult, error: str) -> dict[str, Any]:
    """`reviews_json()` of the finished rounds, plus `complete: false`, the `error` and the
    round the document was last revised in (`revised_through_round`)."""
    return {
        **result.reviews_json(),
        "complete": False,
        "error": error,
        "failed_in_round": failed_round(result),
        "revised_through_round": revised_through(result),
    }
