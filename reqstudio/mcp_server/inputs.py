"""A document as an MCP client hands it over: its text, its bytes in base64, or (over stdio only)
a path on this machine.

Whatever the form, the document is read by the loaders the commands use (`load_reference` for
.md .txt .pdf .docx, `load_items` for those and ReqIF), from a private temporary file named as
the client named it, so a document reads the same through MCP as through `reqstudio check` or
`reqstudio import`. Over HTTP a path is refused: the caller is a remote user, and this
process's files are not theirs to read.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field, model_validator

if TYPE_CHECKING:
    from reqstudio.workspace.items import ItemSet


class InputError(ValueError):
    """A document that cannot be used; the message says why, in one line."""


class DocumentInput(BaseModel):
    """One document: give exactly one of `text`, `content_base64` or `path`."""

    name: str = Field(
        default="document.md",
        description="the file name; its extension says the type (.md .txt .pdf .docx "
        ".reqif .reqifz)",
    )
    text: str | None = Field(
        default=None, description="the document's text (Markdown, text, or a .reqif's XML)"
    )
    content_base64: str | None = Field(
        default=None, description="the file's bytes in base64 (.pdf .docx .reqifz)"
    )
    path: str | None = Field(
        default=None, description="a file on the server's machine (stdio transport only)"
    )

    @model_validator(mode="after")
    def _one_form(self) -> DocumentInput:
        given = [f for f in ("text", "content_base64", "path") if getattr(self, f) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of text, content_base64 or path")
        return self

    @property
    def shown_name(self) -> str:
        return Path(self.path).name if self.path else self.file_name

    @property
    def file_name(self) -> str:
        """The client's name without any folder (it names a file in our temporary folder)."""
        name = Path(self.name.replace("\\", "/")).name.strip()
        return name if name not in ("", ".", "..") else "document.md"


@contextlib.contextmanager
def as_file(document: DocumentInput, *, allow_paths: bool, max_mb: float) -> Iterator[Path]:
    """A path holding `document`: the client's own path (stdio), or a temporary file."""
    if document.path is not None:
        if not allow_paths:
            raise InputError(
                f"{document.name}: a path is read only over stdio; over HTTP send the "
                "document's text or content_base64"
            )
        path = Path(document.path).expanduser()
        if not path.is_file():
            raise InputError(f"no such file: {path}")
        yield path
        return
    if document.text is not None:
        data = document.text.encode("utf-8")
    else:
        try:
            data = base64.b64decode(document.content_base64 or "", validate=True)
        except (binascii.Error, ValueError):
            raise InputError(f"{document.file_name}: content_base64 is not base64") from None
    if len(data) > max_mb * 1024 * 1024:
        raise InputError(
            f"{document.file_name}: {len(data) / 1024 / 1024:.1f} MB, more than the "
            f"{max_mb:g} MB accepted"
        )
    with tempfile.TemporaryDirectory(prefix="reqstudio-mcp-") as folder:
        path = Path(folder) / document.file_name
        path.write_bytes(data)
        yield path


def read_text(document: DocumentInput, *, allow_paths: bool, max_mb: float) -> str:
    """The document's text, as `reqstudio check` reads it: a .md or .txt file as it is (line
    ends normalised, leading lines kept, so the line numbers of findings are the file's)."""
    from reqstudio.modes.srs.documents import ReferenceDocumentError, load_reference

    with as_file(document, allow_paths=allow_paths, max_mb=max_mb) as path:
        try:
            loaded = load_reference(path, document.shown_name, max_mb=max_mb)
        except ReferenceDocumentError as exc:
            raise InputError(exc.message("en")) from None
        if loaded.kind not in ("markdown", "text"):
            return loaded.text
        try:
            raw = path.read_bytes().decode(loaded.encoding).lstrip("\ufeff")
        except (UnicodeDecodeError, LookupError):
            return loaded.text
    return raw.replace("\r\n", "\n").replace("\r", "\n")


def read_items(document: DocumentInput, *, allow_paths: bool, max_mb: float) -> ItemSet:
    """The document's requirement items, as `reqstudio import` reads them."""
    from reqstudio.workspace.items import ItemsError
    from reqstudio.workspace.loading import load_items

    with as_file(document, allow_paths=allow_paths, max_mb=max_mb) as path:
        try:
            item_set = load_items(path, max_mb=max_mb)
        except ItemsError as exc:
            raise InputError(str(exc)) from None
    if not item_set.title or item_set.title == path.stem:
        item_set.title = Path(document.shown_name).stem
    return item_set
