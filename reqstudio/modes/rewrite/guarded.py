"""Rewrite's outline, sections, patches (and questions) through the shared guard.

An answer that gives back its prompt ("Title of the new document", "<section written so
far>", "你是一位资深的技术文档作者…") or serialized data is asked for again within the role's
`<role>_document` policy, then fails its stage clearly (`reqstudio.document_guard`). A patch
must also keep every requirement statement of the section it replaces, unless an issue of the
round names the requirement and asks to remove it (`reqstudio.check.keeping`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from reqstudio.calls import RetryCallback, policy_for, retrying
from reqstudio.check.keeping import RevisionRefusal, revision_refusal
from reqstudio.document_guard import NotADocumentError, document_problem, fields_problem
from reqstudio.modes.rewrite.models import DocumentSection, OutlinePlan, ReviewIssue

T = TypeVar("T")


class PatchRefused(NotADocumentError):
    """A patch that cannot replace its section: `refusal` (its `reason`) says why."""

    def __init__(self, refusal: RevisionRefusal):
        super().__init__(refusal)
        self.refusal = refusal


def prompt_of(language: str, stage: str) -> str:
    return f"rewrite/{language}/{stage}.md"


def check_outline(plan: OutlinePlan, language: str) -> OutlinePlan:
    """`plan`, unless its title, section titles and goals are the prompt's example."""
    fields = [plan.title, *(f for s in plan.sections for f in (s.title, s.goal))]
    problem = fields_problem(fields, [prompt_of(language, "outline")])
    if problem is not None:
        raise NotADocumentError(problem, "RewriteOutline")
    return plan


def check_section(content: str, language: str, label: str, background: str) -> str:
    """`content`, unless it is no section body (the fill prompt given back, data; what the
    original document itself holds may be repeated)."""
    problem = document_problem(content, [prompt_of(language, "fill")], material=background)
    if problem is not None:
        raise NotADocumentError(problem, label)
    return content


def section_label(section: DocumentSection) -> str:
    return f"{section.id} “{section.title}”" if section.title else section.id


def check_patch(
    section: DocumentSection,
    content: str,
    issues: Sequence[ReviewIssue],
    language: str,
    background: str,
) -> str:
    """`content`, unless it cannot replace `section`: no section body, or a requirement
    statement lost that no issue of the round asks to remove."""
    refusal = revision_refusal(
        section.content,
        content,
        [f"{i.description} {i.suggestion}" for i in issues],
        templates=[prompt_of(language, "patch")],
        section=section_label(section),
        material=background,
    )
    if refusal is not None:
        raise PatchRefused(refusal)
    return content


async def until_a_document(
    role: str,
    settings: object,
    label: str,
    write: Callable[[], Awaitable[T]],
    on_retry: RetryCallback | None = None,
) -> T:
    """`write()` again while its answer is no document, within the `<role>_document` policy;
    past it the last `NotADocumentError` is raised."""
    policy = policy_for(f"{role}_document", settings)
    async for attempt in retrying(
        policy, label, on_retry, lambda error: isinstance(error, NotADocumentError)
    ):
        with attempt:
            return await write()
    raise AssertionError("unreachable")  # pragma: no cover
