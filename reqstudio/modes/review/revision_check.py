"""Whether an author's answer can replace its section.

An author is asked for the section's new body. Answers seen instead: JSON (`{"improvements":
[]}` replaced 13 lines of a purpose section), a fragment, the prompt given back, a revision
that silently dropped requirement FR-3, and one that turned FR-01 to FR-03 into a sentence
about them ("FR-01, FR-02, FR-03 were dropped…"). Such an answer is asked again once, then
refused: the section keeps its text. The checks are the ones every document writer uses
(`reqstudio.check.keeping`, `reqstudio.document_guard`); removing a requirement is fine only
where a task of the round names it and asks for it."""

from __future__ import annotations

from collections.abc import Sequence

from reqstudio.check.keeping import RevisionRefusal, revision_refusal
from reqstudio.check.patterns import ALPHA_ID_RE
from reqstudio.document_model import DocumentSection
from reqstudio.modes.review.models import SpecificTask

# The prompts an author's answer comes from: the first ask and the ask again.
AUTHOR_PROMPTS = ("review/author.md", "review/author_reask.md")


def requirement_ids(text: str) -> list[str]:
    return list(dict.fromkeys(ALPHA_ID_RE.findall(text)))


def task_texts(tasks: Sequence[SpecificTask]) -> list[str]:
    """What each task says, as the guard reads findings."""
    return [f"{t.category} {t.instruction} {t.validation}" for t in tasks]


def section_label(section: DocumentSection) -> str:
    return f"{section.id} “{section.title}”" if section.title else section.id


def refusal_for(
    section: DocumentSection, after: str, tasks: Sequence[SpecificTask]
) -> RevisionRefusal | None:
    """Why `after` cannot replace `section` (None: it can)."""
    return revision_refusal(
        section.content,
        after,
        task_texts(tasks),
        templates=AUTHOR_PROMPTS,
        section=section_label(section),
    )
