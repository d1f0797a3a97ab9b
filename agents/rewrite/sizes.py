"""The pre-flight size check: before the first call, how large the run's requests will be
against the model's context (`ModelFactory.context_tokens`, `OPENAI_CONTEXT_TOKENS`), with the
same token estimate as SRS mode's check (`reqstudio.llm.estimate_tokens`).

Every request carries the background (the original and the clarifications); the last
section's, the review's and each patch's carry the draft as well, about as long as the
original. A background that alone does not fit is refused; a draft that may not fit is
said before the run starts."""

from __future__ import annotations

from dataclasses import dataclass

from agents.rewrite.models import RewriteRequest
from agents.rewrite.nodes import build_background
from reqstudio.document_model import document_language
from reqstudio.llm import ModelFactory, estimate_tokens
from reqstudio.prompts import render_prompt

# Room for the answer: a section, or a review's JSON.
ANSWER_TOKENS = 2048


@dataclass(frozen=True)
class ContextSizes:
    background: int  # tokens of the original and the clarifications
    first: int  # the outline request, and the answer's room
    longest: int  # the review and patch requests (background + a draft as long as the original)
    limit: int  # the model's context

    @property
    def fits(self) -> bool:
        return self.first <= self.limit

    @property
    def draft_may_not_fit(self) -> bool:
        return self.longest > self.limit

    def describe(self, language: str = "en") -> str:
        if language == "zh":
            return (
                f"背景（原始文档 + 澄清）约 {self.background} tokens；第一个请求约 {self.first} "
                f"tokens，最长的请求（评审、修订）约 {self.longest} tokens；模型上下文 "
                f"{self.limit} tokens（OPENAI_CONTEXT_TOKENS）"
            )
        return (
            f"background (original + clarifications) about {self.background} tokens; the first "
            f"request about {self.first} tokens, the longest (review, patch) about "
            f"{self.longest} tokens; the model's context {self.limit} tokens "
            "(OPENAI_CONTEXT_TOKENS)"
        )


def context_sizes(request: RewriteRequest, factory: ModelFactory) -> ContextSizes:
    language = document_language(request.original_content)
    background = build_background(request.original_content, request.clarifications, language)
    outline = render_prompt(f"rewrite/{language}/outline.md", background=background)
    draft_tokens = estimate_tokens(request.original_content)
    first = estimate_tokens(outline) + ANSWER_TOKENS
    limits = [factory.context_tokens(role) for role in ("RewriteOutline", "RewritePatch")]
    return ContextSizes(
        background=estimate_tokens(background),
        first=first,
        longest=first + 2 * draft_tokens,  # the whole draft, and the section being patched
        limit=min(limits),
    )
