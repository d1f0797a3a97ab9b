"""What a review run reports while it works. The engine yields these; the browser turns them
into Steps, the CLI into lines on stderr, the tests into assertions.

Each is a member of the one event union (`reqstudio.events`): `type` is the core type (a round
and each reviewer and author are steps; the author's streamed text is a token), `name` the
Review name below."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from reqstudio import events as core
from reqstudio.document_model import DocumentStructure
from reqstudio.failures import say
from reqstudio.modes.review.models import (
    Improvement,
    NextAction,
    Reviewer,
    ReviewRound,
    SectionFeedback,
    SectionRevision,
)


class _OfReviewer(BaseModel):
    """What an event about one reviewer's part of a round carries (the reviewer names the
    step)."""

    STEP_FIELD: ClassVar[str] = "reviewer"
    round: int
    reviewer: Reviewer


class _OfAuthor(BaseModel):
    """What an event about one author's section of a round carries (an author's step is
    named by `agent_id`)."""

    round: int
    agent_id: str


class RoundStarted(core.StepStarted):
    name: Literal["round_started"] = "round_started"
    step: str = "round"
    round: int


class ReviewerFinished(_OfReviewer, core.StepFinished):
    name: Literal["reviewer_finished"] = "reviewer_finished"
    review: Any  # RedTeamReview | BlueTeamReview | ClientReview | JudgeReview


class ReviewerFailed(_OfReviewer, core.StepFinished):
    name: Literal["reviewer_failed"] = "reviewer_failed"
    outcome: core.Outcome = "failed"
    code: str  # why, as a reqstudio.failures.FailureCode ...
    values: dict[str, Any] = Field(default_factory=dict)  # ... and what its words are filled with

    @property
    def reason(self) -> str:
        return self.text("en")

    def text(self, language: str) -> str:
        return say(self.code, self.values, language)


class DecisionMade(core.StepFinished):
    name: Literal["decision_made"] = "decision_made"
    step: str = "decision"
    round: int
    decision: NextAction
    feedback: dict[str, SectionFeedback]
    summary: str  # the round's review summary, as it went to the log
    record: ReviewRound | None = None  # the round so far: issue ids, statuses, checks


class AuthorStarted(_OfAuthor, core.StepStarted):
    name: Literal["author_started"] = "author_started"
    STEP_FIELD = "agent_id"
    title: str


class AuthorToken(_OfAuthor, core.Token):
    name: Literal["author_token"] = "author_token"
    text: str


class AuthorReset(_OfAuthor, core.StepReset):
    """The author's stream broke; it writes again (discard what was shown)."""

    name: Literal["author_reset"] = "author_reset"
    STEP_FIELD = "agent_id"


class SectionRevised(core.StepFinished):
    name: Literal["section_revised"] = "section_revised"
    round: int
    revision: SectionRevision

    def model_post_init(self, context: Any) -> None:
        self.step = self.step or self.revision.agent_id
        if self.revision.failed:
            self.outcome = "failed"


class RoundFinished(core.StepFinished):
    name: Literal["round_finished"] = "round_finished"
    step: str = "round"
    round: int
    record: ReviewRound
    document: DocumentStructure


class Paused(core.Paused):
    """`REVIEW_PAUSE_AFTER_ROUND`: the round is decided and the authors have not revised yet;
    the run waits for the user's section edits, dropped and added findings (resume the thread
    with a `ReviewDecision`)."""

    name: Literal["paused"] = "paused"
    round: int
    document: DocumentStructure
    focus_on: list[str] = Field(default_factory=list)
    findings: list[Improvement] = Field(default_factory=list)  # the round's, with issue ids


class RunFinished(core.Finished):
    name: Literal["run_finished"] = "run_finished"
    result: Any  # ReviewResult


class RunFailed(core.Failed):
    name: Literal["run_failed"] = "run_failed"
    partial: Any  # ReviewResult with the rounds finished so far
    remedy: str = "retry"  # what a resumed run needs changed (reqstudio.errors.Remedy)

    @property
    def message(self) -> str:
        return self.text("en")

    def text(self, language: str) -> str:
        """Why the run failed, in `language`, from the catalogue."""
        return say(self.code, self.values, language)


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
