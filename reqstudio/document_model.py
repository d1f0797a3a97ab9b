"""The document model shared by the Review and Rewrite engines.

A document is a title and ordered sections (seed 003's `DocumentStructure` / `DocumentSection`).
Each section has a stable `id`; in seed 001 that id is the `agent_id`: the author responsible for
that section, to whom reviewers address their findings.

Markdown comes in through markdown-it-py (headings found by the parser, so `#` inside code
blocks or lists is not a heading) and goes out again unchanged: a parsed section keeps its
heading's source text and its body's source text, so rendering an untouched document gives
back exactly the text that was parsed. Sections written by a model (no source heading) are
rendered from their level and title.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from markdown_it import MarkdownIt
from pydantic import BaseModel, Field, model_validator

_PARSER = MarkdownIt("commonmark")


class DocumentSection(BaseModel):
    """One section: its heading, body and (for generated documents) its writing goal.

    Seed 003 writes it as a dataclass, `DocumentSection(title, content, level, order, goal)`:
    those positional arguments work too. Without an id, the `DocumentStructure` holding the
    section gives it one from its position (`sec-01`, ...)."""

    id: str = Field(default="", description="stable id; the seed's agent_id, the section's author")
    title: str
    content: str = ""
    level: int = Field(default=2, ge=1, le=6)
    order: int = Field(default=0, ge=0)
    goal: str = ""
    heading: str | None = Field(
        default=None,
        description="the heading's source text, kept for round trips; None: render from level "
        "and title; empty: a section without a heading (a document that has none)",
    )

    def __init__(self, *args: Any, **data: Any) -> None:
        names = ("title", "content", "level", "order", "goal")
        if len(args) > len(names):
            raise TypeError(f"DocumentSection takes at most {len(names)} positional arguments")
        for name, value in zip(names, args, strict=False):
            if name in data:
                raise TypeError(f"DocumentSection got two values for {name!r}")
            data[name] = value
        super().__init__(**data)

    @property
    def agent_id(self) -> str:
        return self.id

    def render(self) -> str:
        if self.heading is not None:
            return self.heading + self.content
        body = self.content.strip("\n")
        return f"{'#' * self.level} {self.title}\n\n" + (body + "\n\n" if body else "")


class DocumentStructure(BaseModel):
    """A title and ordered sections; `preamble` is any text before the first section."""

    title: str
    sections: list[DocumentSection] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    preamble: str = Field(default="", description="source text before the title or first section")
    title_heading: str | None = Field(
        default=None,
        description="the title heading's source text; None: render `# title`; empty: none",
    )

    @model_validator(mode="after")
    def _every_section_has_an_id(self) -> DocumentStructure:
        """Sections built without an id (seed style) get `sec-NN` from their position."""
        if all(s.id for s in self.sections):
            return self
        taken = {s.id for s in self.sections if s.id}
        sections = []
        for order, section in enumerate(self.sections):
            if not section.id:
                candidate, bump = section_id_for(order), order
                while candidate in taken:
                    bump += 1
                    candidate = section_id_for(bump)
                taken.add(candidate)
                section = section.model_copy(update={"id": candidate})
            sections.append(section)
        self.sections = sections
        return self

    def section(self, section_id: str) -> DocumentSection:
        for section in self.sections:
            if section.id == section_id:
                return section
        raise KeyError(section_id)

    @property
    def section_ids(self) -> list[str]:
        return [s.id for s in self.sections]

    def with_content(self, section_id: str, content: str) -> DocumentStructure:
        """A copy in which only `section_id`'s content is `content`; everything else shared.
        A first line repeating the section's own heading is dropped: the section renders its
        heading itself, and a model or a user often sends it back with the body."""
        content = without_own_heading(content, self.section(section_id))  # KeyError: unknown id
        last = self.sections[-1].id
        sections = [
            s.model_copy(update={"content": _with_trailing_break(content, s, s.id == last)})
            if s.id == section_id
            else s
            for s in self.sections
        ]
        return self.model_copy(update={"sections": sections})

    def to_markdown(self) -> str:
        title = self.title_heading
        if title is None:
            title = f"# {self.title}\n\n" if self.title else ""
        return self.preamble + title + "".join(s.render() for s in self.sections)


_HEADING_LINE = re.compile(
    r"^\s*(?:\[[\w-]+\]\s*)?(?:#{1,6}\s+(?P<atx>.*?)\s*#*|\*\*(?P<bold>.+?)\*\*)\s*$"
)


def _heading_key(text: str) -> str:
    """A title compared loosely: case, spaces, punctuation and emphasis marks aside."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def without_own_heading(content: str, section: DocumentSection) -> str:
    """`content` without a leading heading line (`## title`, or `**title**`; optionally after
    the `[sec-02]` id the reviewers see) whose text is the section's title."""
    stripped = content.lstrip("\n")
    first, _, rest = stripped.partition("\n")
    match = _HEADING_LINE.match(first)
    if match is None or not section.title.strip():
        return content
    if _heading_key(match.group("atx") or match.group("bold") or "") != _heading_key(section.title):
        return content
    return rest


def section_id_for(order: int) -> str:
    return f"sec-{order + 1:02d}"


Addressed = TypeVar("Addressed", bound=BaseModel)


def place_on_sections(
    items: Iterable[Addressed], field: str, locate: Callable[[str], str | None]
) -> tuple[list[Addressed], list[Addressed]]:
    """(the items whose `field` names a section, each copied with the id `locate` finds for it;
    the items `locate` finds none for). Review findings and Rewrite issues name their section
    as models write it: an id in another case, a title, a number."""
    placed: list[Addressed] = []
    unplaced: list[Addressed] = []
    for item in items:
        section_id = locate(getattr(item, field))
        if section_id is None:
            unplaced.append(item)
        else:
            placed.append(item.model_copy(update={field: section_id}))
    return placed, unplaced


def _with_trailing_break(content: str, original: DocumentSection, last: bool = False) -> str:
    """Keep the blank lines that separated a parsed section's body from its heading and from
    the next heading."""
    if original.heading is None:
        return content
    leading = original.content[: len(original.content) - len(original.content.lstrip("\n"))]
    if not original.content.strip():
        leading = "\n" if original.heading else ""
    trailing = original.content[len(original.content.rstrip("\n")) :] or "\n"
    body = content.strip("\n")
    if last:  # the document's end: as it ended before
        return leading + body + trailing
    return leading + body + (trailing if len(trailing) > 1 else "\n\n")


def _heading_spans(text: str) -> list[tuple[int, int, int, str]]:
    """(first line, end line, level, inline text) of every top-level heading."""
    tokens = _PARSER.parse(text)
    spans = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.level == 0 and token.map:
            inline = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            spans.append((token.map[0], token.map[1], int(token.tag[1]), inline))
    return spans


_NUMBERED = re.compile(r"^\s{0,8}(\d{1,2}(?:\.\d{1,2}){0,4})\.?\s+\S")
_SENTENCE_END = ("。", ".", "；", ";", ",", "，", ":", "：")
_PAGE_NUMBER = re.compile(r"\s{2,}\d+\s*$")  # a table-of-contents line: "1.1   Purpose    5"


def _plain_heading_lines(lines: list[str]) -> list[tuple[int, int]]:
    """(line, level) of the numbered headings of a text without Markdown headings: documents
    converted from .doc/.pdf (PURE's) keep "2 Overall Description" or "3.1 Functionality" as a
    short line of its own between blank lines. Numbered sentences ("1 The system shall ...")
    end with punctuation or are long, and are not headings."""
    found = []
    for index, line in enumerate(lines):
        text = line.strip()
        match = _NUMBERED.match(line)
        if match is None or len(text) > 70 or text.endswith(_SENTENCE_END):
            continue
        if _PAGE_NUMBER.search(line.rstrip("\n")):
            continue
        before = index == 0 or not lines[index - 1].strip()
        after = index + 1 == len(lines) or not lines[index + 1].strip()
        if before and after and len(text.split()) <= 10:
            found.append((index, min(match.group(1).count(".") + 1, 6)))
    return found


def _parse_plain(lines: list[str], default_title: str) -> DocumentStructure:
    """A document without Markdown headings: sections at numbered heading lines, the text
    before the first one a section of its own; one section when there are none."""
    title = default_title or "Untitled"
    headings = _plain_heading_lines(lines)
    starts = [i for i, _ in headings]
    sections: list[DocumentSection] = []
    front = "".join(lines[: starts[0]] if starts else lines)
    if front.strip() or not starts:
        sections.append(
            DocumentSection(id=section_id_for(0), title=title, content=front, level=1, heading="")
        )
    for number, (start, level) in enumerate(headings):
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        order = len(sections)
        sections.append(
            DocumentSection(
                id=section_id_for(order),
                title=lines[start].strip(),
                heading=lines[start],
                content="".join(lines[start + 1 : end]),
                level=level,
                order=order,
            )
        )
    if not front.strip() and front:
        return DocumentStructure(title=title, sections=sections, preamble=front, title_heading="")
    return DocumentStructure(title=title, sections=sections, title_heading="")


def parse_markdown(text: str, *, default_title: str = "") -> DocumentStructure:
    """Cut `text` into sections at its headings; `to_markdown()` gives `text` back unchanged.

    A level-1 heading that opens the document (only blank lines before it) is the title; text
    under it up to the next heading is a first section without a heading of its own (so that
    reviewers can address it). A document without headings is one such section."""
    lines = text.splitlines(keepends=True)
    spans = _heading_spans(text)
    if not spans:
        return _parse_plain(lines, default_title)
    preamble = "".join(lines[: spans[0][0]])
    title, title_heading = default_title, ""
    sections: list[DocumentSection] = []
    first_start, first_end, first_level, first_text = spans[0]
    if first_level == 1 and not preamble.strip():
        title = first_text
        title_heading = "".join(lines[first_start:first_end])
        intro_end = spans[1][0] if len(spans) > 1 else len(lines)
        intro = "".join(lines[first_end:intro_end])
        spans = spans[1:]
        if intro.strip() or not spans:
            sections.append(
                DocumentSection(id=section_id_for(0), title=title, content=intro, heading="")
            )
        elif intro:
            title_heading += intro  # blank lines only: they belong to the title
    for start, end, level, heading_text in spans:
        order = len(sections)
        body_end = next((s[0] for s in spans if s[0] > start), len(lines))
        sections.append(
            DocumentSection(
                id=section_id_for(order),
                title=heading_text,
                heading="".join(lines[start:end]),
                content="".join(lines[end:body_end]),
                level=level,
                order=order,
            )
        )
    return DocumentStructure(
        title=title or (sections[0].title if sections else "Untitled"),
        sections=sections,
        preamble=preamble,
        title_heading=title_heading,
    )


def document_language(text: str) -> str:
    """ "zh" when Chinese characters carry the text, else "en"."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    letters = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return "zh" if cjk * 3 >= letters and cjk > 0 else "en"


def with_ids(document: DocumentStructure) -> str:
    """The document as reviewers see it: each section's source text after its id in brackets."""
    parts = []
    for section in document.sections:
        heading = section.heading if section.heading is not None else ""
        if not heading.strip():
            heading = f"{'#' * section.level} {section.title}\n"
        parts.append(f"[{section.id}] {heading.rstrip()}\n\n{section.content.strip()}\n")
    return "\n".join(parts)
