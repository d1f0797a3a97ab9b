"""Who reviews the draft in stage three: a protocol, so the single review expert of seed 003 and
Review mode's four-perspective panel are interchangeable. A reviewer returns issues, each naming
the id of the section that must change; the engine patches those sections and nothing else."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from langchain_core.messages import HumanMessage

from agents.rewrite import embedded
from agents.rewrite.models import DocumentStructure, ReviewIssue, ReviewReport
from reqstudio.calls import policy_for
from reqstudio.llm import ModelFactory
from reqstudio.prompts import render_prompt
from reqstudio.structured import ask_structured


@dataclass(frozen=True)
class ReviewInput:
    background: str  # the original and the clarifications (ContextBuilder's text)
    document: DocumentStructure  # the draft; sections carry their ids
    language: str  # "zh" or "en"
    round: int  # 1-based review round


@runtime_checkable
class SectionReviewer(Protocol):
    name: str

    async def review(self, draft: ReviewInput, callbacks: Sequence[Any]) -> list[ReviewIssue]:
        """Issues found in the draft; an empty list when nothing must change.

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
        answer = await ask_structured(
            self.factory.for_role("RewriteReview", callbacks=callbacks),
            [HumanMessage(prompt)],
            ReviewReport,
            response_format=embedded.response_format(self.factory, ReviewReport),
            policy=policy_for("RewriteReview", self.factory.settings),
            label=f"RewriteReview round {draft.round}",
        )
        return answer.value.issues
