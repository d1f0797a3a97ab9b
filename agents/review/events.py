"""What a review run reports while it works. The engine yields these; the browser turns them
into Steps, the CLI into lines on stderr, the tests into assertions."""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.review.models import (
    Improvement,
    NextAction,
    Reviewer,
    ReviewRound,
    SectionFeedback,
    SectionRevision,
)
from reqstudio.document_model import DocumentStructure


@dataclass
class RoundStarted:
    round: int


@dataclass
class ReviewerFinished:
    round: int
    reviewer: Reviewer
    review: object  # RedTeamReview | BlueTeamReview | ClientReview | JudgeReview


@dataclass
class ReviewerFailed:
    round: int
    reviewer: Reviewer
    reason: str
    reason_zh: str = ""


@dataclass
class DecisionMade:
    round: int
    decision: NextAction
    feedback: dict[str, SectionFeedback]
    summary: str  # the round's review summary, as it went to the log
    record: ReviewRound | None = None  # the round so far: issue ids, statuses, checks


@dataclass
class AuthorStarted:
    round: int
    agent_id: str
    title: str


@dataclass
class AuthorToken:
    round: int
    agent_id: str
    text: str


@dataclass
class AuthorReset:
    """The author's stream broke; it writes again (discard what was shown)."""

    round: int
    agent_id: str


@dataclass
class SectionRevised:
    round: int
    revision: SectionRevision


@dataclass
class RoundFinished:
    round: int
    record: ReviewRound
    document: DocumentStructure


@dataclass
class Paused:
    """`REVIEW_PAUSE_AFTER_ROUND`: the round is decided and the authors have not revised yet;
    the run waits for the user's section edits, dropped and added findings (resume the thread
    with a `ReviewDecision`)."""

    round: int
    document: DocumentStructure
    focus_on: list[str] = field(default_factory=list)
    findings: list[Improvement] = field(default_factory=list)  # the round's, with issue ids


@dataclass
class RunFinished:
    result: object  # ReviewResult


@dataclass
class RunFailed:
    message: str
    message_zh: str
    partial: object  # ReviewResult with the rounds finished so far


ReviewEvent = (
    RoundStarted
    | ReviewerFinished
    | ReviewerFailed
    | DecisionMade
    | AuthorStarted
    | AuthorToken
    | AuthorReset
    | SectionRevised
    | RoundFinished
    | Paused
    | RunFinished
    | RunFailed
)
