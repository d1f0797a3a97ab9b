"""Seed 001's review formats in Pydantic v2: what each reviewer answers, the feedback an author
receives, the decision that ends or continues the loop, and what a run records.

The four answer shapes are the seed's "新格式" field for field; each reviewer also returns the
seed's legacy `score` (0-100), kept for display and for the `score_declined` stop, never the
main signal. Counts the seed lets the model state (`critical_issues_count`,
`total_improvements`) are recomputed from the list, so they can never disagree with it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator

Priority = Literal["high", "medium", "low"]
Perspective = Literal["red_team", "blue_team", "client"]
Reviewer = Literal["red_team", "blue_team", "client", "judge"]
# The seed's four stops, and two that say the review itself could not finish its job:
# reviewer_failed (the red team, the only source of improvements, gave no readable answer, so
# "no high-priority issue" would be a pass nobody earned) and unplaced_issues (high-priority
# issues remain, but none names a section an author could revise).
StopReason = Literal[
    "quality_sufficient",
    "no_convergence",
    "max_rounds",
    "score_declined",
    "reviewer_failed",
    "unplaced_issues",
]
RevisionOutcome = Literal["changed", "unchanged", "failed", "rejected"]
PERSPECTIVES: tuple[Perspective, ...] = ("red_team", "blue_team", "client")
PRIORITIES: tuple[Priority, ...] = ("high", "medium", "low")


def _priority(value: Any) -> Any:
    if isinstance(value, str):
        lowered = value.strip().lower()
        aliases = {"高": "high", "中": "medium", "低": "low", "critical": "high"}
        return aliases.get(lowered, lowered)
    return value


def _score(value: Any) -> Any:
    """A legacy score out of range is clamped: it is shown, never trusted."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return max(0, min(100, round(value)))
    return value


class _Answer(BaseModel):
    """A reviewer's answer. Unknown keys are ignored and every list defaults to empty, so an
    answer must carry at least one of its role's own fields (`OWN_FIELDS`): `{}` or
    `{"verdict": "fine"}` is no review at all, not a review that found nothing."""

    model_config = ConfigDict(extra="ignore")
    OWN_FIELDS: ClassVar[tuple[str, ...]] = ()
    ROLE: ClassVar[str] = "reviewer"

    score: int | None = Field(default=None, ge=0, le=100, description="legacy score, 0-100")

    @model_validator(mode="before")
    @classmethod
    def _carries_own_fields(cls, data: Any) -> Any:
        if isinstance(data, dict) and cls.OWN_FIELDS and not any(k in data for k in cls.OWN_FIELDS):
            raise ValueError(
                f"the answer carries none of the {cls.ROLE}'s fields "
                f"({', '.join(cls.OWN_FIELDS)}); give them, with an empty list where there "
                "is nothing to report"
            )
        return data

    @field_validator("score", mode="before")
    @classmethod
    def _clamp(cls, value: Any) -> Any:
        return _score(value)


# --- red team -----------------------------------------------------------------------


class Improvement(BaseModel):
    """A specific gap in one section and what to add: never "缺乏深度"."""

    agent_id: str = Field(min_length=1, description="the id of the section, e.g. sec-02")
    category: str = Field(min_length=1, description="what kind of content, e.g. user_persona")
    issue: str = Field(min_length=1, description="the specific missing or wrong content")
    expected: str = Field(min_length=1, description="what to add or change, concretely")
    priority: Priority = "medium"

    @field_validator("priority", mode="before")
    @classmethod
    def _known_priority(cls, value: Any) -> Any:
        return _priority(value)


class RedTeamReview(_Answer):
    OWN_FIELDS = ("improvements",)
    ROLE = "red team"

    improvements: list[Improvement] = Field(default_factory=list)
    critical_issues_count: int = 0
    total_improvements: int = 0

    @model_validator(mode="after")
    def _counts(self) -> RedTeamReview:
        self.critical_issues_count = sum(1 for i in self.improvements if i.priority == "high")
        self.total_improvements = len(self.improvements)
        return self


# --- blue team -----------------------------------------------------------------------


class KeepAsIs(BaseModel):
    agent_id: str = Field(min_length=1)
    aspect: str = Field(min_length=1)
    reason: str = ""


class EnhancementSuggestion(BaseModel):
    agent_id: str = Field(min_length=1)
    aspect: str = Field(min_length=1)
    suggestion: str = Field(min_length=1)


class BlueTeamReview(_Answer):
    OWN_FIELDS = ("keep_as_is", "enhancement_suggestions")
    ROLE = "blue team"

    keep_as_is: list[KeepAsIs] = Field(default_factory=list)
    enhancement_suggestions: list[EnhancementSuggestion] = Field(default_factory=list)


# --- client ------------------------------------------------------------------------------


class BusinessGap(BaseModel):
    aspect: str = Field(min_length=1)
    gap: str = Field(min_length=1)
    impact: str = ""
    required_info: str = ""


class ClientReview(_Answer):
    OWN_FIELDS = ("business_gaps", "market_concerns", "feasibility_concerns")
    ROLE = "client"

    business_gaps: list[BusinessGap] = Field(default_factory=list)
    market_concerns: list[str] = Field(default_factory=list)
    feasibility_concerns: list[str] = Field(default_factory=list)


# --- judge -------------------------------------------------------------------------------


class PrioritizedImprovement(BaseModel):
    priority: int = Field(ge=1, description="1 is the most important")
    agent_id: str = Field(min_length=1)
    task: str = Field(min_length=1)
    rationale: str = ""


class ConsensusIssue(BaseModel):
    """A problem more than one reviewer raised (seed: "三方都提到的问题")."""

    issue: str = Field(min_length=1)
    agent_id: str = ""
    raised_by: list[str] = Field(default_factory=list)


class ConflictingView(BaseModel):
    """Where the red and blue teams disagree (seed: "红蓝对抗中的争议点"), and the ruling."""

    aspect: str = Field(min_length=1)
    agent_id: str = ""
    red_team: str = ""
    blue_team: str = ""
    ruling: str = ""


class JudgeReview(_Answer):
    OWN_FIELDS = ("prioritized_improvements", "consensus_issues", "conflicting_views")
    ROLE = "judge"

    prioritized_improvements: list[PrioritizedImprovement] = Field(default_factory=list)
    consensus_issues: list[ConsensusIssue] = Field(default_factory=list)
    conflicting_views: list[ConflictingView] = Field(default_factory=list)

    @field_validator("consensus_issues", mode="before")
    @classmethod
    def _plain_issues(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"issue": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("conflicting_views", mode="before")
    @classmethod
    def _plain_views(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"aspect": v} if isinstance(v, str) else v for v in value]
        return value


ANSWER_MODELS: dict[Reviewer, type[_Answer]] = {
    "red_team": RedTeamReview,
    "blue_team": BlueTeamReview,
    "client": ClientReview,
    "judge": JudgeReview,
}


# --- feedback to the authors (seed, 第四步) ---------------------------------------------


class IterationContext(BaseModel):
    round: int
    previous_output_summary: str = ""
    what_worked_well: list[str] = Field(default_factory=list)
    what_needs_improvement: list[str] = Field(default_factory=list)


class SpecificTask(BaseModel):
    task_id: int
    category: str
    instruction: str
    example: str = ""
    validation: str = ""
    priority: Priority = "medium"


class SectionFeedback(BaseModel):
    agent_id: str
    iteration_context: IterationContext
    specific_tasks: list[SpecificTask] = Field(default_factory=list)
    avoid_changes_to: list[str] = Field(default_factory=list)


class NextAction(BaseModel):
    """`_determine_next_action`'s answer: stop with a named reason, or iterate on `focus_on`."""

    action: Literal["approve", "iterate"]
    reason: StopReason | None = None
    detail: str = Field(default="", description="for reviewer_failed: the reviewer and its error")
    focus_on: list[str] = Field(default_factory=list)
    improvements: list[Improvement] = Field(
        default_factory=list, description="every finding of the round, document-wide ones too"
    )


# --- what a run records ------------------------------------------------------------------


class ReviewerFailure(BaseModel):
    reviewer: Reviewer
    reason: str


class SectionRevision(BaseModel):
    """One author's work in a round: the section before and after, or why it is unchanged."""

    agent_id: str
    title: str
    before: str
    after: str
    failed: str = Field(default="", description="why the author failed; the section is unchanged")
    rejected: str = Field(
        default="", description="why the author's answer was refused; the section is unchanged"
    )

    @property
    def changed(self) -> bool:
        return not self.failed and not self.rejected and self.before != self.after

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> RevisionOutcome:
        """What the revision did, for the round table, the JSON and the trajectory's words."""
        if self.failed:
            return "failed"
        if self.rejected:
            return "rejected"
        return "changed" if self.before != self.after else "unchanged"


class ReviewRound(BaseModel):
    round: int
    red_team: RedTeamReview | None = None
    blue_team: BlueTeamReview | None = None
    client: ClientReview | None = None
    judge: JudgeReview | None = None
    failures: list[ReviewerFailure] = Field(default_factory=list)
    improvements: list[Improvement] = Field(
        default_factory=list, description="the round's improvements naming a known section"
    )
    document_wide: list[Improvement] = Field(
        default_factory=list,
        description="improvements that name no section, even after asking: counted, not revised",
    )
    feedback: dict[str, SectionFeedback] = Field(default_factory=dict)
    decision: NextAction | None = None
    revisions: list[SectionRevision] = Field(default_factory=list)
    edited_by_user: list[str] = Field(default_factory=list)

    @property
    def all_improvements(self) -> list[Improvement]:
        return [*self.improvements, *self.document_wide]

    @property
    def total_improvements(self) -> int:
        return len(self.all_improvements)

    def count_by_priority(self) -> dict[str, int]:
        return {p: sum(1 for i in self.all_improvements if i.priority == p) for p in PRIORITIES}

    def outcomes(self) -> dict[str, int]:
        """How many revisions ended changed / unchanged / failed / rejected."""
        counts = dict.fromkeys(("changed", "unchanged", "failed", "rejected"), 0)
        for revision in self.revisions:
            counts[revision.outcome] += 1
        return counts

    def scores_by_reviewer(self) -> dict[str, int]:
        return {
            name: review.score
            for name, review in (
                ("red_team", self.red_team),
                ("blue_team", self.blue_team),
                ("client", self.client),
                ("judge", self.judge),
            )
            if review is not None and review.score is not None
        }

    @property
    def score(self) -> float | None:
        """The reviewers' mean legacy score this round (None: no reviewer gave one)."""
        scores = [
            r.score
            for r in (self.red_team, self.blue_team, self.client, self.judge)
            if r is not None and r.score is not None
        ]
        return round(sum(scores) / len(scores), 1) if scores else None
