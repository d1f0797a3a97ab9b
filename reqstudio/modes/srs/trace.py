"""Where each requirement of an SRS run came from, recorded without a model.

- ReqParse's items come from the request: each is matched to the request sentences it shares
  content words with (`reqstudio.check.trace.match_sentences`; none when no sentence matches,
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

from pydantic import BaseModel, Field, computed_field

from reqstudio.messages import language_code, text

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
    quotes: list[str] = Field(default_factory=list)  # the request sentences it comes from
    origin: str = ""  # the origin as the matrix writes it, in English

    def origin_in(self, language: str) -> str:
        """The origin as the matrix writes it in `language`, from the catalogue."""
        return origin_text(self, None, language)

    @computed_field
    @property
    def origin_zh(self) -> str:
        """The JSON's Chinese origin, said by the catalogue when it is written."""
        return self.origin_in("zh")


def parse_origins(user_input: str, req_list: Sequence[Mapping[str, Any]]) -> dict[str, dict]:
    """ReqParse's items: each traced to the request sentences its text matches."""
    from reqstudio.check.trace import match_sentences, request_sentences

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
    from reqstudio.check.trace import best_match

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


def origin_text(row: TraceRow, sentences: Sequence[str] | None, language: str) -> str:
    """How the matrix states a row's origin in `language`, from the message catalogue
    (`srs.trace.*`); the request's prefix is the checker's, which reads it back. `sentences`:
    the request's (None: the row's own `quotes`)."""
    from reqstudio.check.trace import REQUEST_PREFIX

    code = language_code(language)

    def say(key: str, **values: object) -> str:
        return text(f"srs.trace.{key}", code, **values)

    def listed(numbers: Sequence[int]) -> str:
        return say("separator").join(str(n) for n in numbers)

    prefix = REQUEST_PREFIX[code]
    if row.kind == "request":
        if row.sentences:
            refs = ", ".join(f"S{n}" for n in row.sentences)
            quoted = row.quotes if sentences is None else quoted_sentences(row, sentences)
            quotes = " / ".join(_quote(sentence) for sentence in quoted)
            origin = say("request", prefix=prefix, refs=refs, quotes=quotes)
        else:
            origin = say("request_unmatched", prefix=prefix)
    elif row.kind == "round":
        origin = say(
            "clarification_round" if row.clarified else "exploration_round", round=row.round
        )
        if row.reference_section:
            origin += say("reference", section=row.reference_section)
    elif row.kind == "user":
        origin = say("user_added", round=row.round)
    else:
        origin = say("unknown")
    if row.revised:
        form = "revised_one" if len(row.revised) == 1 else "revised_other"
        origin += say(form, rounds=listed(row.revised))
    if row.user_edited:
        origin += say("user_edited", rounds=listed(row.user_edited))
    return origin


def quoted_sentences(row: TraceRow, sentences: Sequence[str]) -> list[str]:
    return [sentences[n - 1] for n in row.sentences if 0 < n <= len(sentences)]


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
    from reqstudio.check.trace import request_sentences

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
        row.quotes = quoted_sentences(row, sentences)
        row.origin = origin_text(row, None, "en")
        rows.append(row)
    return rows


def document_language(markdown: str) -> str:
    cjk = sum(1 for ch in markdown if "\u4e00" <= ch <= "\u9fff")
    return "zh" if cjk >= max(10, len(markdown) // 20) else "en"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def matrix_markdown(rows: Sequence[TraceRow], language: str = "en") -> str:
    """The section the SRS ends with: a heading, one line on how to read it, the table; in
    `language` (the heading is the checker's, which finds the matrix by it)."""
    from reqstudio.check.trace import MATRIX_TITLE

    code = language_code(language)
    intro, header = (text(f"srs.trace.{key}", code) for key in ("intro", "header"))
    lines = [f"## {MATRIX_TITLE[code]}", "", intro, "", header, "|---|---|---|"]
    for row in rows:
        origin = row.origin_in(code)
        lines.append(f"| {_cell(row.id)} | {_cell(row.requirement)} | {_cell(origin)} |")
    return "\n".join(lines) + "\n"


def with_matrix(document: str, rows: Sequence[TraceRow], language: str | None = None) -> str:
    """The SRS as srs.md holds it: DocGenerate's document, then the matrix, in `language` (the
    reader's: the browser's language) or else the document's own."""
    if not document.strip() or not rows:
        return document
    language = language or document_language(document)
    return document.rstrip("\n") + "\n\n" + matrix_markdown(rows, language)


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
                row.origin_in(language),
                row.kind,
                " ".join(f"S{n}" for n in row.sentences),
                "" if row.round is None else row.round,
                row.reference_section,
                " ".join(str(r) for r in row.revised),
            ]
        )
    return buffer.getvalue()
