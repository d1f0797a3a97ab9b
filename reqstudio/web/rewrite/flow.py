"""Rewrite mode's run in the browser: the size check, the run drawn by its views, the result
as .md and .json, and for a failed or stopped run what was written and the Resume button."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import chainlit as cl

from reqstudio.errors import describe_failure, remedy_for
from reqstudio.messages import text as said
from reqstudio.modes.rewrite.chain import RewriteChain, RewriteResumeError
from reqstudio.modes.rewrite.errors import RewriteStageError, RewriteTooLarge
from reqstudio.modes.rewrite.models import DocumentStructure, RewriteRequest, RewriteResult
from reqstudio.modes.rewrite.outcome import rewrite_outcome
from reqstudio.modes.rewrite.sizes import context_sizes
from reqstudio.modes.rewrite.state import RewriteOptions
from reqstudio.outcomes import Outcome
from reqstudio.persistence import open_checkpointer
from reqstudio.usage import UsageTracker
from reqstudio.web.baselines import baseline_actions
from reqstudio.web.endings import with_mark
from reqstudio.web.rendering import downloads as files
from reqstudio.web.rendering import json_bytes, with_document_copies
from reqstudio.web.resume_advice import remember_ending, resume_advice
from reqstudio.web.rewrite.progress import RewriteViews, rewrite_live
from reqstudio.web.rewrite.tables import reviewer_name, stage_label
from reqstudio.web.session import (
    persist_thread_state,
    runtime,
    send_notice,
    start_run,
    top_level_message,
)
from reqstudio.web.settings_panel import thread_factory
from reqstudio.web.texts import Catalog, counted, lang, sentences, usage_token_figure
from reqstudio.web.waits import WaitLines

log = logging.getLogger("reqstudio.rewrite")

tr = Catalog("rewrite")


# A saved run waiting before these has written nothing yet (build_context needs no model).
NOTHING_WRITTEN_BEFORE = ("build_context", "generate_outline")


def rewrite_chain() -> RewriteChain:
    settings = runtime().settings
    options = RewriteOptions(max_review_rounds=settings.rewrite_max_review_rounds, language=lang())
    return RewriteChain(thread_factory(), options=options)


async def render_rewrite(request: RewriteRequest | None, *, resume_key: str | None = None) -> None:
    """Run a rewrite and show it; with `resume_key`, continue that saved run instead."""
    tracker = UsageTracker()
    chain = rewrite_chain()
    live = rewrite_live(chain.options.max_review_rounds)
    progress: RewriteViews = live.views  # type: ignore[assignment]
    started = time.perf_counter()
    if resume_key is None:
        assert request is not None
        sizes = context_sizes(request, chain.factory)
        if not sizes.fits:
            await top_level_message(tr("too_large", sizes=sizes.describe(lang()))).send()
            return
        if sizes.draft_may_not_fit:
            await send_notice(tr("may_not_fit", sizes=sizes.describe(lang())))
        run_key = await start_run("rewrite", "rewrite")
    else:
        run_key = resume_key
    earlier = False  # a resumed run wrote sections before this sitting
    try:
        async with (
            open_checkpointer(runtime().settings) as saver,
            WaitLines(where=lambda: live.step),
        ):
            if resume_key is not None:
                waits_at = await chain.pending(saver, run_key)
                earlier = bool(waits_at) and waits_at not in NOTHING_WRITTEN_BEFORE
            result = await chain.arun(
                request,
                live.show,
                tracker=tracker,
                checkpointer=saver,
                run_id=run_key,
                resume=resume_key is not None,
            )
    except asyncio.CancelledError:
        said = tr("stopped") if earlier or written(progress, None) else tr("stopped_none")
        await progress.close_step(said, outcome="stopped")
        await keep_partial(progress, None, said, run_key)
        raise
    except RewriteResumeError:
        await top_level_message(tr("nothing_to_resume")).send()
        return
    except (RewriteStageError, RewriteTooLarge) as error:
        log.info("rewrite failed: %s", error, exc_info=True)
        reason = sentence(error.text(lang()))
        where = progress.where(error.section_id, error.section_title)
        remedy = remedy_for(error)
        advice = resume_advice(remedy)
        kept = earlier or bool(written(progress, error.partial))
        note = failure_note(stage_label(error.stage), where, reason, kept, advice.text)
        await progress.close_step(note, error=True)
        await keep_partial(progress, error.partial, note, run_key, advice.offer)
        await remember_ending(run_key, remedy, advice.offer)
        return
    except Exception as error:  # keep the app running; finished steps are in the checkpoint
        log.exception("rewrite failed")
        reason = sentence(describe_failure(error, lang()))
        remedy = remedy_for(error)
        advice = resume_advice(remedy)
        kept = earlier or bool(written(progress, None))
        note = failure_note("?", "", reason, kept, advice.text)
        await progress.close_step(note, error=True)
        await keep_partial(progress, None, note, run_key, advice.offer)
        await remember_ending(run_key, remedy, advice.offer)
        return
    await finish(progress, result, time.perf_counter() - started)


def sentence(reason: str) -> str:
    """A reason as a sentence: the failure note goes on after it."""
    reason = reason.strip()
    if reason and reason[-1] not in ".。!！?？":
        reason += said("words.full_stop", lang())
    return reason


async def downloads(
    markdown: str, structure: dict[str, Any], stem: str = "rewritten"
) -> list[cl.File]:
    contents = {f"{stem}.md": markdown.encode(), f"{stem}.json": json_bytes(structure)}
    return files(await with_document_copies(contents))


async def finish(progress: RewriteViews, result: RewriteResult, seconds: float) -> None:
    progress.draft.content = result.rewritten_content
    await progress.draft.update()
    summary = top_level_message(closing_text(result, seconds))
    summary.elements = await downloads(result.rewritten_content, result.model_dump(mode="json"))
    summary.actions = baseline_actions("rewritten.md", result.rewritten_content)
    await summary.send()
    await persist_thread_state()


def closing_text(result: RewriteResult, seconds: float) -> str:
    """The closing summary, its mark read from the run's outcome (`reqstudio.modes.rewrite.outcome`), as
    `reqstudio rewrite`'s exit code is."""
    counts = dict(
        rounds=counted(result.rounds, "review_round"),
        fixed=counted(result.issues_fixed, "issue"),
        tokens=usage_token_figure(result.usage),
        seconds=seconds,
    )
    sections = counted(len(result.structured_document.sections), "section")
    outcome = rewrite_outcome(result)
    names = said("words.list_separator", lang())
    if outcome is Outcome.INCOMPLETE:
        failed = names.join(f"{f.section_id}「{f.title}」" for f in result.failed_patches)
        text = tr("incomplete", sections=failed, sections_count=sections, **counts)
    elif outcome is Outcome.WITHOUT_PASS:
        if result.stop_reason == "reviewer_failed":
            which = names.join(
                f"{r.round}: {reviewer_name(f.reviewer)}"
                for r in result.review_rounds
                for f in r.failed_reviewers
            )
            why = tr("why_reviewer_failed", which=which)
        else:
            why = tr(
                "why_unplaced_issues", count=counted(len(result.review_rounds[-1].ignored), "issue")
            )
        text = tr("no_pass", why=why, sections=sections, **counts)
    else:
        text = tr("summary", sections=sections, **counts)
    return with_mark(outcome, text)


def failure_note(stage: str, where: str, reason: str, kept: bool, advice: str = "") -> str:
    """A rewrite that failed: ❌, as `reqstudio rewrite` exits 1; "what was written is kept"
    only when something was, then what to change before resuming (reqstudio/web/resume_advice.py)."""
    failed = tr("failed", stage=stage, where=where, reason=reason)
    text = sentences(failed, tr("kept_written") if kept else tr("kept_none"), advice)
    return with_mark(Outcome.FAILED, text)


def written(progress: RewriteViews, partial: DocumentStructure | None) -> str:
    """The document as far as the run wrote it ("" before any section was: an outline alone
    is headings, not writing)."""
    if partial is not None:
        return partial.to_markdown() if any(s.content.strip() for s in partial.sections) else ""
    return progress.draft_markdown() if progress.written else ""


async def keep_partial(
    progress: RewriteViews,
    partial: DocumentStructure | None,
    note: str,
    run_key: str,
    offer_resume: bool = True,
) -> None:
    """A stop or a failure: what was written stays on screen and can be downloaded, and the
    run can be resumed from its last saved step when a resumed run could go otherwise."""
    markdown = written(progress, partial)
    message = top_level_message(note)
    if markdown.strip():
        structure = (
            (partial or progress.document).model_dump(mode="json")
            if (partial or progress.document)
            else {}
        )
        message.elements = await downloads(markdown, structure, stem="rewritten-partial")
    message.actions = [resume_action(run_key)] if offer_resume else []
    await message.send()


def resume_action(run_key: str) -> cl.Action:
    return cl.Action(name="rewrite_resume", payload={"run": run_key}, label=tr("resume"))
