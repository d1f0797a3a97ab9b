"""How a review ends on screen: the improved document, the closing summary with the issues
round by round, the trajectory and the disagreements, the downloads, and for a failed or
stopped run what was kept and the Resume button."""

from __future__ import annotations

from typing import Any

import chainlit as cl

from reqstudio.modes.review import ReviewResult
from reqstudio.modes.review.partial import incomplete_json, incomplete_markdown, revised_through
from reqstudio.web.baselines import baseline_actions
from reqstudio.web.rendering import downloads, json_bytes, with_document_copies
from reqstudio.web.review.chart import trajectory_figure
from reqstudio.web.review.tables import (
    disagreement_tables,
    final_text,
    issues_across_rounds,
    overruling_lines,
)
from reqstudio.web.review.trajectory import trajectory_table
from reqstudio.web.session import persist_thread_state, top_level_message
from reqstudio.web.texts import Catalog, counted, lang

tr = Catalog("review")


def download_contents(result: ReviewResult) -> dict[str, bytes]:
    """The finished review's downloads: the improved document and every review."""
    return {
        "improved.md": result.improved_markdown.encode(),
        "reviews.json": json_bytes(result.reviews_json()),
    }


def partial_download_contents(partial: ReviewResult, reason: str) -> dict[str, bytes]:
    """A failed review's downloads: the last finished version marked incomplete on its first
    line, and the reviews so far marked incomplete (as the CLI writes them)."""
    data = incomplete_json(partial, reason)
    return {
        "improved-partial.md": incomplete_markdown(partial, reason, lang()).encode(),
        "improved-partial-reviews.json": json_bytes(data),
    }


def improved_document_text(result: ReviewResult) -> str:
    """The improved document as a message: whole when the review changed it; when it did not,
    one line saying so (the same text again would only fill the chat)."""
    if result.improved_markdown == result.original:
        return tr("no_change", rounds=counted(len(result.rounds), "round"))
    return f"**{tr('improved_title')}**\n\n{result.improved_markdown}"


def partial_text(partial: ReviewResult) -> str:
    revised = revised_through(partial)
    version = tr("partial_revised", round=revised) if revised else tr("partial_unrevised")
    return tr(
        "partial_kept", version=version, rounds=counted(len(partial.rounds), "finished_round")
    )


async def show_result(result: ReviewResult) -> None:
    titles = {s.id: s.title for s in result.document.sections}
    await top_level_message(improved_document_text(result)).send()
    judged = [r for r in result.rounds if r.judge is not None]
    parts = [final_text(result)]
    if note := result.best_version_note(lang()):
        parts.append(f"⚠️ {note}")
    parts += overruling_lines(result)
    if issues := issues_across_rounds(result.rounds, titles):
        parts.append(issues)
    parts.append(trajectory_table(result))
    if judged:
        parts.append(tr("disagreements"))
        for record in judged:
            parts.append(f"**{tr('step_round', round=record.round)}**")
            parts.append(disagreement_tables(record.judge, titles))
    summary = top_level_message("\n\n".join(parts))
    summary.elements = [
        cl.Plotly(name="trajectory", figure=trajectory_figure(result.rounds), display="inline"),
        *downloads(await with_document_copies(download_contents(result))),
    ]
    summary.actions = baseline_actions("improved.md", result.improved_markdown)
    await summary.send()
    await persist_thread_state()


async def show_partial(
    partial: Any, note: str, run_key: str, reason: str = "", offer_resume: bool = True
) -> None:
    """A failed review: what was kept, and Resume when a resumed run could go otherwise."""
    message = top_level_message(note)
    if isinstance(partial, ReviewResult) and partial.rounds:
        message.content = f"{note}\n\n{partial_text(partial)}"
        contents = partial_download_contents(partial, reason or note)
        message.elements = downloads(await with_document_copies(contents))
    message.actions = [resume_action(run_key)] if offer_resume else []
    await message.send()


def resume_action(run_key: str) -> cl.Action:
    return cl.Action(name="review_resume", payload={"run": run_key}, label=tr("resume"))
