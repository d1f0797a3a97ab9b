"""SRS mode's reference SRS: read from an attachment or asked for, kept for the thread's
runs (ReqClarify scores against it)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import chainlit as cl

from reqstudio.modes.srs.documents import (
    ReferenceDocument,
    ReferenceDocumentError,
    display_name,
    load_reference,
)
from reqstudio.web.reqif_files import REQIF_ACCEPT, is_reqif, read_reqif_upload
from reqstudio.web.session import LocalizedAskAction, runtime, upload_ceiling_mb
from reqstudio.web.texts import Catalog, lang

tr = Catalog("srs")


ACCEPT = {
    "text/markdown": [".md", ".markdown"],
    "text/plain": [".txt", ".md"],
    "application/pdf": [".pdf"],
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": [".docx"],
    **REQIF_ACCEPT,
}


async def read_document(path: Path, name: str | None = None):
    """pypdf, python-docx and charset detection are CPU-bound: read off the event loop, so
    other users' sessions keep streaming while a large upload is parsed. A ReqIF file is read
    into its requirements, written as Markdown (None when it cannot be: said already)."""
    max_mb = runtime().settings.reference_max_mb
    if is_reqif(name or path.name):
        read = await read_reqif_upload(path, name or path.name, max_mb)
        return None if read is None else ReferenceDocument(read[0], read[1], "utf-8", "markdown")
    return await asyncio.to_thread(load_reference, path, name, max_mb=max_mb)


async def read_attachments(message: cl.Message) -> bool:
    """Read attached reference files; report each refusal. False if one was refused."""
    ok = True
    for element in message.elements or []:
        path = getattr(element, "path", None)
        if not path:
            continue
        try:
            document = await read_document(Path(path), element.name)
        except ReferenceDocumentError as error:
            await cl.Message(content=f"⚠️ {error.message(lang())}").send()
            ok = False
            continue
        if document is None:
            ok = False
            continue
        store_reference(document)  # the attachment's chip is stored by Chainlit
        await cl.Message(
            content=tr(
                "reference_ok",
                name=document.name,
                chars=len(document.text),
                encoding=document.encoding,
            )
        ).send()
    return ok


def store_reference(document) -> None:
    """Keep the reference's text for this thread's runs."""
    cl.user_session.set(
        "srs_reference",
        {"name": document.name, "text": document.text, "encoding": document.encoding},
    )


async def ask_for_reference() -> bool:
    """Ask for the reference when missing. True if one is now stored."""
    answer = await LocalizedAskAction(
        content=tr("ask_reference"),
        actions=[
            cl.Action(name="upload", payload={"choice": "upload"}, label=tr("upload")),
            cl.Action(name="skip", payload={"choice": "skip"}, label=tr("continue_without")),
        ],
        timeout=600,
    ).send()
    if not answer or answer.get("payload", {}).get("choice") != "upload":
        return False
    max_mb = runtime().settings.reference_max_mb
    files = await cl.AskFileMessage(
        content=tr("upload_prompt", mb=max_mb),
        accept=ACCEPT,
        max_size_mb=upload_ceiling_mb(),  # the app refuses bigger files itself, in words
        timeout=600,
    ).send()
    for file in files or []:
        try:
            document = await read_document(Path(file.path), file.name)
        except ReferenceDocumentError as error:
            await cl.Message(content=f"⚠️ {error.message(lang())}").send()
            return False
        if document is None:
            return False
        read = cl.Message(
            content=tr(
                "reference_ok",
                name=document.name,
                chars=len(document.text),
                encoding=document.encoding,
            )
        )
        store_reference(document)
        # Its chip sits on this message. Chainlit has stored the upload as an element of the
        # question under the same id: sent again here, that one element moves to this message.
        read.elements = [
            cl.File(id=file.id, name=display_name(file.name), path=file.path, mime=file.type)
        ]
        await read.send()
        return True
    return False
