"""Who reviews the draft in stage three: a protocol, so the single review expert of seed 003 and
Review mode's four-perspective panel are interchangeable. A reviewer returns issues, each naming
the id of the section that must change; the engine patches those sections and nothing else."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from reqstudio.llm import ModelFactory
from reqstudio.modes.rewrite.asking import ask_role
from reqstudio.modes.rewrite.models import (
    DocumentStructure,
    ReviewerFailure,
    ReviewIssue,
    ReviewReport,
)
from reqstudio.prompts import render_prompt

log = logging.getLogger("reqstudio.rewrite")

# Where Review mode's four-perspective panel plugs in (REWRITE_REVIEWER=panel): a module
# exposing `panel_reviewer(factory) -> SectionReviewer`. Until Review mode provides it, the
# single expert reviews and the log says so.
PANEL_ADAPTER = "reqstudio.modes.review.rewrite_panel"


@dataclass(frozen=True)
class ReviewInput:
    background: str  # the original and the clarifications (ContextBuilder's text)
    document: DocumentStructure  # the draft; sections carry their ids
    language: str  # "zh" or "en"
    round: int  # 1-based review round


class ReviewFindings(list[ReviewIssue]):
    """A review's issues (a list, as the protocol asks) and the reviewers that could not
    review: a panel goes on without a member that failed, and says so here. A reviewer that
    cannot review at all raises instead (the review stage fails)."""

    def __init__(
        self, issues: Iterable[ReviewIssue] = (), failed: Iterable[ReviewerFailure] = ()
    ) -> None:
        super().__init__(issues)
        self.failed = list(failed)


def failed_reviewers(found: Sequence[ReviewIssue]) -> list[ReviewerFailure]:
    """The reviewers a review's answer says could not review (none for a plain list)."""
    return list(getattr(found, "failed", []))


@runtime_checkable
class SectionReviewer(Protocol):
    name: str

    async def review(self, draft: ReviewInput, callbacks: Sequence[Any]) -> list[ReviewIssue]:
        """Issues found in the draft; an empty list when nothing must change (a
        `ReviewFindings` also names the reviewers that could not review: then it is no pass).

        `callbacks` are LangChain callback handlers (usage accounting) for every model call.
        Unparseable answers raise `StructuredOutputError` once the role's tries are spent."""
        ...


def draft_with_ids(document: DocumentStructure) -> str:
    """The draft as the reviewer sees it: every heading prefixed with its section id."""
    parts = [f"# {document.title}\n"]
    for section in document.sections:
        parts.append(
            f"[{section.id}] {'#' * section.level} {section.title}\n\n{section.content.strip()}\n"
        )
    return "\n".join(parts)


@dataclass
class ExpertReviewer:
    """Seed 003's single "文档评审专家"."""

    factory: ModelFactory
    name: str = "expert"

    async def review(self, draft: ReviewInput, callbacks: Sequence[Any]) -> list[ReviewIssue]:
        prompt = render_prompt(
            f"rewrite/{draft.language}/review.md",
            background=draft.background,
            draft=draft_with_ids(draft.document),
        )
        answer = await ask_role(
            self.factory,
            "RewriteReview",
            prompt,
            ReviewReport,
            callbacks=callbacks,
            label=f"RewriteReview round {draft.round}",
        )
        return answer.value.issues


def reviewer_for(factory: ModelFactory) -> SectionReviewer:
    """The reviewer `REWRITE_REVIEWER` asks for: the single expert, or Review mode's panel."""
    if factory.settings.rewrite_reviewer == "panel":
        try:
            adapter = importlib.import_module(PANEL_ADAPTER)
        except ModuleNotFoundError:
            log.warning(
                "REWRITE_REVIEWER=panel, but Review mode's panel (%s) is not available; "
                "the single review expert reviews",
                PANEL_ADAPTER,
            )
        else:
            return adapter.panel_reviewer(factory)
    return ExpertReviewer(factory)
