"""Rewrite mode's conversation: the original uploaded or pasted, its clarifications, Resume of
an unfinished run, and the mode's entry."""

from __future__ import annotations

import asyncio
from pathlib import Path

import chainlit as cl

from reqstudio.modes.rewrite import ClarificationItem, RewriteRequest
from reqstudio.modes.srs.documents import ReferenceDocumentError, load_reference
from reqstudio.persistence import open_checkpointer
from reqstudio.web.modes import catalog_mode, name_thread_after_document
from reqstudio.web.rendering import offer_resume as offer_resume_once
from reqstudio.web.reqif_files import is_reqif, read_reqif_upload
from reqstudio.web.resume_advice import resume_refused
from reqstudio.web.rewrite.clarify import choose_clarifications, read_clarifications_file
from reqstudio.web.rewrite.flow import (
    NOTHING_WRITTEN_BEFORE,
    render_rewrite,
    resume_action,
    rewrite_chain,
)
from reqstudio.web.session import button_action, persist_thread_state, runtime
from reqstudio.web.texts import Catalog, lang

MIN_PASTED_CHARS = 30

tr = Catalog("rewrite")


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
        if is_reqif(name):  # requirements from a tool: rewritten as a document
            read = await read_reqif_upload(Path(path), name, max_mb)
            if read is None:
                return False, None
            store_original(*read)
            await cl.Message(content=tr("original_ok", name=read[0], chars=len(read[1]))).send()
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
    stored = cl.user_session.get("rewrite_original") or {}
    original = stored.get("text", "")
    if not original.strip():
        await cl.Message(content=tr("need_original")).send()
        return
    await name_thread_after_document(REWRITE_MODE, original, stored.get("name", ""))
    if clarifications is None:
        clarifications = await choose_clarifications(original)
    await persist_thread_state()
    await render_rewrite(RewriteRequest(original_content=original, clarifications=clarifications))


@button_action("rewrite_resume")
async def on_resume_action(action: cl.Action) -> None:
    await action.remove()
    run_key = action.payload.get("run") or cl.user_session.get("rewrite_active_run")
    if run_key:
        await render_rewrite(None, resume_key=run_key)


async def on_rewrite_resume(thread: dict) -> None:
    # Chainlit sends the stored thread after this handler returns; a task's message comes later.
    asyncio.get_running_loop().create_task(offer_resume())


async def offer_resume() -> None:
    waits_at = ""  # the node the saved run resumes at: the offer says "saved" only after some

    async def is_pending(run_key: str) -> bool:
        nonlocal waits_at
        async with open_checkpointer(runtime().settings) as saver:
            waits_at = await rewrite_chain().pending(saver, run_key) or ""
        return bool(waits_at)

    def offer_text() -> str:
        return tr("resume_offer_none" if waits_at in NOTHING_WRITTEN_BEFORE else "resume_offer")

    run_key = cl.user_session.get("rewrite_active_run")
    if resume_refused(run_key):  # its failed ending offered none: resuming cannot help yet
        return
    await offer_resume_once(run_key, is_pending, offer_text, resume_action(run_key))


REWRITE_MODE = catalog_mode(
    "Rewrite",
    on_message=on_rewrite_message,
    on_resume=on_rewrite_resume,
)
