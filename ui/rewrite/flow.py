"""Rewrite mode's run in the browser: the size check, the run drawn by `progress`, the result
as .md and .json, and for a failed or stopped run what was written and the Resume button."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import chainlit as cl

from agents.rewrite.chain import RewriteChain, RewriteResumeError
from agents.rewrite.errors import RewriteStageError, RewriteTooLarge
from agents.rewrite.models import DocumentStructure, RewriteRequest, RewriteResult
from agents.rewrite.sizes import context_sizes
from agents.rewrite.state import RewriteOptions
from reqstudio.errors import describe_failure
from reqstudio.persistence import open_checkpointer
from reqstudio.usage import UsageTracker
from ui.rendering import downloads as files
from ui.rendering import json_bytes, with_word_copies
from ui.rewrite.progress import ChainlitProgress
from ui.rewrite.tables import stage_label
from ui.session import persist_thread_state, runtime, send_notice, start_run, top_level_message
from ui.settings_panel import thread_factory
from ui.texts import Catalog, counted, lang

log = logging.getLogger("reqstudio.rewrite")

tr = Catalog("rewrite")


def rewrite_chain() -> RewriteChain:
    settings = runtime().settings
    options = RewriteOptions(max_review_rounds=settings.rewrite_max_review_rounds, language=lang())
    return RewriteChain(thread_factory(), options=options)


async def render_rewrite(request: RewriteRequest | None, *, resume_key: str | None = None) -> None:
    """Run a rewrite and show it; with `resume_key`, continue that saved run instead."""
    tracker = UsageTracker()
    progress = ChainlitProgress()
    chain = rewrite_chain()
    progress.max_rounds = chain.options.max_review_rounds
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
    try:
        async with open_checkpointer(runtime().settings) as saver:
            result = await chain.ainvoke(
                request,
                progress,
                tracker=tracker,
                checkpointer=saver,
                run_id=run_key,
                resume=resume_key is not None,
            )
    except asyncio.CancelledError:
        await progress.close_step(tr("stopped"), outcome="stopped")
        await keep_partial(progress, None, tr("stopped"), run_key)
        raise
    except RewriteResumeError:
        await top_level_message(tr("nothing_to_resume")).send()
        return
    except (RewriteStageError, RewriteTooLarge) as error:
        log.info("rewrite failed: %s", error, exc_info=True)
        reason = sentence(error.reason_zh if lang() == "zh" else error.reason)
        where = progress.where(error.section_id, error.section_title)
        note = tr("failed", stage=stage_label(error.stage), where=where, reason=reason)
        await progress.close_step(note, error=True)
        await keep_partial(progress, error.partial, note, run_key)
        return
    except Exception as error:  # keep the app running; finished steps are in the checkpoint
        log.exception("rewrite failed")
        reason = sentence(describe_failure(error, lang()))
        note = tr("failed", stage="?", where="", reason=reason)
        await progress.close_step(note, error=True)
        await keep_partial(progress, None, note, run_key)
        return
    await finish(progress, result, time.perf_counter() - started)


def sentence(reason: str) -> str:
    """A reason as a sentence: the failure note goes on after it."""
    reason = reason.strip()
    if reason and reason[-1] not in ".。!！?？":
        reason += "。" if lang() == "zh" else "."
    return reason


async def downloads(
    markdown: str, structure: dict[str, Any], stem: str = "rewritten"
) -> list[cl.File]:
    contents = {f"{stem}.md": markdown.encode(), f"{stem}.json": json_bytes(structure)}
    return files(await with_word_copies(contents))


async def finish(progress: ChainlitProgress, result: RewriteResult, seconds: float) -> None:
    progress.draft.content = result.rewritten_content
    await progress.draft.update()
    counts = dict(
        rounds=counted(result.rounds, "review round"),
        fixed=counted(result.issues_fixed, "issue"),
        tokens=result.usage.get("total_tokens", 0),
        seconds=seconds,
    )
    sections = counted(len(result.structured_document.sections), "section")
    if result.complete:
        text = tr("summary", sections=sections, **counts)
    else:
        names = "、" if lang() == "zh" else ", "
        failed = names.join(f"{f.section_id}「{f.title}」" for f in result.failed_patches)
        text = tr("incomplete", sections=failed, sections_count=sections, **counts)
    summary = top_level_message(text)
    summary.elements = await downloads(result.rewritten_content, result.model_dump(mode="json"))
    await summary.send()
    await persist_thread_state()


async def keep_partial(
    progress: ChainlitProgress,
    partial: DocumentStructure | None,
    note: str,
    run_key: str,
) -> None:
    """A stop or a failure: what was written stays on screen and can be downloaded, and the
    run can be resumed from its last saved step."""
    markdown = partial.to_markdown() if partial is not None else progress.draft_markdown()
    message = top_level_message(note)
    if markdown.strip():
        structure = (
            (partial or progress.document).model_dump(mode="json")
            if (partial or progress.document)
            else {}
        )
        message.elements = await downloads(markdown, structure, stem="rewritten-partial")
    message.actions = [resume_action(run_key)]
    await message.send()


def resume_action(run_key: str) -> cl.Action:
    return cl.Action(name="rewrite_resume", payload={"run": run_key}, label=tr("resume"))
