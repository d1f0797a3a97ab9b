"""Review mode's conversation: the settings, the document uploaded or pasted, the review of
the SRS just written (SRS mode's "审阅并改进"), Resume, and the mode's entry."""

from __future__ import annotations

import asyncio
from pathlib import Path

import chainlit as cl
from chainlit.input_widget import Switch

from reqstudio.document_model import parse_markdown
from reqstudio.modes.review import pending_review, saved_review
from reqstudio.modes.review.documents import load_document
from reqstudio.modes.srs.documents import ReferenceDocumentError
from reqstudio.persistence import open_checkpointer
from reqstudio.web.modes import catalog_mode, name_thread_after_document, rounds_slider
from reqstudio.web.rendering import offer_resume as offer_resume_once
from reqstudio.web.reqif_files import is_reqif, read_reqif_upload
from reqstudio.web.requirements_check import show_requirements_check
from reqstudio.web.resume_advice import resume_refused
from reqstudio.web.review.flow import render_review
from reqstudio.web.review.results import resume_action
from reqstudio.web.session import button_action, persist_thread_state, runtime
from reqstudio.web.texts import Catalog, counted, lang

MIN_PASTED_CHARS = 30

tr = Catalog("review")


@button_action("review_resume")
async def on_resume_action(action: cl.Action) -> None:
    await action.remove()
    run_key = action.payload.get("run") or cl.user_session.get("review_active_run")
    if run_key:
        await render_review("", "", resume_key=run_key)


async def on_review_resume(thread: dict) -> None:
    # Chainlit sends the stored thread after this handler returns; a task's message comes later.
    asyncio.get_running_loop().create_task(offer_resume())


async def offer_resume() -> None:
    finished = 0  # the saved run's finished rounds: the offer says "saved" only of some

    async def is_pending(run_key: str) -> bool:
        nonlocal finished
        async with open_checkpointer(runtime().settings) as saver:
            if not await pending_review(saver, run_key):
                return False
            saved = await saved_review(saver, run_key)
        finished = len(saved.rounds) if saved is not None else 0
        return True

    def offer_text() -> str:
        return tr("resume_offer") if finished else tr("resume_offer_none")

    run_key = cl.user_session.get("review_active_run")
    if resume_refused(run_key):  # its failed ending offered none: resuming cannot help yet
        return
    await offer_resume_once(run_key, is_pending, offer_text, resume_action(run_key))


def settings_widgets() -> list:
    settings = runtime().settings
    pause = settings.review_pause_after_round  # after each round, for the user's edits
    return [
        rounds_slider("review_max_rounds", tr("settings_rounds"), settings.review_max_rounds),
        Switch(id="review_pause", label=tr("settings_pause"), initial=pause),
    ]


async def read_document(message: cl.Message) -> tuple[str, str] | None:
    """(name, text) of the attached document or the pasted text; refusals are reported."""
    max_mb = runtime().settings.reference_max_mb
    for element in message.elements or []:
        path = getattr(element, "path", None)
        if not path:
            continue
        if is_reqif(element.name or path):  # requirements from a tool: read as a document
            # (checked below with every document: no button for it)
            return await read_reqif_upload(
                Path(path), element.name or path, max_mb, offer_check=False
            )
        try:
            # pypdf / python-docx / charset detection are CPU-bound: off the event loop
            loaded = await asyncio.to_thread(load_document, Path(path), element.name, max_mb=max_mb)
        except ReferenceDocumentError as error:
            await cl.Message(content=f"⚠️ {error.message(lang())}").send()
            return None
        return loaded.name, loaded.text
    text = (message.content or "").strip()
    if len(text) >= MIN_PASTED_CHARS:
        return (text.splitlines()[0].lstrip("# ").strip()[:60] or "document"), text
    await cl.Message(content=tr("need_document", chars=MIN_PASTED_CHARS)).send()
    return None


async def on_review_message(message: cl.Message) -> None:
    found = await read_document(message)
    if found is None:
        return
    name, text = found
    await name_thread_after_document(REVIEW_MODE, text, name)
    sections = len(parse_markdown(text).sections)
    await cl.Message(
        content=tr("document_ok", name=name, chars=len(text), sections=counted(sections, "section"))
    ).send()
    await show_requirements_check(text)
    await persist_thread_state()
    await render_review(text, name)


async def review_generated_srs(srs_markdown: str) -> str | None:
    """SRS mode's "审阅并改进": review the SRS just written in this thread; the improved SRS,
    or None if the review did not finish."""
    result = await render_review(srs_markdown, "srs.md", thread_suffix="srs-review")
    if result is None:
        return None
    await cl.Message(content=tr("srs_reviewed")).send()
    return result.improved_markdown


REVIEW_MODE = catalog_mode(
    "Review",
    on_message=on_review_message,
    on_resume=on_review_resume,
    settings=settings_widgets,
)
