"""The rewrite graph's state (seed 003, section 3.2) and the run's context.

The state holds plain data (the models' `model_dump()`), so that a checkpointer can save it
after every node and a resumed run reads it back without unpickling classes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

from agents.rewrite.callbacks import notify
from agents.rewrite.models import ClarificationItem
from agents.rewrite.reviewers import SectionReviewer
from reqstudio.llm import ModelFactory
from reqstudio.usage import UsageTracker


class RewriteState(TypedDict):
    original_content: str
    clarifications: list[dict[str, Any]]  # ClarificationItem
    language: str  # "zh" or "en": the original's language, which the rewrite follows
    background: str  # ContextBuilder's output: the original and every clarification
    document_structure: dict[str, Any] | None  # DocumentStructure
    filled: int  # sections written so far (the rest are still empty)
    revision_issues: list[dict[str, Any]]  # ReviewIssue: the latest review's, placed
    review_round: int  # review rounds done
    review_rounds: list[dict[str, Any]]  # ReviewRound
    failed_patches: list[dict[str, Any]]  # PatchFailure, over all rounds


@dataclass
class RewriteOptions:
    max_review_rounds: int = 3  # review-and-patch rounds at most (seed: "例如3次")
    max_continuations: int = 2  # a section cut at the length limit is continued this often
    language: str | None = None  # progress lines: "zh" or "en"; None: the original's


@dataclass
class RewriteContext:
    factory: ModelFactory
    tracker: UsageTracker
    reviewer: SectionReviewer
    options: RewriteOptions
    handler: Any = None  # a ProgressCallbackHandler, or None
    # The stage the handler was told started and not yet told ended: whatever ends the run
    # (a failure, a cancellation) closes it, so every on_stage_start gets its end or error.
    open_stage: str | None = None
    stage_kwargs: dict[str, Any] = field(default_factory=dict)

    def progress_language(self, state: RewriteState) -> str:
        return self.options.language or state["language"]

    async def enter(self, stage: str, **kwargs: Any) -> None:
        """Tell the handler `stage` started, once (a resumed run tells it again)."""
        if self.open_stage == stage:
            return
        self.open_stage = stage
        await notify(self.handler, "on_stage_start", stage, **kwargs)

    async def leave(self, stage: str, **kwargs: Any) -> None:
        self.open_stage = None
        await notify(self.handler, "on_stage_end", stage, **kwargs)

    async def notify(self, method: str, *args: Any, **kwargs: Any) -> None:
        await notify(self.handler, method, *args, **kwargs)

    async def progress(self, stage: str, message: str, **kwargs: Any) -> None:
        await notify(self.handler, "on_stage_progress", stage, message, **kwargs)


def initial_state(original_content: str, clarifications: list[ClarificationItem]) -> RewriteState:
    return RewriteState(
        original_content=original_content,
        clarifications=[c.model_dump() for c in clarifications],
        language="en",
        background="",
        document_structure=None,
        filled=0,
        revision_issues=[],
        review_round=0,
        review_rounds=[],
        failed_patches=[],
    )
