"""The document to review: read with SRS mode's reader (its formats and refusals), keeping a
text file's own leading and trailing lines so that an untouched document comes back unchanged;
and checked against the model's context before the first call."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from reqstudio.document_model import document_language, parse_markdown, with_ids
from reqstudio.failures import Failure, FailureCode, render
from reqstudio.llm import ModelFactory, context_overflow, estimate_tokens
from reqstudio.modes.review.models import PERSPECTIVES
from reqstudio.modes.srs.documents import ReferenceDocument, load_reference
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
    def failure(self) -> Failure:
        return Failure(
            FailureCode.TOO_LARGE_FOR_CONTEXT,
            {
                "name": self.name,
                "document_tokens": self.document_tokens,
                "needed": self.needed,
                "limit": self.limit,
            },
        )

    def message(self, language: str = "en") -> str:
        return render(self.failure, language)


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
