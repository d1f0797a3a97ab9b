"""The document to review: read with SRS mode's reader (its formats and refusals), keeping a
text file's own leading and trailing lines so that an untouched document comes back unchanged;
and checked against the model's context before the first call."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from agents.review.models import PERSPECTIVES
from agents.srs.documents import ReferenceDocument, load_reference
from reqstudio.document_model import document_language, parse_markdown, with_ids
from reqstudio.llm import ModelFactory, context_overflow, estimate_tokens
from reqstudio.prompts import render_prompt


def load_document(path: Path, name: str | None = None, max_mb: float = 10) -> ReferenceDocument:
    """`load_reference` (raises its `ReferenceDocumentError`s), but a .md/.txt file's text as
    it is in the file (line ends normalised), not stripped."""
    document = load_reference(path, name, max_mb=max_mb)
    if document.kind in ("markdown", "text"):
        with contextlib.suppress(LookupError, UnicodeDecodeError):
            raw = Path(path).read_bytes().decode(document.encoding).lstrip("\ufeff")
            raw = raw.replace("\r\n", "\n").replace("\r", "\n")
            if raw.strip() == document.text:
                return ReferenceDocument(document.name, raw, document.encoding, document.kind)
    return document


# What a review request holds beyond its prompt: a reviewer's JSON findings, or an author's
# revised section (counted as the section itself, below).
REVIEW_ANSWER_TOKENS = 2048
AUTHOR_PROMPT_TOKENS = 600  # the author's instructions and feedback around the document


@dataclass(frozen=True)
class DocumentTooLarge:
    """The document does not fit the model's context for one review request."""

    name: str
    document_tokens: int
    needed: int
    limit: int

    @property
    def message_en(self) -> str:
        return (
            f"{self.name} is too large to review with this model: its requests would need about "
            f"{self.needed:,} tokens (the document alone about {self.document_tokens:,}), the "
            f"model's context is {self.limit:,} tokens (OPENAI_CONTEXT_TOKENS). Shorten or split "
            "the document, or use a model with a larger context."
        )

    @property
    def message_zh(self) -> str:
        return (
            f"《{self.name}》太大，无法用当前模型审阅：每次审阅请求约需 {self.needed:,} tokens"
            f"（文档本身约 {self.document_tokens:,}），而模型上下文为 {self.limit:,} tokens"
            "（OPENAI_CONTEXT_TOKENS）。请缩短或拆分文档，或换用上下文更大的模型。"
        )

    def message(self, language: str = "en") -> str:
        return self.message_zh if language.startswith("zh") else self.message_en


def document_too_large(
    text: str, factory: ModelFactory, name: str = "the document"
) -> DocumentTooLarge | None:
    """Checked before a review's first call: every reviewer sees the whole document, and each
    author sees it too, with its own section twice (given and written back). None when the
    largest of those requests fits the model's context."""
    document = parse_markdown(text, default_title=Path(name).stem)
    language = document_language(text)
    shown = with_ids(document)
    prompts = [
        render_prompt(
            f"review/{reviewer}.md",
            title=document.title,
            document=shown,
            language=language,
            reviews="",
        )
        for reviewer in (*PERSPECTIVES, "judge")
    ]
    largest = max((estimate_tokens(s.content) for s in document.sections), default=0)
    checks = [
        *(context_overflow(p, factory, "ReviewPanel", answer_tokens=REVIEW_ANSWER_TOKENS)
          for p in prompts),
        context_overflow(
            shown, factory, "ReviewAuthor", answer_tokens=2 * largest + AUTHOR_PROMPT_TOKENS
        ),
    ]  # fmt: skip
    worst = max((c for c in checks if c is not None), key=lambda c: c.needed, default=None)
    if worst is None:
        return None
    return DocumentTooLarge(name, estimate_tokens(text), worst.needed, worst.limit)
