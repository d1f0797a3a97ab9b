"""Where each requirement of an SRS run came from (issue 22 item 8), recorded without a model.

- ReqParse's items come from the request: each is matched to the request sentences it shares
  content words with (`agents.check.trace.match_sentences`; none when no sentence matches,
  said so, never guessed).
- An id that ReqExplore adds in round k comes from that round ("clarification round k"; in
  the no-clarify mode, which has no ReqClarify, "exploration round k"). From round 2 on, in a
  run scored against a reference SRS, the reference section its text matches best is named
  too: round k's items answer the scores of round k-1, given against the reference.
- An item whose text ReqExplore changes keeps its origin; the rounds that changed it are
  listed ("revised in round 1, 2").

The state keeps `origins` ({id: origin}); `trace_rows` turns it into the matrix the SRS ends
with (`matrix_markdown`) and the CSV offered beside it (`matrix_csv`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, Field

# The matching itself is the checker's (agents.check.trace), imported when used: `reqstudio
# srs --help` loads no other mode.

OriginKind = Literal["request", "round", "user", "unknown"]
QUOTE_CHARS = 60
CSV_NAME = "srs-trace.csv"
CSV_COLUMNS = [
    "id",
    "requirement",
    "origin",
    "kind",
    "request_sentences",
    "round",
    "reference_section",
    "revised_in_rounds",
]


class TraceRow(BaseModel):
    """One row of the traceability matrix."""

    id: str
    requirement: str
    kind: OriginKind = "unknown"
    sentences: list[int] = Field(default_factory=list)  # request sentences, from 1
    round: int | None = None  # the round that added it (kind "round")
    reference_section: str = ""  # the reference section it matches (kind "round")
    revised: list[int] = Field(default_factory=list)  # rounds whose ReqExplore changed it
    user_edited: list[int] = Field(default_factory=list)  # rounds after which the user did
    clarified: bool = True  # the run had ReqClarify ("clarification round" vs "exploration")
    origin: str = ""  # the origin as the matrix writes it, in English
    origin_zh: str = ""  # ... and in Chinese


def parse_origins(user_input: str, req_list: Sequence[Mapping[str, Any]]) -> dict[str, dict]:
    """ReqParse's items: each traced to the request sentences its text matches."""
    from agents.check.trace import match_sentences, request_sentences

    sentences = request_sentences(user_input)
    return {
        str(item["id"]): {
            "kind": "request",
            "sentences": match_sentences(str(item["content"]), sentences),
        }
        for item in req_list
    }


@lru_cache(maxsize=4)
def reference_sections(reference: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(title, text of each section), for matching; (titles) to name them. Kept per reference
    text: each ReqExplore round matches against it, and the CLI parses it ahead, in a thread,
    while ReqParse's call is out."""
    from reqstudio.document_model import parse_markdown

    sections = [s for s in parse_markdown(reference).sections if s.title.strip()]
    return (
        tuple(f"{s.title}\n{s.content}" for s in sections),
        tuple(s.title.strip() for s in sections),
    )


def explore_origins(
    origins: Mapping[str, dict],
    previous: Sequence[Mapping[str, Any]],
    merged: Sequence[Mapping[str, Any]],
    round_number: int,
    reference: str = "",
) -> dict[str, dict]:
    """The origins after ReqExplore's round `round_number`: new ids come from the round
    (with the reference section they match when `reference` is given), changed ones are
    marked revised in it."""
    from agents.check.trace import best_match

    before = {str(it["id"]): str(it["content"]) for it in previous}
    updated = {rid: dict(origin) for rid, origin in origins.items()}
    sections: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    for item in merged:
        rid, content = str(item["id"]), str(item["content"])
        if rid not in before:
            origin: dict[str, Any] = {"kind": "round", "round": round_number}
            if reference.strip():
                if sections is None:
                    sections = reference_sections(reference)
                found = best_match(content, sections[0])
                if found is not None:
                    origin["reference"] = sections[1][found]
            updated[rid] = origin
        elif before[rid] != content and rid in updated:
            revised = list(updated[rid].get("revised", []))
            if round_number not in revised:
                revised.append(round_number)
            updated[rid]["revised"] = revised
    return updated


def _quote(sentence: str) -> str:
    text = " ".join(sentence.split())
    if len(text) > QUOTE_CHARS:
        text = text[: QUOTE_CHARS - 1].rstrip() + "…"
    return f"“{text}”"


def origin_labels(row: TraceRow, sentences: Sequence[str]) -> tuple[str, str]:
    """How the matrix states a row's origin, in English and in Chinese."""
    from agents.check.trace import REQUEST_PREFIX

    if row.kind == "request":
        if row.sentences:
            refs = ", ".join(f"S{n}" for n in row.sentences)
            quotes = " / ".join(
                _quote(sentences[n - 1]) for n in row.sentences if 0 < n <= len(sentences)
            )
            en = f"{REQUEST_PREFIX['en']} {refs}: {quotes}"
            zh = f"{REQUEST_PREFIX['zh']} {refs}：{quotes}"
        else:
            en = f"{REQUEST_PREFIX['en']} (no single sentence matches)"
            zh = f"{REQUEST_PREFIX['zh']}（没有可对应的单句）"
    elif row.kind == "round":
        if row.clarified:
            en, zh = f"clarification round {row.round}", f"澄清第 {row.round} 轮"
        else:
            en, zh = f"exploration round {row.round}", f"探索第 {row.round} 轮"
        if row.reference_section:
            en += f" (reference § {row.reference_section})"
            zh += f"（参考 SRS § {row.reference_section}）"
    elif row.kind == "user":
        en, zh = f"added by the user after round {row.round}", f"用户在第 {row.round} 轮后添加"
    else:
        en = "unknown (recorded before this run kept origins)"
        zh = "未知（该运行开始时尚未记录来源）"
    if row.revised:
        rounds = ", ".join(str(r) for r in row.revised)
        en += f"; revised in round {rounds}"
        zh += f"；第 {'、'.join(str(r) for r in row.revised)} 轮修订"
    if row.user_edited:
        en += f"; edited by the user after round {', '.join(str(r) for r in row.user_edited)}"
        zh += f"；用户在第 {'、'.join(str(r) for r in row.user_edited)} 轮后修改"
    return en, zh


def user_origins(
    origins: Mapping[str, dict], added: Sequence[str], edited: Sequence[str], round_number: int
) -> dict[str, dict]:
    """The origins after the user's decision at the pause after `round_number`: an added
    requirement comes from the user; an edited one keeps its origin, the edit is listed."""
    updated = {rid: dict(origin) for rid, origin in origins.items()}
    for rid in added:
        updated[rid] = {"kind": "user", "round": round_number}
    for rid in edited:
        if rid in added:
            continue
        origin = updated.setdefault(rid, {"kind": "unknown"})
        origin["user_edited"] = [*origin.get("user_edited", []), round_number]
    return updated


def trace_rows(
    requirements: Sequence[Mapping[str, Any]],
    origins: Mapping[str, Mapping[str, Any]],
    user_input: str,
    *,
    clarified: bool = True,
) -> list[TraceRow]:
    """The matrix of `requirements` (the final list, removed items left out)."""
    from agents.check.trace import request_sentences

    sentences = request_sentences(user_input)
    rows = []
    for item in requirements:
        rid = str(item["id"])
        origin = origins.get(rid) or {}
        row = TraceRow(
            id=rid,
            requirement=str(item["content"]),
            kind=origin.get("kind", "unknown"),
            sentences=list(origin.get("sentences", [])),
            round=origin.get("round"),
            reference_section=str(origin.get("reference", "")),
            revised=list(origin.get("revised", [])),
            user_edited=list(origin.get("user_edited", [])),
            clarified=clarified,
        )
        row.origin, row.origin_zh = origin_labels(row, sentences)
        rows.append(row)
    return rows


def document_language(markdown: str) -> str:
    cjk = sum(1 for ch in markdown if "\u4e00" <= ch <= "\u9fff")
    return "zh" if cjk >= max(10, len(markdown) // 20) else "en"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def matrix_markdown(rows: Sequence[TraceRow], language: str = "en") -> str:
    """The section the SRS ends with: a heading, one line on how to read it, the table."""
    from agents.check.trace import MATRIX_TITLE

    zh = language == "zh"
    intro = (
        "每条需求的编号及其来源：需求描述中的句子（S*n* 为第 *n* 句）、增加它的澄清轮次，或参考 SRS 的章节。"
        if zh
        else "Each requirement's id and where it came from: a sentence of the request (S*n* is "
        "its *n*-th sentence), the clarification round that added it, or a reference section."
    )
    header = "| 编号 | 需求 | 来源 |" if zh else "| ID | Requirement | Origin |"
    lines = [f"## {MATRIX_TITLE[language if zh else 'en']}", "", intro, "", header, "|---|---|---|"]
    for row in rows:
        origin = row.origin_zh if zh else row.origin
        lines.append(f"| {_cell(row.id)} | {_cell(row.requirement)} | {_cell(origin)} |")
    return "\n".join(lines) + "\n"


def with_matrix(document: str, rows: Sequence[TraceRow]) -> str:
    """The SRS as srs.md holds it: DocGenerate's document, then the matrix."""
    if not document.strip() or not rows:
        return document
    return document.rstrip("\n") + "\n\n" + matrix_markdown(rows, document_language(document))


def matrix_csv(rows: Sequence[TraceRow], language: str = "en") -> str:
    """The matrix as CSV (`srs-trace.csv`): one row per requirement, the origin as the matrix
    writes it and its parts in columns of their own."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        writer.writerow(
            [
                row.id,
                row.requirement,
                row.origin_zh if language == "zh" else row.origin,
                row.kind,
                " ".join(f"S{n}" for n in row.sentences),
                "" if row.round is None else row.round,
                row.reference_section,
                " ".join(str(r) for r in row.revised),
            ]
        )
    return buffer.getvalue()
