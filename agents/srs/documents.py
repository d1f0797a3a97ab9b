"""Reading an uploaded requirements or reference document into plain text.

Accepted: .md/.markdown/.txt (UTF-8 with or without BOM, UTF-16 with BOM; otherwise the user's
locale encoding or what charset-normalizer recognises, GB18030/GBK and Latin-1 among them; a
text whose encoding cannot be told is refused), .pdf with a text layer, .docx. Every refusal is a
`ReferenceDocumentError` carrying the same message in English and in Chinese.
"""

from __future__ import annotations

import codecs
import io
import locale
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import charset_normalizer
from charset_normalizer.md import mess_ratio

from reqstudio.bilingual import BilingualError

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


class ReferenceDocumentError(BilingualError):
    """A document that cannot be used; `message_en` / `message_zh` say why and what is allowed."""

    def __init__(self, code: str, message_en: str, message_zh: str):
        super().__init__(message_en, message_zh)
        self.code = code


def _refuse(code: str, name: str, max_mb: float, problem_en: str, problem_zh: str):
    return ReferenceDocumentError(
        code,
        f"{name}: {problem_en} Accepted: {ACCEPTED} with readable text, up to {max_mb:g} MB.",
        f"{name}：{problem_zh}支持的格式：{ACCEPTED}（须含可读取的文字），大小不超过 {max_mb:g} MB。",
    )


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
        raise _refuse(
            "unsupported_type",
            name,
            max_mb,
            f"the file type {shown} is not supported.",
            f"不支持的文件类型 {shown}。",
        )
    if not path.is_file():
        raise _refuse("not_found", name, max_mb, "the file was not found.", "找不到该文件。")
    size = path.stat().st_size
    if size > max_mb * 1024 * 1024:
        mb = size / 1024 / 1024
        raise _refuse(
            "too_large",
            name,
            max_mb,
            f"the file is {mb:.1f} MB, over the {max_mb:g} MB limit.",
            f"文件大小为 {mb:.1f} MB，超过 {max_mb:g} MB 的上限。",
        )
    if size == 0:
        raise _refuse("empty", name, max_mb, "the file is empty.", "文件为空。")
    data = path.read_bytes()
    if kind == "pdf":
        text, encoding = _pdf_text(data, name, max_mb), "pdf"
    elif kind == "docx":
        text, encoding = _docx_text(data, name, max_mb), "docx"
    else:
        text, encoding = _decode_text(data, name, max_mb)
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        raise _refuse("empty", name, max_mb, "the file holds no text.", "文件中没有文字内容。")
    return ReferenceDocument(name=name, text=text, encoding=encoding, kind=kind)


def _looks_binary(text: str) -> bool:
    control = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\f\v")
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
    binary = _refuse(
        "binary",
        name,
        max_mb,
        "the file is not text (binary content, or an encoding that could not be recognised).",
        "文件不是文本（二进制内容，或无法识别的编码）。",
    )
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
        raise _refuse(
            "unknown_encoding",
            name,
            max_mb,
            f"its text encoding cannot be told for sure (it reads differently as {shown}); "
            "save it as UTF-8 and try again.",
            f"无法确定文件的文字编码（按 {shown} 读出的文字各不相同）；请另存为 UTF-8 后重试。",
        )
    return str(best), best.encoding.replace("_", "-")


def _pdf_text(data: bytes, name: str, max_mb: float) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    unreadable = _refuse(
        "pdf_unreadable",
        name,
        max_mb,
        "the PDF could not be read (damaged or not a PDF).",
        "无法读取该 PDF（文件损坏或不是 PDF）。",
    )
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            opened = False
            try:
                opened = bool(reader.decrypt(""))
            except (PyPdfError, NotImplementedError, ValueError):
                opened = False
            if not opened:
                raise _refuse(
                    "pdf_encrypted",
                    name,
                    max_mb,
                    "the PDF is password-protected.",
                    "该 PDF 受密码保护。",
                )
        pages = [page.extract_text() or "" for page in reader.pages]
    except ReferenceDocumentError:
        raise
    except Exception:  # pypdf raises many types on damaged files
        raise unreadable from None
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text:
        raise _refuse(
            "pdf_no_text",
            name,
            max_mb,
            "the PDF has no extractable text (a scanned document?).",
            "该 PDF 中没有可提取的文字（可能是扫描件）。",
        )
    return text


def _docx_text(data: bytes, name: str, max_mb: float) -> str:
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception:  # python-docx raises BadZipFile, KeyError, ValueError, ... on damage
        raise _refuse(
            "docx_unreadable",
            name,
            max_mb,
            "the Word document could not be read (damaged, or not a .docx file).",
            "无法读取该 Word 文档（文件损坏或不是 .docx 格式）。",
        ) from None
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
