"""Review issues are addressed to sections by id; models write `Section 2`, `sec-2`, a title.
An issue is placed by its id, then by a numbered form of it, then by a section title; what is
left goes back to the reviewer's model once, with the valid ids. An issue still unplaced is
returned as such (reported and kept in the result), never silently dropped."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from reqstudio.answers import answer_model
from reqstudio.document_model import place_on_sections, section_id_for
from reqstudio.llm import ModelFactory
from reqstudio.modes.rewrite.asking import ask_role
from reqstudio.modes.rewrite.models import DocumentStructure, ReviewIssue
from reqstudio.prompts import render_prompt

log = logging.getLogger("reqstudio.rewrite")

# "sec-2", "Section 02", "section_2", "§2", "第2节", "第 2 章", "2": the section's number.
_NUMBERED = re.compile(
    r"^(?:sec(?:tion)?|chapter|§|第)?\s*[-_#. ]?\s*0*(\d{1,3})\s*(?:节|章|部分)?$", re.IGNORECASE
)


class Placement(BaseModel):
    issue: int = Field(description="the issue's number in the list, from 1")
    section_id: str


@answer_model("RewriteReview")
class Placements(BaseModel):
    """The reviewer's answer when asked again: a valid section id per misaddressed issue."""

    placements: list[Placement] = Field(max_length=40)


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[\[\]#*`“”\"'「」《》]", " ", text).split()).casefold()


def match_section(name: str, document: DocumentStructure) -> str | None:
    """The id of the section `name` means: its id, a numbered form of it, or its title."""
    ids = document.section_ids
    if name in ids:
        return name
    plain = _plain(name)
    numbered = _NUMBERED.match(plain)
    if numbered:
        candidate = section_id_for(int(numbered.group(1)) - 1)
        if candidate in ids:
            return candidate
    by_title = [s.id for s in document.sections if _plain(s.title) == plain]
    if len(by_title) == 1:
        return by_title[0]
    # "sec-02 Booking", "Booking section": a title inside the name, when only one fits
    inside = [s.id for s in document.sections if _plain(s.title) and _plain(s.title) in plain]
    if len(inside) == 1:
        return inside[0]
    return None


async def place_issues(
    found: Sequence[ReviewIssue],
    document: DocumentStructure,
    language: str,
    factory: ModelFactory,
    callbacks: Sequence[Any],
    *,
    on_reask: Callable[[int], Awaitable[None]] | None = None,
) -> tuple[list[ReviewIssue], list[ReviewIssue]]:
    """(placed issues, each with a valid section id; issues that could not be placed)."""
    placed, unplaced = place_on_sections(
        found, "section_id", lambda named: match_section(named, document)
    )
    if not unplaced:
        return placed, []
    if on_reask is not None:
        await on_reask(len(unplaced))
    prompt = render_prompt(
        f"rewrite/{language}/place_issues.md", sections=document.sections, issues=unplaced
    )
    try:
        answer = await ask_role(
            factory,
            "RewriteReview",
            prompt,
            Placements,
            callbacks=callbacks,
            label="RewriteReview placement",
        )
    except Exception:  # the issues stay unplaced and are reported as such
        log.warning("rewrite: asking the reviewer to place issues failed", exc_info=True)
        return placed, unplaced
    chosen: dict[int, str] = {}
    for placement in answer.value.placements:
        section_id = match_section(placement.section_id, document)
        if section_id is not None and 1 <= placement.issue <= len(unplaced):
            chosen.setdefault(placement.issue, section_id)
    still: list[ReviewIssue] = []
    for number, issue in enumerate(unplaced, start=1):
        if number in chosen:
            placed.append(issue.model_copy(update={"section_id": chosen[number]}))
        else:
            still.append(issue)
    return placed, still
