"""Rewrite mode in the browser: the original uploaded (or pasted), clarifications from a .json
or asked one at a time, then the run (its steps drawn by `ui.rewrite_progress`), the result as
.md and .json, and Resume for a run that failed or was stopped."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

import chainlit as cl

from agents.rewrite import (
    ClarificationItem,
    DocumentStructure,
    RewriteChain,
    RewriteRequest,
    RewriteResult,
    RewriteStageError,
)
from agents.rewrite.chain import RewriteResumeError
from agents.rewrite.errors import RewriteTooLarge
from agents.rewrite.questions import (
    ClarificationsError,
    Reply,
    ask_one_at_a_time,
    parse_clarifications,
    propose_questions,
)
from agents.rewrite.sizes import context_sizes
from agents.rewrite.state import RewriteOptions
from agents.srs.documents import ReferenceDocumentError, load_reference
from reqstudio.errors import describe_failure
from reqstudio.persistence import open_checkpointer
from reqstudio.usage import UsageTracker
from ui.modes import ModeSpec, catalog_texts
from ui.rewrite_progress import ChainlitProgress, stage_label
from ui.rewrite_texts import tr
from ui.session import (
    persist_thread_state,
    runtime,
    send_notice,
    step_icon,
    top_level_message,
)
from ui.texts import lang

log = logging.getLogger("reqstudio.rewrite")

ASK_TIMEOUT = 1800  # seconds: people need time to think about a question
MIN_PASTED_CHARS = 30

ACCEPT = {
    "text/markdown": [".md", ".markdown"],
    "text/plain": [".txt", ".md"],
    "application/pdf": [".pdf"],
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": [".docx"],
    "application/json": [".json"],
}


# --- the conversation ----------------------------------------------------------------------


async def on_rewrite_start() -> None:
    await send_notice(tr("intro"))


def store_original(name: str, text: str) -> None:
    cl.user_session.set("rewrite_original", {"name": name, "text": text})


async def read_attachments(message: cl.Message) -> tuple[bool, list[ClarificationItem] | None]:
    """Read attached files: documents become the original, a .json the clarifications.
    Returns (ok, clarifications or None when no .json came)."""
    clarifications = None
    max_mb = runtime().settings.reference_max_mb
    for element in message.elements or []:
        path = getattr(element, "path", None)
        if not path:
            continue
        name = element.name or Path(path).name
        if name.lower().endswith(".json"):
            items = await read_clarifications_file(Path(path), name)
            if items is None:
                return False, None
            clarifications = items
            continue
        try:
            # pypdf / python-docx / charset detection are CPU-bound: off the event loop
            document = await asyncio.to_thread(load_reference, Path(path), name, max_mb=max_mb)
        except ReferenceDocumentError as error:
            await cl.Message(content=f"⚠️ {error.message(lang())}").send()
            return False, None
        store_original(document.name, document.text)
        await cl.Message(
            content=tr("original_ok", name=document.name, chars=len(document.text))
        ).send()
    return True, clarifications


async def read_clarifications_file(path: Path, name: str) -> list[ClarificationItem] | None:
    try:
        items = parse_clarifications(path.read_text(encoding="utf-8-sig"))
    except (ClarificationsError, UnicodeDecodeError) as error:
        reason = str(error) if isinstance(error, ClarificationsError) else "not UTF-8 text"
        await cl.Message(content=tr("clarifications_bad", name=name, reason=reason)).send()
        return None
    await cl.Message(content=tr("clarifications_ok", name=name, count=len(items))).send()
    return items


async def choose_clarifications(original: str) -> list[ClarificationItem]:
    ask = cl.AskActionMessage(
        content=tr("how_clarify"),
        actions=[
            cl.Action(name="ask", payload={"choice": "ask"}, label=tr("let_app_ask")),
            cl.Action(name="upload", payload={"choice": "upload"}, label=tr("upload_json")),
            cl.Action(name="none", payload={"choice": "none"}, label=tr("no_clarify")),
        ],
        timeout=ASK_TIMEOUT,
    )
    asked = ask.content
    choice = await ask.send()
    ask.content = asked
    await record_choice(ask, choice)
    picked = (choice or {}).get("payload", {}).get("choice", "none")
    if picked == "upload":
        files = await cl.AskFileMessage(
            content=tr("upload_json_prompt"),
            accept={"application/json": [".json"]},
            max_size_mb=1,
            timeout=ASK_TIMEOUT,
        ).send()
        for file in files or []:
            items = await read_clarifications_file(Path(file.path), file.name)
            return items or []
        return []
    if picked == "ask":
        return await ask_questions(original)
    return []


async def ask_questions(original: str) -> list[ClarificationItem]:
    settings = runtime().settings
    async with cl.Step(name=tr("proposing"), type="llm", icon=step_icon("llm", None)) as step:
        try:
            questions = await propose_questions(
                original,
                runtime().factory(),
                max_questions=settings.rewrite_max_questions,
            )
        except Exception as error:
            log.warning("rewrite: no questions", exc_info=True)
            step.output = describe_failure(error, lang())
            await cl.Message(
                content=tr("questions_failed", reason=describe_failure(error, lang()))
            ).send()
            return []
        step.output = "\n".join(f"{i}. {q}" for i, q in enumerate(questions, start=1))
    if not questions:
        await cl.Message(content=tr("no_questions")).send()
        return []

    async def ask(index: int, total: int, question: str) -> Reply:
        choice = cl.AskActionMessage(
            content=tr("question", index=index, total=total, question=question)
            + "\n\n"
            + tr("answer_or_skip"),
            actions=[
                cl.Action(name="answer", payload={"a": "answer"}, label=tr("answer")),
                cl.Action(name="skip", payload={"a": "skip"}, label=tr("skip")),
                cl.Action(name="stop", payload={"a": "stop"}, label=tr("stop_asking")),
            ],
            timeout=ASK_TIMEOUT,
        )
        asked = choice.content
        picked = await choice.send()
        choice.content = asked
        await record_choice(choice, picked)
        action = (picked or {}).get("payload", {}).get("a", "stop")
        if action != "answer":
            return Reply(action)
        answer = await cl.AskUserMessage(
            content=tr("your_answer", index=index), timeout=ASK_TIMEOUT
        ).send()
        return Reply("answer", (answer or {}).get("output", ""))

    outcome = await ask_one_at_a_time(questions, ask)
    await cl.Message(
        content=tr(
            "qa_summary",
            answered=len(outcome.clarifications),
            skipped=len(outcome.skipped),
            unasked=len(outcome.not_asked),
        )
    ).send()
    return outcome.clarifications


async def record_choice(choice: cl.AskActionMessage, picked: dict | None) -> None:
    """Chainlit replaces an answered question's text with "**Selected:** <label>" (in English):
    keep the question readable and say what was chosen in the user's language."""
    question = choice.content
    picked_label = (picked or {}).get("label")
    asked = question.split("\n\n")[0]
    outcome = tr("chosen", label=picked_label) if picked_label else tr("timed_out")
    choice.content = f"{asked}\n\n{outcome}"
    await choice.update()


async def on_rewrite_message(message: cl.Message) -> None:
    ok, clarifications = await read_attachments(message)
    if not ok:
        return
    text = (message.content or "").strip()
    attached_original = any(
        not (e.name or "").lower().endswith(".json") for e in message.elements or []
    )
    if not attached_original and len(text) >= MIN_PASTED_CHARS:
        store_original(text.splitlines()[0][:60], text)
    original = (cl.user_session.get("rewrite_original") or {}).get("text", "")
    if not original.strip():
        await cl.Message(content=tr("need_original")).send()
        return
    if clarifications is None:
        clarifications = await choose_clarifications(original)
    await persist_thread_state()
    await render_rewrite(RewriteRequest(original_content=original, clarifications=clarifications))


def rewrite_chain() -> RewriteChain:
    settings = runtime().settings
    options = RewriteOptions(max_review_rounds=settings.rewrite_max_review_rounds, language=lang())
    return RewriteChain(runtime().factory(), options=options)


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
        sequence = int(cl.user_session.get("rewrite_run_seq") or 0) + 1
        cl.user_session.set("rewrite_run_seq", sequence)
        run_key = f"{cl.context.session.thread_id}:rewrite:{sequence}"
        cl.user_session.set("rewrite_active_run", run_key)
        await persist_thread_state()
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
        await progress.close_step(tr("stopped"), error=True)
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


def downloads(markdown: str, structure: dict[str, Any], stem: str = "rewritten") -> list[cl.File]:
    return [
        cl.File(name=f"{stem}.md", content=markdown.encode(), mime="text/markdown"),
        cl.File(
            name=f"{stem}.json",
            content=json.dumps(structure, ensure_ascii=False, indent=2).encode(),
            mime="application/json",
        ),
    ]


async def finish(progress: ChainlitProgress, result: RewriteResult, seconds: float) -> None:
    progress.draft.content = result.rewritten_content
    await progress.draft.update()
    counts = dict(
        rounds=result.rounds,
        fixed=result.issues_fixed,
        tokens=result.usage.get("total_tokens", 0),
        seconds=seconds,
    )
    sections = len(result.structured_document.sections)
    if result.complete:
        text = tr("summary", sections=sections, **counts)
    else:
        names = "、" if lang() == "zh" else ", "
        failed = names.join(f"{f.section_id}「{f.title}」" for f in result.failed_patches)
        text = tr("incomplete", sections=failed, sections_count=sections, **counts)
    summary = top_level_message(text)
    summary.elements = downloads(result.rewritten_content, result.model_dump(mode="json"))
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
        message.elements = downloads(markdown, structure, stem="rewritten-partial")
    message.actions = [resume_action(run_key)]
    await message.send()


def resume_action(run_key: str) -> cl.Action:
    return cl.Action(name="rewrite_resume", payload={"run": run_key}, label=tr("resume"))


@cl.action_callback("rewrite_resume")
async def on_resume_action(action: cl.Action) -> None:
    await action.remove()
    run_key = action.payload.get("run") or cl.user_session.get("rewrite_active_run")
    if run_key:
        await render_rewrite(None, resume_key=run_key)


# (browser session, run) pairs already offered: restoring a thread reconnects the browser,
# which runs on_chat_resume a second time.
_OFFERED: set[tuple[str, str]] = set()


async def on_rewrite_resume(thread: dict) -> None:
    # Chainlit sends the stored thread after this handler returns; a task's message comes later.
    asyncio.get_running_loop().create_task(offer_resume())


async def offer_resume() -> None:
    run_key = cl.user_session.get("rewrite_active_run")
    offer_key = (cl.context.session.id, str(run_key))
    if not run_key or offer_key in _OFFERED:
        return
    _OFFERED.add(offer_key)
    async with open_checkpointer(runtime().settings) as saver:
        pending = await rewrite_chain().pending(saver, run_key)
    if pending:
        await cl.Message(content=tr("resume_offer"), actions=[resume_action(run_key)]).send()


REWRITE_MODE = ModeSpec(
    id="Rewrite",
    **catalog_texts("rewrite"),
    on_message=on_rewrite_message,
    on_start=on_rewrite_start,
    on_resume=on_rewrite_resume,
)
