"""Seed 003's data models (section 4.1) in Pydantic v2, and the shapes the models answer in.

`DocumentStructure` / `DocumentSection` are the document model shared with Review mode
(`reqstudio.document_model`); the rest belongs to Rewrite mode.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    computed_field,
    field_validator,
    model_validator,
)

from reqstudio.answers import answer_model
from reqstudio.document_model import DocumentSection, DocumentStructure, section_id_for
from reqstudio.said_reasons import SaidReason

__all__ = [
    "ClarificationItem",
    "ClarifyingQuestions",
    "DocumentSection",
    "DocumentStructure",
    "IssueKind",
    "OutlinePlan",
    "OutlineSection",
    "PatchFailure",
    "ReviewIssue",
    "ReviewReport",
    "ReviewRound",
    "ReviewerFailure",
    "RewriteRequest",
    "RewriteResult",
    "SectionPatch",
]


class SeedFields(BaseModel):
    """Seed 003 writes its models as dataclasses: the fields in `positional` may be passed
    positionally too (`ClarificationItem(q, a)`), besides by name."""

    positional: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *args: Any, **data: Any) -> None:
        names = type(self).positional
        if len(args) > len(names):
            raise TypeError(
                f"{type(self).__name__} takes at most {len(names)} positional arguments"
            )
        for name, value in zip(names, args, strict=False):
            if name in data:
                raise TypeError(f"{type(self).__name__} got two values for {name!r}")
            data[name] = value
        super().__init__(**data)


def _with_text(value: str, otherwise: str) -> str:
    """`value`, if it holds more than white space; else the error `otherwise` says."""
    if not value.strip():
        raise ValueError(otherwise)
    return value


class ClarificationItem(SeedFields):
    """One clarifying question and its answer."""

    model_config = ConfigDict(extra="forbid")
    positional = ("question", "answer")

    question: str = Field(min_length=1)
    answer: str

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        return _with_text(value, "must not be blank")


class RewriteRequest(SeedFields):
    """What to rewrite: the original document and the clarifications gathered for it."""

    positional = ("original_content", "clarifications")

    original_content: str
    clarifications: list[ClarificationItem] = Field(default_factory=list)

    @field_validator("original_content")
    @classmethod
    def _has_text(cls, value: str) -> str:
        return _with_text(value, "the original document is empty")


# --- what the models answer ------------------------------------------------------------

ONE_LINE = r"^[^\n]{1,300}$"


class OutlineSection(BaseModel):
    """One planned section: the architect's title, writing goal and heading level."""

    title: str = Field(min_length=1, max_length=200)
    goal: str = Field(min_length=1, max_length=1200)
    level: int = Field(default=2, ge=1, le=4)


@answer_model("RewriteOutline")
class OutlinePlan(BaseModel):
    """The outline stage's answer: the new document's title and its sections, in order."""

    title: str = Field(min_length=1, max_length=200)
    sections: list[OutlineSection] = Field(min_length=1, max_length=30)

    def to_structure(self, language: str) -> DocumentStructure:
        return DocumentStructure(
            title=self.title.strip(),
            sections=[
                DocumentSection(
                    id=section_id_for(order),
                    title=planned.title.strip(),
                    goal=planned.goal.strip(),
                    level=planned.level,
                    order=order,
                    content="",
                )
                for order, planned in enumerate(self.sections)
            ],
            metadata={"language": language},
        )


IssueKind = Literal[
    "contradiction", "omission", "unresolved_clarification", "inconsistency", "other"
]


class ReviewIssue(BaseModel):
    """One problem the review found, addressed to the section that must change."""

    section_id: str = Field(min_length=1, description="the id of the section to fix, e.g. sec-02")
    kind: IssueKind = "other"
    description: str = Field(min_length=1, max_length=2000)
    suggestion: str = ""

    @field_validator("kind", mode="before")
    @classmethod
    def _known_kind(cls, value: Any) -> Any:
        allowed = {"contradiction", "omission", "unresolved_clarification", "inconsistency"}
        return value if value in allowed else "other"


@answer_model("RewriteReview")
class ReviewReport(BaseModel):
    """The review expert's answer: the issues found. Required: an empty list says "nothing to
    fix" only when the reviewer sent it; `{}` or `{"verdict": "fine"}` is no review."""

    issues: list[ReviewIssue] = Field(max_length=40)


@answer_model("RewriteQuestions")
class ClarifyingQuestions(BaseModel):
    """Questions about the original's gaps and ambiguities, to ask the user before rewriting
    (required: an empty list only when the model sent it)."""

    questions: list[str] = Field(max_length=10)


# --- what the engine records -----------------------------------------------------------


class SectionPatch(BaseModel):
    """One targeted fix: a section's content before and after, and the issues it answered."""

    section_id: str
    title: str
    before: str
    after: str
    issues: list[ReviewIssue]


class PatchFailure(SaidReason):
    """A targeted fix that failed for good: the section stays as it was before the patch."""

    section_id: str
    title: str
    reason: str = Field(description="why, in plain words, naming the finish reason if any")
    failure: dict[str, Any] = Field(
        default_factory=dict, description="the same reason as a failure code and its values"
    )
    finish_reason: str | None = Field(
        default=None, description="length, content_filter, empty, cut; None for other faults"
    )
    issues: list[ReviewIssue] = Field(default_factory=list)


class ReviewerFailure(SaidReason):
    """A reviewer that gave no readable answer in a round (a member of Review mode's panel):
    the round went on without it, so its review is no pass."""

    reviewer: str
    reason: str
    failure: dict[str, Any] = Field(
        default_factory=dict, description="the same reason as a failure code and its values"
    )


class ReviewRound(BaseModel):
    """One pass of the review loop: what was found and what was patched."""

    round: int
    issues: list[ReviewIssue] = Field(default_factory=list)
    failed_reviewers: list[ReviewerFailure] = Field(
        default_factory=list,
        description="reviewers that could not review this round (the panel's members); a "
        "round with any has no verdict to pass on",
    )
    ignored: list[ReviewIssue] = Field(
        default_factory=list,
        description="issues naming no section of the document, also after asking the reviewer "
        "again with the valid ids: reported, not patched",
    )
    patches: list[SectionPatch] = Field(default_factory=list)
    failed_patches: list[PatchFailure] = Field(default_factory=list)


# How the review loop ended, in the order they are told apart: a patch failed (the result is
# incomplete); a reviewer could not review in some round; the last review's issues named no
# section (not patched); the review was off; the last review found nothing; the round limit
# (the last review's issues patched, not reviewed again).
RewriteStopReason = Literal[
    "patch_failed", "reviewer_failed", "unplaced_issues", "review_off", "no_issues", "max_rounds"
]

# `complete` is false for these: a patch failed, or a reviewer could not review.
INCOMPLETE_STOPS: tuple[RewriteStopReason, ...] = ("patch_failed", "reviewer_failed")


def stop_reason_of(
    rounds: list[ReviewRound], failed_patches: list[PatchFailure]
) -> RewriteStopReason:
    if failed_patches:
        return "patch_failed"
    if any(r.failed_reviewers for r in rounds):
        return "reviewer_failed"
    if not rounds:
        return "review_off"
    if rounds[-1].ignored:
        return "unplaced_issues"
    return "max_rounds" if rounds[-1].issues else "no_issues"


class RewriteResult(BaseModel):
    """Seed 003's result: `rewritten_content` is always `structured_document` serialised."""

    structured_document: DocumentStructure
    review_rounds: list[ReviewRound] = Field(default_factory=list)
    usage: dict[str, Any] = Field(default_factory=dict)
    seconds: float = 0.0
    complete: bool = Field(
        default=True,
        description="False: some patches failed (`failed_patches`; those sections stay as they "
        "were before their patch, every other patch is applied), or a reviewer could not "
        "review (`review_rounds[].failed_reviewers`); `stop_reason` says which",
    )
    failed_patches: list[PatchFailure] = Field(default_factory=list)
    run_id: str | None = Field(default=None, description="the checkpointed run, if any")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rewritten_content(self) -> str:
        return self.structured_document.to_markdown()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def stop_reason(self) -> RewriteStopReason:
        """How the review loop ended (`reqstudio.modes.rewrite.outcome`)."""
        return stop_reason_of(self.review_rounds, self.failed_patches)

    @model_validator(mode="after")
    def _incomplete_without_every_patch_and_reviewer(self) -> RewriteResult:
        if self.stop_reason in INCOMPLETE_STOPS:
            self.complete = False
        return self

    @property
    def issues_fixed(self) -> int:
        return sum(len(p.issues) for r in self.review_rounds for p in r.patches)

    @property
    def rounds(self) -> int:
        return len(self.review_rounds)
