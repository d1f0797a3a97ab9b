"""Where the sections of a document start: the sections `reqstudio.document_model.parse_markdown`
cuts (Markdown headings, or the numbered heading lines of a converted .doc/.pdf), found at a
cost that grows with the document's length and little more.

A Markdown parser reads every paragraph and list item, a second on a document of 10,000
requirements: most generated documents hold only ATX headings (`## 3.1 Login`) and no
construct that could hide one (a fence, HTML, a block quote, a setext underline, a `#`
indented into a list item), and their headings are then the lines that look like one. Other documents go to the parser
with their other lines cut to "x" (`skeleton`), which finds the same headings."""

from __future__ import annotations

import re

from reqstudio.document_model import parse_markdown, section_id_for

# lines that can make or unmake a heading: an ATX heading or a numbered title line (even
# indented, as code or a continuation), a setext underline or thematic break, a fence, an
# HTML block's or a block quote's marks
_HEADING_LIKE = re.compile(r"^\s{0,8}[#\d]")
_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+|(?:[-*_][ \t]*){3,})[ \t]*$", re.MULTILINE)
_KEPT_MARKS = re.compile(r"^\s*(?:```|~~~)|[<>]")
# what can hide an ATX heading or make another kind: a fence, an HTML block, a block quote,
# an underline under a line of text (a setext heading)
_HIDING = re.compile(r"^\s*(?:```|~~~)|^ {0,3}[<>]|\S[^\n]*\n {0,3}(?:=+|-+)[ \t]*$", re.MULTILINE)
_INDENTED_ATX = re.compile(r"^ {1,3}#{1,6}(?:[ \t]|$)", re.MULTILINE)
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t](.*))?$")
_CLOSING = re.compile(r"[ \t]#+[ \t]*$")
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def skeleton(text: str) -> str:
    """`text` with every line that cannot make or unmake a heading cut to "x", so that the
    Markdown parser finds the same headings on the same lines at a fraction of the cost (a
    long document's list items and paragraphs are most of its parsing time). Blank lines stay
    blank; the paragraph above an underline stays whole (a setext heading's text). An ATX
    heading indented one to three spaces may sit in a list item: the text is then kept."""
    if _INDENTED_ATX.search(text):
        return text
    lines = text.split("\n")
    keep = [
        not line.strip() or bool(_HEADING_LIKE.match(line) or _KEPT_MARKS.search(line))
        for line in lines
    ]
    for index, line in enumerate(lines):
        if index and _UNDERLINE.match(line):
            keep[index] = True
            above = index - 1
            while above >= 0 and lines[above].strip():
                keep[above] = True
                above -= 1
    return "\n".join(line if kept else "x" for line, kept in zip(lines, keep, strict=True))


def _atx_only(text: str) -> list[tuple[int, int, str]] | None:
    """(line, level, text) of the headings of a document whose only headings are ATX ones
    that nothing can hide; None for a document that needs the parser."""
    if _HIDING.search(text) or _INDENTED_ATX.search(text):
        return None
    if _OTHER_BREAKS.search(text):  # (the parser and `str.splitlines` count lines apart)
        return None
    headings = []
    for index, line in enumerate(text.split("\n")):
        if "#" not in line[:4]:
            continue
        match = _ATX.match(line.rstrip("\r"))
        if match is None:
            continue
        content = (match.group(2) or "").strip(" \t")
        closing = _CLOSING.search(" " + content)  # "## Title ##": the closing #s go
        if closing is not None:
            content = (" " + content)[: closing.start()].strip(" \t")
        elif set(content) <= {"#"}:
            content = ""
        headings.append((index, len(match.group(1)), content))
    return headings


def section_starts(text: str) -> list[tuple[int, str, str]]:
    """(first line index, title, id) of each section `parse_markdown(text)` cuts."""
    headings = _atx_only(text)
    if not headings:  # (no heading at all: numbered title lines, which the parser finds)
        return _parsed_starts(text)
    line_count = text.count("\n") + (0 if text.endswith("\n") else 1)
    starts: list[tuple[int, str, str]] = []
    first_line, first_level, first_text = headings[0]
    preamble_blank = not any(part.strip() for part in text.split("\n")[:first_line])
    if first_level == 1 and preamble_blank:
        # the title: the text under it up to the next heading is a section without a heading
        next_start = headings[1][0] if len(headings) > 1 else line_count
        intro = text.split("\n")[first_line + 1 : next_start]
        headings = headings[1:]
        if any(part.strip() for part in intro) or not headings:
            # (after the title's line; on it when the text ends there without a newline)
            starts.append((min(first_line + 1, text.count("\n")), first_text, section_id_for(0)))
    for start, _, title in headings:
        starts.append((start, title, section_id_for(len(starts))))
    return starts


def _parsed_starts(text: str) -> list[tuple[int, str, str]]:
    document = parse_markdown(skeleton(text))
    starts = []
    line = (document.preamble + (document.title_heading or "")).count("\n")
    for section in document.sections:
        starts.append((line, section.title, section.id))
        line += (section.heading or "").count("\n") + section.content.count("\n")
    return starts
