"""Reading an uploaded requirements or reference document into plain text.

Accepted: .md/.markdown/.txt (UTF-8 with or without BOM, UTF-16 with BOM, GB18030/GBK and
whatever else charset-normalizer recognises), .pdf with a text layer, .docx. Every refusal is a
`ReferenceDocumentError` carrying the same message in English and in Chinese.
"""

from __future__ import annotations

import codecs
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import charset_normalizer

from reqstudio.llm import estimate_tokens

if TYPE_CHECKING:
    from reqstudio.llm import ModelFactory
    from reqstudio.settings import ModelRole

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


class ReferenceDocumentError(ValueError):
    """A document that cannot be used; `message_en` / `message_zh` say why and what is allowed."""

    def __init__(self, code: str, message_en: str, message_zh: str):
        super().__init__(message_en)
        self.code = code
        self.message_en = message_en
        self.message_zh = message_zh

    def message(self, language: str = "en") -> str:
        return self.message_zh if language.startswith("zh") else self.message_en


def context_overflow(prompt: str, role: ModelRole, factory: ModelFactory) -> tuple[int, int] | None:
    """(estimated tokens, the model's context) when a request carrying whole documents would
    not fit the role's model (`OPENAI_CONTEXT_TOKENS` or the model's known window); else None.
    The provider would refuse such a request, or, worse, cut it and answer about a part."""
    needed = estimate_tokens(prompt)
    limit = factory.context_tokens(role)
    return (needed, limit) if needed > limit else None


def _refuse(code: str, name: str, max_mb: float, problem_en: str, problem_zh: str):
    return ReferenceDocumentError(
        code,
        f"{name}: {problem_en} Accepted: {ACCEPTED} with readable text, up to {max_mb:g} MB.",
        f"{name}：{problem_zh}支持的格式：{ACCEPTED}（须含可读取的文字），大小不超过 {max_mb:g} MB。",
    )


def display_name(name: str) -> str:
    """Only a file's base name is ever shown: `../../evil.md` is `evil.md`."""
    base = name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].strip()
    return base if base not in ("", ".", "..") else "file"


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


def _decode_text(data: bytes, name: str, max_mb: float) -> tuple[str, str]:
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
        match = charset_normalizer.from_bytes(data).best()
        if match is None:
            raise binary from None
        text, encoding = str(match), match.encoding.replace("_", "-")
    if _looks_binary(text):
        raise binary
    return text, encoding


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
