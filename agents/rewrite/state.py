"""The rewrite graph's state (seed 003, section 3.2) and the run's context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from agents.rewrite.models import ClarificationItem, DocumentStructure, ReviewIssue, ReviewRound
from agents.rewrite.reviewers import SectionReviewer
from reqstudio.llm import ModelFactory
from reqstudio.usage import UsageTracker


class RewriteState(TypedDict):
    original_content: str
    clarifications: list[ClarificationItem]
    language: str  # "zh" or "en": the original's language, which the rewrite follows
    background: str  # ContextBuilder's output: the original and every clarification
    document_structure: DocumentStructure | None
    revision_issues: list[ReviewIssue]  # the latest review's issues naming a known section
    review_round: int  # review rounds done
    review_rounds: list[ReviewRound]


@dataclass
class RewriteOptions:
    max_review_rounds: int = 3  # review-and-patch rounds at most (seed: "例如3次")
    max_continuations: int = 2  # a section cut at the length limit is continued this often


@dataclass
class RewriteContext:
    factory: ModelFactory
    tracker: UsageTracker
    reviewer: SectionReviewer
    options: RewriteOptions
    handler: Any = None  # a ProgressCallbackHandler, or None


def initial_state(original_content: str, clarifications: list[ClarificationItem]) -> RewriteState:
    return RewriteState(
        original_content=original_content,
        clarifications=list(clarifications),
        language="en",
        background="",
        document_structure=None,
        revision_issues=[],
        review_round=0,
        review_rounds=[],
    )
