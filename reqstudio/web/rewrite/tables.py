"""What Rewrite mode shows as markdown: the outline, a review round's issues, a patch's diff,
and a stage's name in the user's language."""

from __future__ import annotations

from reqstudio.modes.rewrite import DocumentStructure
from reqstudio.modes.rewrite.models import ReviewIssue, SectionPatch
from reqstudio.web.rendering import cell
from reqstudio.web.session import diff_block
from reqstudio.web.texts import Catalog, counted

tr = Catalog("rewrite")
reviewers = Catalog("review")


def kind_label(kind: str) -> str:
    return tr.get(f"kind.{kind}", kind)


def outline_table(document: DocumentStructure) -> str:
    rows = [tr("outline_head", title=cell(document.title))]
    for number, section in enumerate(document.sections, start=1):
        rows.append(
            f"| {number} | {cell(section.title)} | {cell(section.goal)} | {section.level} |"
        )
    return "\n".join(rows)


def issues_table(issues: list[ReviewIssue], document: DocumentStructure | None) -> str:
    titles = {s.id: s.title for s in document.sections} if document else {}
    rows = [tr("issues_head", count=counted(len(issues), "issue"))]
    for issue in issues:
        where = f"{issue.section_id} {titles.get(issue.section_id, '')}".strip()
        rows.append(
            f"| {cell(where)} | {kind_label(issue.kind)} | {cell(issue.description)} | {cell(issue.suggestion)} |"
        )
    return "\n".join(rows)


STAGES = {
    "outline_generation": "step_outline",
    "content_filling": "step_filling",
    "review_revision": "stage_review",
}


def stage_label(stage: str) -> str:
    """A stage as its step is titled in the user's language (the engine names it in English)."""
    return tr(STAGES[stage]) if stage in STAGES else stage


def section_diff(patch: SectionPatch) -> str:
    return diff_block(patch.section_id, patch.before, patch.after)


def reviewer_name(reviewer: str) -> str:
    """A panel member as Review mode names it (红队 / Red team); the expert's own name else."""
    return reviewers.get(reviewer, reviewer)
