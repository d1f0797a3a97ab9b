"""ReqIF in the browser: a `.reqif` copy beside every document a mode produces (as the .docx
is), and a `.reqif` / `.reqifz` upload read into requirement items and handed to the mode as
a Markdown document, with a line for every element of the file that was not read."""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
from pathlib import Path

import chainlit as cl

from reqstudio.workspace.items import REQIF_SUFFIXES, ItemsError

log = logging.getLogger("reqstudio.ui")

# No registered media type for ReqIF: browsers download it, and the file store keeps it.
REQIF_MEDIA_TYPE = "application/octet-stream"
# What the upload dialogs accept besides documents: by extension, since browsers know no type.
REQIF_ACCEPT = {REQIF_MEDIA_TYPE: list(REQIF_SUFFIXES)}


def reqif_name(markdown_name: str) -> str:
    """`improved.md` -> `improved.reqif`."""
    return markdown_name.removesuffix(".md") + ".reqif"


def _build(markdown: str, title: str) -> bytes:
    from reqstudio.workspace.items import items_from_text
    from reqstudio.workspace.reqif_out import build_reqif

    item_set = items_from_text(markdown, title)
    return build_reqif(item_set, item_set.title or title).encode("utf-8")


async def reqif_copy(markdown: str, title: str) -> bytes | None:
    """The document's requirement items as ReqIF 1.2 (off the event loop); None if it cannot
    be made, which is logged: the Markdown file is still offered."""
    try:
        return await asyncio.to_thread(_build, markdown, title)
    except Exception:
        log.exception("no .reqif beside the document")
        return None


def _plain(line: str) -> str:
    """A skipped element's line shown as written (identifiers hold `_` and `*`)."""
    for mark in ("\\", "`", "*", "_", "<", "[", "]"):
        line = line.replace(mark, "\\" + mark)
    return line


def is_reqif(name: str) -> bool:
    return Path(name).suffix.lower() in REQIF_SUFFIXES


def _read(path: Path, name: str, max_mb: float):
    """Items and Markdown of the upload at `path`, read under the name the user gave it (an
    upload is stored as `<uuid>.bin`: the reader goes by the suffix, its lines by the name)."""
    from reqstudio.workspace.items_markdown import items_markdown
    from reqstudio.workspace.loading import load_items

    if path.stat().st_size > max_mb * 1024 * 1024:
        raise ItemsError(f"larger than {max_mb:g} MB")
    with tempfile.TemporaryDirectory() as folder:
        named = Path(folder) / name
        shutil.copyfile(path, named)
        item_set = load_items(named, max_mb=max_mb)
    return item_set, items_markdown(item_set, named.stem)


async def read_reqif_upload(
    path: Path, name: str, max_mb: float, *, offer_check: bool = True
) -> tuple[str, str] | None:
    """(name, Markdown) of an uploaded ReqIF file, its skipped elements said one a line, with
    buttons to store its items in the thread's project and (`offer_check`: the mode does not
    check it itself) to check them (`reqstudio.web.reqif_actions`); None (and why, said) when
    it cannot be read or holds no requirement."""
    from reqstudio.modes.srs.documents import display_name
    from reqstudio.web.reqif_actions import import_actions, keep_import
    from reqstudio.web.texts import Catalog, counted, lang
    from reqstudio.workspace.skips import skip_words

    tr = Catalog("workspace")
    shown = display_name(name)
    try:
        item_set, markdown = await asyncio.to_thread(_read, path, shown, max_mb)
    except ItemsError as error:
        await cl.Message(content=f"⚠️ {tr('reqif_unreadable', name=shown, reason=error)}").send()
        return None
    except Exception as error:  # a damaged zip or XML the reader did not foresee
        log.warning("ReqIF upload %s not read: %s", shown, error)
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        await cl.Message(content=f"⚠️ {tr('reqif_unreadable', name=shown, reason=reason)}").send()
        return None
    requirements = [i for i in item_set.items if i.kind not in ("heading", "information")]
    lines = [
        tr("reqif_read", name=shown, items=counted(len(requirements), "requirement")),
    ]
    if item_set.skipped:
        lines.append(tr("reqif_skipped", count=len(item_set.skipped)))
        lines += [f"- {skip_words(line, lang(), _plain)}" for line in item_set.skipped]
    if not requirements:
        await cl.Message(content="\n".join(lines)).send()
        await cl.Message(content=f"⚠️ {tr('reqif_empty', name=shown)}").send()
        return None
    actions = import_actions(keep_import(shown, item_set, markdown), check=offer_check)
    await cl.Message(content="\n".join(lines), actions=actions).send()
    return shown, markdown
