"""Reading an uploaded requirements or reference document into plain text.

Accepted: .md/.markdown/.txt (UTF-8 with or without BOM, UTF-16 with BOM; otherwise the user's
locale encoding or what charset-normalizer recognises, GB18030/GBK and Latin-1 among them; a
text whose encoding cannot be told is refused), .pdf with a text layer, .docx. Every refusal is a
`ReferenceDocumentError` carrying a failure code (reqstudio/failures.py) and its values.
"""

from __future__ import annotations

import codecs
import io
import locale
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import charset_normalizer
from charset_normalizer.md import mess_ratio

from reqstudio.failures import Failure, FailureCode, FailureError

if TYPE_CHECKING:
    pass

DocumentKind = Literal["markdown", "text", "pdf", "docx"]
KINDS: dict[str, DocumentKind] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".pdf": "pdf",
    ".docx": "docx",
}
ACCEPTED = ".md, .txt, .pdf, .docx"
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


@dataclass(frozen=True)
class ReferenceDocument:
    name: str
    text: str
    encoding: str  # the text encoding found, or "pdf" / "docx"
    kind: DocumentKind


class ReferenceDocumentError(FailureError):
    """A document that cannot be used; its failure says why and what is allowed, and `code`
    names the problem (`unsupported_type`, `too_large`, `empty`, ...)."""

    def __init__(self, code: str, failure: Failure):
        super().__init__(failure)
        self.code = code


# Each problem's failure code; its message names the file and what is accepted.
_PROBLEMS = {
    "unsupported_type": FailureCode.DOCUMENT_UNSUPPORTED_TYPE,
    "not_found": FailureCode.DOCUMENT_NOT_FOUND,
    "too_large": FailureCode.DOCUMENT_TOO_LARGE,
    "empty": FailureCode.DOCUMENT_EMPTY,
    "binary": FailureCode.DOCUMENT_BINARY,
    "unknown_encoding": FailureCode.DOCUMENT_UNKNOWN_ENCODING,
    "pdf_unreadable": FailureCode.PDF_UNREADABLE,
    "pdf_encrypted": FailureCode.PDF_ENCRYPTED,
    "pdf_no_text": FailureCode.PDF_NO_TEXT,
    "docx_unreadable": FailureCode.DOCX_UNREADABLE,
}


def _refuse(
    code: str, name: str, max_mb: float, failure: FailureCode | None = None, **values: object
) -> ReferenceDocumentError:
    values = {"name": name, "max_mb": max_mb, "accepted": ACCEPTED, **values}
    return ReferenceDocumentError(code, Failure(failure or _PROBLEMS[code], values))


# Stored names carry a 36-character id before them; most file systems take 255 bytes a name.
MAX_NAME_BYTES = 150


def display_name(name: str) -> str:
    """A name safe to show and to store: only the base name (`../../evil.md` is `evil.md`),
    no control characters (a NUL made the SRS turn fail), at most `MAX_NAME_BYTES` bytes of
    UTF-8 with the extension kept (a 300-character name made it fail with OSError 36)."""
    base = name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    base = "".join(char for char in base if char.isprintable()).strip()
    if base in ("", ".", ".."):
        return "file"
    if len(base.encode()) <= MAX_NAME_BYTES:
        return base
    stem, dot, suffix = base.rpartition(".")
    if not dot or not stem or len(suffix.encode()) > 16:
        stem, suffix = base, ""
    room = MAX_NAME_BYTES - len(suffix.encode()) - (1 if suffix else 0) - len("…".encode())
    cut = stem.encode()[:room].decode(errors="ignore")
    return f"{cut}…{'.' + suffix if suffix else ''}"


def load_reference(path: Path, name: str | None = None, max_mb: float = 10) -> ReferenceDocument:
    """Read `path` as text. `name` is the name the user gave the file (uploads are often stored
    under another name); its extension decides the type."""
    path = Path(path)
    name = display_name(name or path.name)
    suffix = Path(name).suffix.lower()
    kind = KINDS.get(suffix)
    if kind is None:
        shown = suffix or "(none)"
        raise _refuse("unsupported_type", name, max_mb, suffix=shown)
    if not path.is_file():
        raise _refuse("not_found", name, max_mb)
    size = path.stat().st_size
    if size > max_mb * 1024 * 1024:
        mb = size / 1024 / 1024
        raise _refuse("too_large", name, max_mb, mb=mb)
    if size == 0:
        raise _refuse("empty", name, max_mb)
    data = path.read_bytes()
    if kind == "pdf":
        text, encoding = _pdf_text(data, name, max_mb), "pdf"
    elif kind == "docx":
        text, encoding = _docx_text(data, name, max_mb), "docx"
    else:
        text, encoding = _decode_text(data, name, max_mb)
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        raise _refuse("empty", name, max_mb, FailureCode.DOCUMENT_NO_TEXT)
    return ReferenceDocument(name=name, text=text, encoding=encoding, kind=kind)


# the control characters a text file does not hold (tab, line breaks and form feeds it may)
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f]")


def _looks_binary(text: str) -> bool:
    control = sum(1 for _ in _CONTROL.finditer(text))
    return "\x00" in text or control > max(2, len(text) // 100)


def locale_encoding() -> str:
    """The user's locale encoding, in Python's codec naming ("utf-8", "cp936", ...)."""
    try:
        return codecs.lookup(locale.getpreferredencoding(False)).name
    except LookupError:
        return "utf-8"


def _decode_text(data: bytes, name: str, max_mb: float) -> tuple[str, str]:
    """UTF-8 (or a BOM's encoding) first, then the user's locale encoding, then detection; a
    file whose encoding cannot be told is refused rather than read as mojibake."""
    binary = _refuse("binary", name, max_mb)
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError:
                raise binary from None
            if _looks_binary(text):
                raise binary
            return text.lstrip("\ufeff"), encoding
    if b"\x00" in data:
        raise binary
    try:
        text, encoding = data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        text, encoding = _locale_or_detected(data, name, max_mb, binary)
    if _looks_binary(text):
        raise binary
    return text, encoding


MESS_LIMIT = 0.2  # charset-normalizer's own threshold for a reading it would consider at all

# Encodings most documents come in, most likely first: when detection finds several readings
# equally plausible (short files: "Café" is cp1252, cp1250, cp1257 or cp775 alike), the first of
# these among them is taken.
COMMON_ENCODINGS = (
    "gb18030",
    "cp1252",
    "latin_1",
    "iso8859_15",
    "big5",
    "shift_jis",
    "euc_jp",
    "cp949",
    "cp1251",
)


def _locale_or_detected(
    data: bytes, name: str, max_mb: float, binary: ReferenceDocumentError
) -> tuple[str, str]:
    """Not UTF-8: the user's locale encoding when the file reads in it without mojibake (files
    made on the user's machine are in it; a GBK file read as cp1252 is all mess); else the detected one when all equally plausible readings
    agree, else a common encoding among them; otherwise refused."""
    own = locale_encoding()
    if own not in ("utf-8", "ascii"):
        try:
            text = data.decode(own)
        except UnicodeDecodeError:
            pass
        else:
            if not _looks_binary(text) and mess_ratio(text) < MESS_LIMIT:
                return text, own
    matches = list(charset_normalizer.from_bytes(data))
    if not matches:
        raise binary
    best = matches[0]
    tier = [
        m for m in matches if m.chaos <= best.chaos + 1e-6 and m.coherence >= best.coherence - 1e-6
    ]
    readings = {str(m) for m in tier}
    if len(readings) > 1:
        for wanted in (codecs.lookup(c).name for c in COMMON_ENCODINGS):
            for match in tier:
                if wanted in {codecs.lookup(c).name for c in match.could_be_from_charset}:
                    return data.decode(wanted), wanted
        names = sorted({m.encoding for m in tier})
        shown = " / ".join(names[:4]) + (" / …" if len(names) > 4 else "")
        raise _refuse("unknown_encoding", name, max_mb, shown=shown)
    return str(best), best.encoding.replace("_", "-")


def _pdf_text(data: bytes, name: str, max_mb: float) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    unreadable = _refuse("pdf_unreadable", name, max_mb)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            opened = False
            try:
                opened = bool(reader.decrypt(""))
            except (PyPdfError, NotImplementedError, ValueError):
                opened = False
            if not opened:
                raise _refuse("pdf_encrypted", name, max_mb)
        pages = [page.extract_text() or "" for page in reader.pages]
    except ReferenceDocumentError:
        raise
    except Exception:  # pypdf raises many types on damaged files
        raise unreadable from None
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text:
        raise _refuse("pdf_no_text", name, max_mb)
    return text


def _docx_text(data: bytes, name: str, max_mb: float) -> str:
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception:  # python-docx raises BadZipFile, KeyError, ValueError, ... on damage
        raise _refuse("docx_unreadable", name, max_mb) from None
    lines: list[str] = []
    for paragraph in document.paragraphs:
        text = paragraph.text.strip()
        if not text:
            continue
        style = (paragraph.style.name if paragraph.style is not None else "") or ""
        if style.startswith("Heading") and style[-1:].isdigit():
            text = "#" * int(style[-1]) + " " + text
        elif style == "Title":
            text = "# " + text
        lines.append(text)
    for table in document.tables:
        for row in table.rows:
            cells = [cell.text.strip() for cell in row.cells]
            if any(cells):
                lines.append("| " + " | ".join(cells) + " |")
    return "\n\n".join(lines)
