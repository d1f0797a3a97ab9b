"""The tools that need no model: check a document, read it into items, write ReqIF, diff two
versions. Each answers what its command prints with `--json` (`reqstudio check --json`,
`reqstudio import --json`, `reqstudio diff --json`), so a script and an MCP client read the
same keys. The work runs on a worker thread: a large document does not stall other clients."""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from pydantic import Field

from reqstudio.mcp_server.inputs import DocumentInput, InputError, read_items, read_text

Language = Literal["en", "zh"]
Read = TypeVar("Read")


@dataclass(frozen=True)
class ToolLimits:
    """What a client may hand over: paths only over stdio (the local user's own files), and
    documents up to the app's reference size."""

    allow_paths: bool
    max_mb: float


def on_a_worker_thread(
    work: Callable[..., dict[str, Any]],
) -> Callable[..., Awaitable[dict[str, Any]]]:
    """The tool `work` is, run on a worker thread; its signature (what the client is told the
    tool takes) is `work`'s."""

    @functools.wraps(work)
    async def tool(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return await anyio.to_thread.run_sync(functools.partial(work, *args, **kwargs))

    return tool


def register_document_tools(server: FastMCP, limits: ToolLimits) -> None:
    def within_limits(read: Callable[..., Read]) -> Callable[[DocumentInput], Read]:
        """`read` as a tool reads a client's document: within `limits`, an input it refuses
        being the tool's error."""

        def read_document(document: DocumentInput) -> Read:
            try:
                return read(document, allow_paths=limits.allow_paths, max_mb=limits.max_mb)
            except InputError as exc:
                raise ToolError(str(exc)) from None

        return read_document

    text_of, items_of = within_limits(read_text), within_limits(read_items)

    @server.tool(
        name="check_requirements",
        description="Check a requirements document with deterministic rules (ISO/IEC/IEEE "
        "29148 and INCOSE wording, structure, EARS templates; no model). With `request`, also "
        "the request sentences no requirement traces to. Answers what `reqstudio check "
        "--json` prints: summary, findings, requirements.",
    )
    @on_a_worker_thread
    def check_requirements(
        document: DocumentInput,
        request: DocumentInput | None = None,
        language: Language = "en",
    ) -> dict[str, Any]:
        from reqstudio.check.engine import check_document
        from reqstudio.check.report import render_text

        text = text_of(document)
        request_text = text_of(request) if request is not None else None
        report = check_document(text, request=request_text)
        return {
            "file": document.shown_name,
            **report.as_dict(),
            "text": render_text(report, language),
        }

    @server.tool(
        name="import_requirements",
        description="Read a ReqIF file (.reqif, .reqifz) or a document (.md .txt .pdf .docx) "
        "into requirement items: id, uid, text, section, kind, attributes, links. Every element "
        "that could not be read is a line in `skipped`. Stores nothing.",
    )
    @on_a_worker_thread
    def import_requirements(document: DocumentInput) -> dict[str, Any]:
        item_set = items_of(document)
        return {**item_set.as_dict(), "complete": not item_set.skipped}

    @server.tool(
        name="export_reqif",
        description="Write a document's or a ReqIF file's requirement items as ReqIF 1.2: "
        "`reqif` (the XML as `text`) or `reqifz` (a zip, as `content_base64`). `skipped` lists "
        "what of the input could not be read; `complete` is false when it is not empty.",
    )
    @on_a_worker_thread
    def export_reqif(
        document: DocumentInput,
        format: Literal["reqif", "reqifz"] = "reqif",
        title: Annotated[
            str, Field(description="the specification's title (default: the document's)")
        ] = "",
    ) -> dict[str, Any]:
        from reqstudio.workspace.reqif_out import build_reqif, build_reqifz

        item_set = items_of(document)
        name = f"{item_set.title or 'requirements'}.{format}"
        shown = title or item_set.title
        answer: dict[str, Any] = {
            "name": name,
            "format": format,
            "items": len(item_set.items),
            "skipped": list(item_set.skipped),
            "complete": not item_set.skipped,
        }
        if format == "reqifz":
            data = build_reqifz(item_set, f"{item_set.title or 'requirements'}.reqif", shown)
            answer["content_base64"] = base64.b64encode(data).decode("ascii")
        else:
            answer["text"] = build_reqif(item_set, shown)
        return answer

    @server.tool(
        name="diff_requirements",
        description="Compare two versions of requirements (documents or ReqIF files): added, "
        "removed, changed and moved, matched by id then by text, with the changed words and "
        "whether a change touches the meaning (modal verb, number or unit, negation, "
        "condition, actor). Answers what `reqstudio diff --json` prints.",
    )
    @on_a_worker_thread
    def diff_requirements(
        old: DocumentInput, new: DocumentInput, language: Language = "en"
    ) -> dict[str, Any]:
        from reqstudio.workspace.diff import diff_items
        from reqstudio.workspace.diff_report import render_json

        old_items, new_items = items_of(old), items_of(new)
        result = diff_items(old_items, new_items)
        answer = json.loads(render_json(result, old.shown_name, new.shown_name, language))
        answer["skipped"] = {"old": old_items.skipped, "new": new_items.skipped}
        return answer
