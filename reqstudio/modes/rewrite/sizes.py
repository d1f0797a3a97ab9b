"""The pre-flight size check: before the first call, how large the run's requests will be
against the model's context (`ModelFactory.context_tokens`, `OPENAI_CONTEXT_TOKENS`), with the
same token estimate as SRS mode's check (`reqstudio.llm.estimate_tokens`).

Every request carries the background (the original and the clarifications); the last
section's, the review's and each patch's carry the draft as well, about as long as the
original. A background that alone does not fit is refused; a draft that may not fit is
said before the run starts."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from reqstudio.document_model import document_language
from reqstudio.llm import ModelFactory, estimate_tokens
from reqstudio.messages import text
from reqstudio.modes.rewrite.models import RewriteRequest
from reqstudio.modes.rewrite.nodes import build_background
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

    @property
    def values(self) -> dict[str, int]:
        """The sizes, as the values of a failure's or a warning's message."""
        return asdict(self)

    def describe(self, language: str = "en") -> str:
        return text("rewrite.context_sizes", language, **self.values)


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
