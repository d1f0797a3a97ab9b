"""Any file into requirement items: a ReqIF file (.reqif, .reqifz) through the ReqIF reader, a
document (.md .txt .pdf .docx) through the document parser of `reqstudio.workspace.items`."""

from __future__ import annotations

from pathlib import Path

from reqstudio.workspace.items import REQIF_SUFFIXES, ItemsError, ItemSet, items_from_text


def load_items(path: Path, max_mb: float = 10) -> ItemSet:
    """The items of `path`: a ReqIF file (.reqif, .reqifz) or a document (.md .txt .pdf .docx)."""
    if not path.is_file():
        raise ItemsError(f"no such file: {path}")
    if path.suffix.lower() in REQIF_SUFFIXES:
        from reqstudio.workspace.reqif_in import read_reqif

        return read_reqif(path)
    from reqstudio.modes.srs.documents import ReferenceDocumentError, load_reference

    try:
        document = load_reference(path, max_mb=max_mb)
    except ReferenceDocumentError as exc:
        raise ItemsError(exc.message("en")) from None
    return items_from_text(document.text, path.stem)
