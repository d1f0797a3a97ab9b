"""The review graph's state and the run's context.

State values are plain JSON (Pydantic models dumped), so SQLite checkpoints store and restore
them without custom serialisers; nodes validate them back into models where they work."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from reqstudio.llm import ModelFactory
from reqstudio.usage import UsageTracker


def collect_reviews(current: list[dict] | None, new: list[dict] | None) -> list[dict]:
    """This round's reviewer outcomes: the Send branches append, a new round (None) clears."""
    if new is None:
        return []
    return [*(current or []), *new]


class ReviewState(TypedDict):
    original: str  # the document as it came in (Markdown)
    document: dict[str, Any]  # DocumentStructure, revised round by round
    language: str  # "zh" or "en"
    max_rounds: int
    pause_after_round: bool
    round: int  # the round under way (1-based); 0 before the first
    reviews: Annotated[list[dict[str, Any]], collect_reviews]  # this round's three perspectives
    judge: dict[str, Any] | None  # this round's judge outcome
    rounds: list[dict[str, Any]]  # ReviewRound per round, finished or under way
    stop_reason: str | None


class PerspectiveTask(TypedDict):
    """What one `Send` branch gets: its perspective and the document of this round."""

    perspective: str
    round: int
    document: dict[str, Any]
    language: str
    earlier_issues: str  # the red team's memory: earlier issues with ids ("" in round 1)
    checks: str  # the last revision's validations and avoid_changes_to to check ("" if none)


@dataclass
class ReviewContext:
    factory: ModelFactory
    tracker: UsageTracker


def initial_state(
    original: str, document: dict[str, Any], language: str, max_rounds: int, pause: bool
) -> ReviewState:
    return ReviewState(
        original=original,
        document=document,
        language=language,
        max_rounds=max_rounds,
        pause_after_round=pause,
        round=0,
        reviews=[],
        judge=None,
        rounds=[],
        stop_reason=None,
    )
