"""Seed 001's review formats in Pydantic v2: what each reviewer answers, the feedback an author
receives, the decision that ends or continues the loop, and what a run records.

The four answer shapes are the seed's "新格式" field for field; each reviewer also returns the
seed's legacy `score` (0-100), kept for display and for the `score_declined` stop, never the
main signal. Counts the seed lets the model state (`critical_issues_count`,
`total_improvements`) are recomputed from the list, so they can never disagree with it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    computed_field,
    field_validator,
    model_validator,
)

from reqstudio.answers import answer_model
from reqstudio.failures import said_or
from reqstudio.said_reasons import SaidReason

Priority = Literal["high", "medium", "low"]
Perspective = Literal["red_team", "blue_team", "client"]
Reviewer = Literal["red_team", "blue_team", "client", "judge"]
# The seed's four stops, and two that say the review itself could not finish its job:
# reviewer_failed (the red team, the only source of improvements, gave no readable answer, so
# "no high-priority issue" would be a pass nobody earned) and unplaced_issues (high-priority
# issues remain, but none names a section an author could revise); and the seed's
# "无新的 high priority 问题" read with the issues' statuses: no_new_high_priority (the
# high-priority issues left all persist from earlier rounds).
StopReason = Literal[
    "quality_sufficient",
    "no_convergence",
    "max_rounds",
    "score_declined",
    "reviewer_failed",
    "unplaced_issues",
    "no_new_high_priority",
]
RevisionOutcome = Literal["changed", "unchanged", "failed", "rejected"]
IssueStatus = Literal["new", "persisting", "resolved", "regressed"]
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


def _id_list(value: Any) -> Any:
    """Issue ids as a list of strings: a single id or null is accepted as well."""
    if value is None:
        return []
    if isinstance(value, str | int):
        value = [value]
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return value


class _Answer(BaseModel):
    """A reviewer's answer. Unknown keys are ignored; the role's own fields (`OWN_FIELDS`, the
    lists its prompt asks for: those it declares without a default) are required, so `{}` or
    `{"verdict": "fine"}` is no review at all, not a review that found nothing, and an empty
    list counts only when it was sent."""

    model_config = ConfigDict(extra="ignore")
    OWN_FIELDS: ClassVar[tuple[str, ...]] = ()
    ROLE: ClassVar[str] = "reviewer"

    score: int | None = Field(default=None, ge=0, le=100, description="legacy score, 0-100")

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls.OWN_FIELDS = tuple(name for name, f in cls.model_fields.items() if f.is_required())

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
    # Optional: a reviewer that leaves them out still gives a valid answer.
    issue_id: str | None = Field(
        default=None, description="the id of the earlier issue (I-n) this finding repeats"
    )
    example: str = Field(default="", description="an example of the expected content")

    @field_validator("priority", mode="before")
    @classmethod
    def _known_priority(cls, value: Any) -> Any:
        return _priority(value)

    @field_validator("issue_id", mode="before")
    @classmethod
    def _blank_id(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        return str(value).strip()


class CheckVerdict(BaseModel):
    """The red team's word on one promise of the last revision (a validation or a kept aspect)."""

    check_id: str = Field(min_length=1)
    holds: bool | None = None
    note: str = ""

    @field_validator("check_id", mode="before")
    @classmethod
    def _text_id(cls, value: Any) -> Any:
        return str(value).strip() if isinstance(value, int | str) else value

    @field_validator("holds", mode="before")
    @classmethod
    def _verdict(cls, value: Any) -> Any:
        """A verdict that is neither yes nor no is no verdict (not a reason to re-ask)."""
        if isinstance(value, bool) or value is None:
            return value
        words = {"true": True, "yes": True, "是": True, "成立": True,
                 "false": False, "no": False, "否": False, "不成立": False}  # fmt: skip
        return words.get(str(value).strip().lower())


@answer_model("ReviewPanel")
class RedTeamReview(_Answer):
    ROLE = "red team"

    improvements: list[Improvement]
    critical_issues_count: int = 0
    total_improvements: int = 0
    # Optional: earlier issues now fixed, and the checks of the last round.
    resolved_issues: list[str] = Field(
        default_factory=list, description="ids of earlier issues the document now fixes"
    )
    checks: list[CheckVerdict] = Field(default_factory=list)

    @field_validator("resolved_issues", mode="before")
    @classmethod
    def _resolved_list(cls, value: Any) -> Any:
        return _id_list(value)

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


@answer_model("ReviewPanel")
class BlueTeamReview(_Answer):
    ROLE = "blue team"

    keep_as_is: list[KeepAsIs]
    enhancement_suggestions: list[EnhancementSuggestion]


# --- client ------------------------------------------------------------------------------


class BusinessGap(BaseModel):
    aspect: str = Field(min_length=1)
    gap: str = Field(min_length=1)
    impact: str = ""
    required_info: str = ""


@answer_model("ReviewPanel")
class ClientReview(_Answer):
    ROLE = "client"

    business_gaps: list[BusinessGap]
    market_concerns: list[str]
    feasibility_concerns: list[str]


# --- judge -------------------------------------------------------------------------------


class PrioritizedImprovement(BaseModel):
    priority: int = Field(ge=1, description="1 is the most important")
    agent_id: str = Field(min_length=1)
    task: str = Field(min_length=1)
    rationale: str = ""
    issue_ids: list[str] = Field(
        default_factory=list, description="the red team findings (I-n) this task ranks"
    )

    @field_validator("issue_ids", mode="before")
    @classmethod
    def _id_list(cls, value: Any) -> Any:
        return _id_list(value)


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
    issue_id: str | None = Field(default=None, description="the red team finding (I-n) at issue")
    upheld: Literal["red_team", "blue_team", "both"] | None = Field(
        default=None, description="whose view the ruling upholds"
    )

    @field_validator("upheld", mode="before")
    @classmethod
    def _side(cls, value: Any) -> Any:
        if isinstance(value, str):
            lowered = value.strip().lower().replace(" ", "_")
            aliases = {
                "red": "red_team",
                "blue": "blue_team",
                "红队": "red_team",
                "蓝队": "blue_team",
            }
            lowered = aliases.get(lowered, lowered)
            # An answer outside the three is no ruling to act on, not a reason to re-ask.
            return lowered if lowered in ("red_team", "blue_team", "both") else None
        return value


@answer_model("ReviewPanel")
class JudgeReview(_Answer):
    ROLE = "judge"

    prioritized_improvements: list[PrioritizedImprovement]
    consensus_issues: list[ConsensusIssue]
    conflicting_views: list[ConflictingView]

    @field_validator("consensus_issues", "conflicting_views", mode="before")
    @classmethod
    def _plain_texts(cls, value: Any, info: ValidationInfo) -> Any:
        """A list of plain texts stands for the entries' issues or aspects."""
        key = {"consensus_issues": "issue", "conflicting_views": "aspect"}[info.field_name]
        if isinstance(value, list):
            return [{key: v} if isinstance(v, str) else v for v in value]
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
    issue_id: str | None = None


class SectionFeedback(BaseModel):
    agent_id: str
    iteration_context: IterationContext
    specific_tasks: list[SpecificTask] = Field(default_factory=list)
    avoid_changes_to: list[str] = Field(default_factory=list)
    judge_rulings: list[str] = Field(default_factory=list)


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


class ReviewerFailure(SaidReason):
    reviewer: Reviewer
    reason: str  # in English, as the record and the judge's prompt say it
    failure: dict[str, Any] = Field(default_factory=dict)  # the same as a code and values


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
    refusal: dict[str, Any] = Field(default_factory=dict)  # `rejected` as a code and values

    def rejected_text(self, language: str) -> str:
        return said_or(self.refusal, self.rejected, language)

    @computed_field
    @property
    def rejected_zh(self) -> str:
        """The JSON export's Chinese reason, said by the catalogue when it is written."""
        return self.rejected_text("zh")

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


class IssueStatusEntry(BaseModel):
    """One tracked issue's status in one round, and what it rests on: `reviewer` (the red
    team named its id or listed it as resolved), `matched` (same section and substance),
    `validation` / `avoid_changes_to` (the red team's verdict on a check), `not_raised` (an
    earlier issue the red team neither raised again nor marked), `first_seen`."""

    issue_id: str
    status: IssueStatus
    basis: str
    note: str = ""


class RevisionCheck(BaseModel):
    """A promise of the last revision (a task's `validation` or an `avoid_changes_to`) and the
    red team's verdict on it (`holds` None: it said nothing)."""

    check_id: str
    kind: Literal["validation", "avoid_changes_to"]
    agent_id: str
    text: str
    issue_id: str | None = None
    holds: bool | None = None
    note: str = ""


class Overruling(BaseModel):
    """A red team finding the judge ruled against (the blue team's view upheld)."""

    issue_id: str
    agent_id: str
    aspect: str
    ruling: str = ""


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
    # At the pause before the authors, findings the user dropped (not fixed,
    # still counted) and added (issue ids).
    dropped_by_user: list[str] = Field(default_factory=list)
    added_by_user: list[str] = Field(default_factory=list)
    # Identity and status of issues, the checks, the judge's rulings.
    issue_statuses: list[IssueStatusEntry] = Field(default_factory=list)
    checks: list[RevisionCheck] = Field(default_factory=list)
    overruled: list[Overruling] = Field(default_factory=list)
    tracking_notes: list[str] = Field(default_factory=list)
    reviewed_document: dict[str, Any] | None = Field(
        default=None, description="the version this round reviewed (not exported to JSON)"
    )

    def status_of(self, issue_id: str | None) -> str | None:
        return next((e.status for e in self.issue_statuses if e.issue_id == issue_id), None)

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
