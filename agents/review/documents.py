"""Reading the document to review: SRS mode's reader (its formats and refusals), keeping a
text file's own leading and trailing lines so that an untouched document comes back unchanged."""

from __future__ import annotations

import contextlib
from pathlib import Path

from agents.srs.documents import ReferenceDocument, load_reference


def load_document(path: Path, name: str | None = None, max_mb: float = 10) -> ReferenceDocument:
    """`load_reference` (raises its `ReferenceDocumentError`s), but a .md/.txt file's text as
    it is in the file (line ends normalised), not stripped."""
    document = load_reference(path, name, max_mb=max_mb)
    if document.kind in ("markdown", "text"):
        with contextlib.suppress(LookupError, UnicodeDecodeError):
            raw = Path(path).read_bytes().decode(document.encoding).lstrip("\ufeff")
            raw = raw.replace("\r\n", "\n").replace("\r", "\n")
            if raw.strip() == document.text:
                return ReferenceDocument(document.name, raw, document.encoding, document.kind)
    return document
