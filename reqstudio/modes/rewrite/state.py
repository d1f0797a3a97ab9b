"""The rewrite graph's state (seed 003, section 3.2) and the run's context.

The state holds plain data (the models' `model_dump()`), so that a checkpointer can save it
after every node and a resumed run reads it back without unpickling classes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

from reqstudio.events import BaseEvent
from reqstudio.llm import ModelFactory
from reqstudio.modes.rewrite.events import (
    SectionReset,
    SectionToken,
    StageFinished,
    StageProgress,
    StageStarted,
)
from reqstudio.modes.rewrite.models import ClarificationItem
from reqstudio.modes.rewrite.reviewers import SectionReviewer
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
    emit: Callable[[BaseEvent], Awaitable[None]] | None = None  # where the events go
    # The stage announced as started and not yet ended: whatever ends the run (a failure, a
    # cancellation) closes it, so every StageStarted gets its StageFinished or StageFailed.
    open_stage: str | None = None
    stage_kwargs: dict[str, Any] = field(default_factory=dict)

    def progress_language(self, state: RewriteState) -> str:
        return self.options.language or state["language"]

    async def send(self, event: BaseEvent) -> None:
        if self.emit is not None:
            await self.emit(event)

    async def enter(self, stage: str, **kwargs: Any) -> None:
        """Announce `stage` started, once (a resumed run announces it again)."""
        if self.open_stage == stage:
            return
        self.open_stage = stage
        await self.send(StageStarted(step=stage, values=kwargs))

    async def leave(self, stage: str, **kwargs: Any) -> None:
        self.open_stage = None
        await self.send(StageFinished(step=stage, values=kwargs))

    async def section_token(self, section_id: str, text: str) -> None:
        await self.send(SectionToken(section_id=section_id, text=text))

    async def section_reset(self, section_id: str) -> None:
        await self.send(SectionReset(section_id=section_id))

    async def progress(self, stage: str, message: str, **kwargs: Any) -> None:
        await self.send(StageProgress(step=stage, message=message, values=kwargs))


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
