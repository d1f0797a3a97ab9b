"""Shared helpers for the SRS tests (no tests here): scripted agent answers, event collection,
and the upload fixtures under tests/data/srs/uploads (regenerate with
`python -m tests.test_srs_support`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reqstudio.modes.srs.engine import SrsRequest, run_srs
from reqstudio.modes.srs.events import NodeFinished, RunFailed, RunFinished, SrsResult
from tests.scripted_server import Reply

SRS_DATA = Path(__file__).resolve().parent / "data" / "srs"
E_STORE = SRS_DATA / "e-store"
UPLOADS = SRS_DATA / "uploads"

# Text that occurs only in one agent's prompt: routes a scripted answer to that agent.
PARSE = "Requirement Parsing Agent"
EXPLORE = "Requirement Exploration Agent"
CLARIFY = "Requirement Clarification Agent"
DOC = "Document Generation Agent"
EVALUATE = "strict SRS requirement review"

SRS_TEXT = (
    "# Software Requirements Specification\n\n## 1. Introduction\n\nThe E-Store sells online.\n"
)


def without_matrix(text: str) -> str:
    """The SRS without the traceability matrix it ends with, which must be
    there: what DocGenerate wrote."""
    from reqstudio.check.trace import split_matrix

    body, matrix = split_matrix(text)
    assert matrix.startswith(("## Traceability matrix", "## 追溯矩阵")), text[-300:]
    return body


def fenced(value: Any) -> str:
    return "```json\n" + json.dumps(value, ensure_ascii=False) + "\n```"


def items(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"id": rid, "content": content} for rid, content in pairs]


def scored(**scores: int) -> list[dict[str, Any]]:
    return [
        {"id": rid.replace("_", "-"), "score": s, "reason": f"scored {s}"}
        for rid, s in scores.items()
    ]


def parse_reply(*pairs: tuple[str, str], **kw: Any) -> Reply:
    return Reply(content=fenced(items(*pairs)), match=PARSE, **kw)


def explore_reply(*pairs: tuple[str, str], **kw: Any) -> Reply:
    return Reply(content=fenced(items(*pairs)), match=EXPLORE, **kw)


def clarify_reply(**scores: int) -> Reply:
    return Reply(content=fenced(scored(**scores)), match=CLARIFY)


def doc_reply(text: str = SRS_TEXT, **kw: Any) -> Reply:
    return Reply(content=text, match=DOC, **kw)


def one_requirement_run(
    parsed: str, explored: str, document: str = SRS_TEXT, *, explore_delay: float = 0.0
) -> list[Reply]:
    """The answers of a run over one requirement, FR-01: parsed, explored (after
    `explore_delay` s), scored 2 (frozen: one round), and the document."""
    return [
        parse_reply(("FR-01", parsed)),
        explore_reply(("FR-01", explored), delay=explore_delay),
        clarify_reply(FR_01=2),
        doc_reply(document),
    ]


async def collect(request: SrsRequest, factory, **kwargs: Any) -> list[Any]:
    return [event async for event in run_srs(request, factory, **kwargs)]


async def collect_resumed(factory, checkpointer, thread_id: str, **kwargs: Any) -> list[Any]:
    """The events of the thread's stopped run, resumed from its last checkpoint."""
    request = SrsRequest(user_input="ignored on resume")
    return await collect(
        request, factory, checkpointer=checkpointer, thread_id=thread_id, resume=True, **kwargs
    )


def finished(events: Sequence[Any]) -> SrsResult:
    last = events[-1]
    assert isinstance(last, RunFinished), f"the run did not finish: {last!r}"
    return last.result


def failed(events: Sequence[Any]) -> RunFailed:
    last = events[-1]
    assert isinstance(last, RunFailed), f"the run did not fail: {last!r}"
    return last


def node_sequence(events: Sequence[Any]) -> list[str]:
    return [e.agent for e in events if isinstance(e, NodeFinished)]


def prompts_for(server_or_requests, marker: str) -> list[str]:
    """The first message of every request whose text contains `marker`, in order."""
    found = []
    for body in getattr(server_or_requests, "requests", server_or_requests):
        text = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
        if marker in text:
            found.append(str(body["messages"][0]["content"]))
    return found


def section(prompt: str, start: str, end: str) -> str:
    """The part of a prompt between two headings, to check what a list shows."""
    return prompt.split(start, 1)[1].split(end, 1)[0]


# --- upload fixtures ------------------------------------------------------------------------

CHINESE_TEXT = (
    "电子商店系统需求说明\n\n"
    "1. 用户可以注册账户并登录系统。\n"
    "2. 系统应在两秒内返回商品搜索结果。\n"
    "3. 信用卡号码只显示最后四位。\n"
)
ENGLISH_TEXT = (
    "E-Store reference\n\nThe system shall confirm each order by e-mail within 5 minutes."
)


def _pdf_with_text(text: str) -> bytes:
    """A one-page PDF with a Helvetica text layer, written by hand (pypdf cannot typeset)."""
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    stream = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return bytes(out)


def write_upload_fixtures(folder: Path = UPLOADS) -> dict[str, Path]:
    """Every accepted kind and every refusal, as small files."""
    import io

    import docx
    from pypdf import PdfReader, PdfWriter

    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, bytes] = {
        "reference-utf8.md": ("# " + ENGLISH_TEXT + "\n\n" + CHINESE_TEXT).encode("utf-8"),
        "reference-utf8-bom.md": b"\xef\xbb\xbf" + CHINESE_TEXT.encode("utf-8"),
        "reference-gbk.txt": (CHINESE_TEXT * 3).encode("gbk"),
        "reference-utf16.txt": CHINESE_TEXT.encode("utf-16"),
        "reference.pdf": _pdf_with_text(ENGLISH_TEXT.replace("\n", " ")),
        "empty.md": b"",
        "blank.txt": b"  \n\n\t \n",
        "binary.txt": bytes(range(256)) * 8,
        "corrupt.pdf": b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog garbage",
        "corrupt.docx": b"PK\x03\x04 this is not really a zip archive",
        "reference.xlsx": b"PK\x03\x04 a spreadsheet",
    }
    blank = PdfWriter()
    blank.add_blank_page(width=612, height=792)
    buffer = io.BytesIO()
    blank.write(buffer)
    files["scanned.pdf"] = buffer.getvalue()
    locked = PdfWriter(clone_from=PdfReader(io.BytesIO(files["reference.pdf"])))
    locked.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    locked.write(buffer)
    files["encrypted.pdf"] = buffer.getvalue()
    document = docx.Document()
    document.add_heading("E-Store reference", level=1)
    document.add_paragraph("The system shall confirm each order by e-mail within 5 minutes.")
    document.add_paragraph(CHINESE_TEXT.splitlines()[2])
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "NFR-01"
    table.rows[0].cells[1].text = "99.999% availability"
    buffer = io.BytesIO()
    document.save(buffer)
    files["reference.docx"] = buffer.getvalue()
    paths = {}
    for name, data in files.items():
        path = folder / name
        path.write_bytes(data)
        paths[name] = path
    return paths


if __name__ == "__main__":
    for path in write_upload_fixtures().values():
        print(path)
