"""Is DocGenerate's answer a document? A small model may open with a title and then give back
the JSON list it was given (`# IEEE Std 830-1998` followed by raw JSON), or the prompt itself
("IEEE Std 830-1998 [JSON] [FR-01, …]", "The <system> shall <response>."): that is retried,
then reported, never offered as `srs.md`. The check is the one every document writer uses
(`reqstudio.document_guard`), against DocGenerate's own prompt."""

from __future__ import annotations

from reqstudio.document_guard import NotADocumentError, NotADocumentReason
from reqstudio.document_guard import document_problem as guard_problem

DOC_GENERATE_PROMPT = "srs/doc_generate.md"


class NotADocument(NotADocumentError):
    """DocGenerate's answer is not a document (raw JSON, its prompt given back, nothing beyond
    a title); `reason` says which, in either language."""


def document_reason(markdown: str) -> NotADocumentReason | None:
    """Why `markdown` is not an SRS document written for DocGenerate's prompt, or None."""
    return guard_problem(markdown, [DOC_GENERATE_PROMPT], whole_document=True)


def document_problem(markdown: str) -> str | None:
    """`document_reason` in words (English), or None when it is a document."""
    reason = document_reason(markdown)
    return None if reason is None else str(reason)
