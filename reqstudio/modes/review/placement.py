"""Which section a finding belongs to.

A finding's `agent_id` should be a section id (`sec-03`). Models also answer with a section's
title ("2. Booking"), an id in another case, or an id of their own making (`agent_id-07`).
A title or a case slip is placed here without asking; the rest is asked about once
(`nodes.place_red_team_findings`); what still names no section is kept as a document-wide
issue of its priority: shown, counted for the stop rules, never dropped."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from reqstudio.answers import answer_model
from reqstudio.document_model import DocumentStructure, place_on_sections
from reqstudio.modes.review.models import Improvement

# "2.", "3.1", "第二章" and the like before a heading's words.
_NUMBERING = re.compile(r"^\s*(?:第?[\d一二三四五六七八九十]+[章节.、)]?|\d+(?:\.\d+)*\.?)\s*")
_MIN_TITLE_CHARS = 2


def _plain(text: str) -> str:
    text = _NUMBERING.sub("", text.strip().strip("#").strip())
    return " ".join(text.casefold().split())


def section_for(agent_id: str, document: DocumentStructure) -> str | None:
    """The id of the section `agent_id` names: the id itself (any case), or a section whose
    title it gives (with or without the heading's numbering); None when it names none or
    more than one."""
    ids = document.section_ids
    if agent_id in ids:
        return agent_id
    by_case = [i for i in ids if i.casefold() == agent_id.strip().casefold()]
    if len(by_case) == 1:
        return by_case[0]
    wanted = _plain(agent_id)
    if len(wanted) < _MIN_TITLE_CHARS:
        return None
    exact = [s.id for s in document.sections if _plain(s.title) == wanted]
    if len(exact) == 1:
        return exact[0]
    # "sec-02 Booking" or "Booking section": a title inside the answer, when only one fits.
    inside = [
        s.id
        for s in document.sections
        if len(_plain(s.title)) >= _MIN_TITLE_CHARS and _plain(s.title) in wanted
    ]
    return inside[0] if len(inside) == 1 else None


def place(
    findings: Iterable[Improvement], document: DocumentStructure
) -> tuple[list[Improvement], list[Improvement]]:
    """(findings on a section, with the section's real id; findings that name none)."""
    return place_on_sections(findings, "agent_id", lambda named: section_for(named, document))


class FindingPlacement(BaseModel):
    finding: int = Field(ge=1, description="the finding's number in the list asked about")
    agent_id: str = Field(description="the id of the section it belongs to, or '' if none")


@answer_model("ReviewPanel")
class SectionPlacements(BaseModel):
    """The answer to "which section do these findings belong to?"."""

    placements: list[FindingPlacement]


def apply_placements(
    findings: Sequence[Improvement],
    asked: Sequence[Improvement],
    answer: SectionPlacements,
    document: DocumentStructure,
) -> list[Improvement]:
    """`findings` with each of `asked` moved to the section the answer gives it (when that is
    a real section); the order and every finding are kept."""
    chosen: dict[int, str] = {}
    for placement in answer.placements:
        section = section_for(placement.agent_id, document) if placement.agent_id else None
        if section is not None and 1 <= placement.finding <= len(asked):
            chosen[id(asked[placement.finding - 1])] = section
    return [
        f.model_copy(update={"agent_id": chosen[id(f)]}) if id(f) in chosen else f for f in findings
    ]
