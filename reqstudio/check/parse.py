"""Requirements found in a Markdown or plain-text SRS.

The document is cut into sections by `reqstudio.document_model.parse_markdown` (Markdown
headings, or the numbered heading lines of a converted .doc/.pdf). Within them a block is a
paragraph, a list item, a table row, or a run of lines that each start with an id. A block is
a requirement when it holds a binding word ("shall", "must"; 应, 必须), or starts with a
requirement id (`FR-01`, `NFR-PERF-2`, or `3.2.1.4` with a modal verb), or sits under a
heading that carries an id (`### FR-03 Login`: the section's body is that requirement).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from reqstudio.check.headings import section_starts
from reqstudio.check.patterns import (
    ALPHA_ID,
    ALPHA_ID_RE,
    ATX_HEADING,
    BARE_NUMBER,
    BARE_SECTION_NUMBER,
    BINDING_EN,
    BINDING_ZH,
    DATED_LINE,
    FENCE,
    ID_FIRST_PART,
    ITEM_MODAL,
    LEADING_ALPHA_ID,
    LEADING_ID,
    LIST_MARKER,
    NUMBERED_HEADING,
    NUMBERED_ITEM,
    PAGE_LINE,
    RFC_WEAK,
    SHOULD_EN,
    SPLIT_ID,
    TABLE_SEPARATOR,
    TAG_ID,
    WEAK_EN,
    WEAK_ZH,
)


@dataclass
class Requirement:
    """One requirement: its id (as written, or "" when it has none), its text on one line,
    where it is (section title and id, first line, 1-based) and its language."""

    id: str
    text: str
    line: int
    section: str = ""
    section_id: str = ""
    language: str = "en"
    id_from_heading: bool = False
    body_start: int = 0  # where the text after the leading id begins

    @property
    def label(self) -> str:
        """The id, or `L<line>` for a requirement without one."""
        return self.id or f"L{self.line}"

    @property
    def body(self) -> str:
        return self.text[self.body_start :]


@dataclass
class ParsedDocument:
    requirements: list[Requirement]
    lines: list[str]
    # every id found at the start of a block or in a heading (requirements or not)
    declared_ids: set[str] = field(default_factory=set)


def binding_words(text: str) -> list[str]:
    return [m.group() for m in BINDING_EN.finditer(text)] + [
        m.group() for m in BINDING_ZH.finditer(text)
    ]


def _words(text: str) -> int:
    """Words in `text`; Chinese counted as two characters a word."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    return len(text.split()) + cjk // 2


def _language(text: str) -> str:
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    return "zh" if cjk >= 2 else "en"


def _clean(line: str) -> str:
    return re.sub(r"\*\*|__|`", "", line).strip()


def _running_lines(lines: list[str]) -> set[str]:
    """Running headers and footers of a converted PDF: short lines with a letter that come
    back five times or more ("Digital Home Project, SRS 1.3")."""
    counts: dict[str, int] = {}
    for line in lines:
        key = line.strip()
        furniture = (
            0 < len(key) <= 60
            and any(ch.isalpha() for ch in key)
            and not key.startswith("|")
            and not binding_words(key)  # a repeated requirement line is content
            # so is a repeated line that starts with a requirement id ("▪ REQ-1 - Users are
            # limited to Windows XP, Vista or Mac- OS", the same list under each feature)
            and not LEADING_ALPHA_ID.match(LIST_MARKER.sub("", key, count=1))
            # an id cell of a flattened table, whole or its first part ("F-" / "101B1")
            and not (ID_FIRST_PART.match(key) or re.fullmatch(ALPHA_ID, key))
        )
        if furniture:
            counts[key] = counts.get(key, 0) + 1
    return {key for key, count in counts.items() if count >= 5}


def _continues(previous: list[str], block: list[str]) -> bool:
    """A paragraph cut by a page break: the first part ends without a stop and the rest
    starts in lower case ("... shall allow a user to" / "monitor and control ...")."""
    last, first = previous[-1].rstrip(), block[0].lstrip()
    return bool(first) and first[0].islower() and not last.endswith(tuple(".;:!?。；：！？"))


# A field of a requirement's record that says more of what is required: "Requirement
# Specification: The administrator will have the following privileges: ..." after
# "FR-UA 1 / Requirement Definition: The system shall ...". (Origin, Priority, Rationale and
# notes are not what is required: they stay out.)
_RECORD_FIELD = re.compile(
    r"^\s*(?:Requirement\s+)?(?:Specification|Description|Details|Constraints?|Reasoning|"
    r"Fit\s+criteri(?:on|a)|Acceptance\s+criteri(?:on|a))\s*:",
    re.IGNORECASE,
)


def _blocks(lines: list[str]) -> list[tuple[int, str, list[str]]]:
    """(first line index, kind, lines) for every block: "heading", "title" (a numbered title
    line of a converted document), "row" or "text"."""
    merged: list[tuple[int, str, list[str]]] = []
    listing = False  # the last requirement introduced a list ("... the following:")
    for start, kind, block in _raw_blocks(lines):
        text = kind == "text" and merged and merged[-1][1] == "text"
        item = bool(text) and listing and _list_item(block)
        if text and (
            _continues(merged[-1][2], block)
            or item
            or (_RECORD_FIELD.match(block[0]) and bool(binding_words(" ".join(merged[-1][2]))))
        ):
            merged[-1][2].extend(block)
        else:
            merged.append((start, kind, block))
        joined = " ".join(merged[-1][2]).rstrip()
        # the list goes on after its first item ("a. The password ..." / "b. A toggle ...")
        listing = item or (
            kind == "text" and joined.endswith((":", "：")) and bool(binding_words(joined))
        )
    return merged


def _list_item(block: list[str]) -> bool:
    """An item of a list a requirement introduced: a marked line without its own binding
    word ("• Target DMS", "a. Interaction with the DH elements")."""
    return bool(LIST_MARKER.match(block[0])) and not binding_words(" ".join(block))


def _raw_blocks(lines: list[str]) -> list[tuple[int, str, list[str]]]:
    blocks: list[tuple[int, str, list[str]]] = []
    running = _running_lines(lines)
    current: list[str] = []
    start = 0
    fenced = False

    def close() -> None:
        nonlocal current
        for offset, part in _statements_one_a_line(current):
            blocks.append((start + offset, "text", part))
        current = []

    title_line = -1  # the title after a bare section number: part of the heading
    for index, raw in enumerate(lines):
        line = raw.rstrip("\n")
        if index == title_line:
            continue
        if FENCE.match(line):
            close()
            fenced = not fenced
            continue
        if fenced:
            continue
        if not line.strip() or _page_number(lines, index):
            close()
            continue
        furniture = line.strip() in running and not _mid_sentence(current, line)
        if PAGE_LINE.match(line) or DATED_LINE.match(line) or furniture:
            continue
        if NUMBERED_HEADING.match(line) and _is_heading_text(line):
            close()
            blocks.append((index, "title", [line]))
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        after = lines[index + 2] if index + 2 < len(lines) else ""
        if (
            BARE_SECTION_NUMBER.match(line)
            and following.strip()
            and _is_heading_text(following)
            and not after.lstrip()[:1].islower()  # "Hardware – complete and" / "specifications"
        ):
            close()
            title_line = index + 1
            blocks.append((index, "title", [line.strip() + " " + following.strip()]))
            continue
        if ATX_HEADING.match(line):
            close()
            blocks.append((index, "heading", [line]))
            continue
        if line.lstrip().startswith("|"):
            close()
            if TABLE_SEPARATOR.match(line):
                continue
            previous = blocks[-1] if blocks else None
            if (
                previous is not None
                and previous[1] == "row"
                and previous[0] + len(previous[2]) == index  # the line right after it
                and _row_goes_on(previous[2], line)
            ):
                previous[2].append(line)
            else:
                blocks.append((index, "row", [line]))
            continue
        split_id = bool(ID_FIRST_PART.match(line.strip())) and bool(
            re.match(r"\s*\d", lines[index + 1] if index + 1 < len(lines) else "")
        )
        if current and (
            LIST_MARKER.match(line)
            or NUMBERED_ITEM.match(line)
            or split_id
            or _starts_another(current, line)
        ):
            close()
        if not current:
            start = index
        current.append(line)
    close()
    return blocks


def _statements_one_a_line(block: list[str]) -> list[tuple[int, list[str]]]:
    """(offset, lines) of each part of a block that is a statement of its own: the block
    itself, or, when two or more of its sentences that start a line carry a binding word of
    their own ("The ELSS must capture ..." / "The ELSS must output ..." / "All corrections
    must be easily identifiable ..."), the line-aligned sentences, each apart. A block that
    starts with an id or a list marker is one requirement, whatever it says."""
    if len(block) < 2 or LEADING_ID.match(block[0]) or LIST_MARKER.match(block[0]):
        return [(0, block)] if block else []
    starts = [0] + [
        i
        for i in range(1, len(block))
        if block[i - 1].rstrip().endswith((".", ";", "!", "?"))
        and block[i].lstrip()[:1].isupper()
        and not LIST_MARKER.match(block[i])
    ]
    parts = [block[a:b] for a, b in zip(starts, [*starts[1:], len(block)], strict=True)]
    stated = [bool(binding_words(" ".join(part))) and _words(" ".join(part)) >= 4 for part in parts]
    if sum(stated) < 2:
        return [(0, block)]
    return list(zip(starts, parts, strict=True))


def _mid_sentence(current: list[str], line: str) -> bool:
    """`line` goes on with the sentence the block has begun ("The Clarus system shall be" /
    "able to implement quality"): content, though a flattened table repeats it."""
    return (
        bool(current)
        and line.lstrip()[:1].islower()
        and not current[-1].rstrip().endswith(tuple(".;:!?。；：！？"))
    )


def _page_number(lines: list[str], index: int) -> bool:
    """A converted PDF's bare page number: a line of one to three digits between blank lines
    (it ends the paragraph before it, as the page did)."""
    if not re.fullmatch(r"\s*\d{1,3}\s*", lines[index]):
        return False
    before = lines[index - 1] if index > 0 else ""
    after = lines[index + 1] if index + 1 < len(lines) else ""
    return not before.strip() and not after.strip()


def _id_prefix(requirement_id: str) -> str:
    return re.split(r"\d", requirement_id, maxsplit=1)[0]


def _starts_another(current: list[str], line: str) -> bool:
    """`line` starts a new block with its id, unless the block before it is a requirement id
    and the start of a sentence and `line`'s "id" is a name of another shape, as a
    flattened table cell breaks "APAF-FR-04 Intermediate files of cleaned-up" /
    "ASPERA-3 and MEX OA telemetry shall be generated ..."."""
    found = LEADING_ID.match(line)
    if found is None:
        return False
    if re.fullmatch(r"[A-Z]{2,6} \d[\d.]*|" + TAG_ID, found.group("id")):
        return True  # "FR 27 — ...", "Game.Solitaire": no name a table cell cut
    before = LEADING_ID.match(current[0])
    text = " ".join(current).rstrip()
    continues = (
        before is not None
        and not binding_words(text)
        and not text.endswith(tuple(".;:!?。；："))
        and _id_prefix(before.group("id")) != _id_prefix(found.group("id"))
        and not found.group("id")[0].isdigit()
    )
    return not continues


# A numbered title line of a converted document that ends with a colon ("3.2.6. Business
# Rules:", "3.2.7. Post-Condition(s):"): it opens a part, and in a part of rules every
# numbered statement is a requirement, with or without a modal verb.
_PART_TITLE = re.compile(
    r"^\d+(?:\.\d+)*\.?\s+(?!(?:The|A|An|This|These|All|Each|Every|If|When)\b)[A-Z][\w ,&()/-]{0,50}:$"
)
# a title that may name the section: two levels at least, a capital ("3.8 Security"; not
# "2.56 second", "1. Use ... sparingly")
_SECTION_TITLE = re.compile(r"^\s*\d+(?:\.\d+)+\.?\s+[A-Z][^\])]*$")
_RULES_TITLE = re.compile(r"\brules?:$", re.IGNORECASE)


def _row_cells_cut(block: list[str]) -> list[str]:
    """A table row flattened to lines, its id alone on the first ("F-163" or "F-" / "163B1"),
    then the requirement wrapped in its narrow cell, then the other cells (source,
    allocation, comment, criticality): the requirement ends with the line that ends its
    binding sentence."""
    head = block[0].strip()
    if not (re.fullmatch(ALPHA_ID, head) or ID_FIRST_PART.match(head)) or len(block) < 3:
        return block
    if max(len(line.strip()) for line in block) > 45:  # not narrow cells: a paragraph
        return block
    seen_binding = False
    for index, line in enumerate(block[1:], start=1):
        seen_binding = seen_binding or bool(binding_words(line))
        if seen_binding and line.rstrip().endswith((".", "。")):
            return block[: index + 1]
    return block


def _is_heading_text(line: str) -> bool:
    """A numbered line that is a title: a few words, no binding word, no final stop."""
    words = line.split()
    text = line.strip()
    return len(words) <= 7 and not binding_words(line) and not text.endswith((".", "。", ":", ";"))


def _leading_id(text: str) -> tuple[str, int]:
    """The id a block starts with and where its text begins after it, or ("", 0)."""
    split = SPLIT_ID.match(text)  # "F- 101B1 The CAS shall ...": a table cell's id, wrapped
    if split is not None:
        return split.group(1) + split.group(2), split.end()
    match = LEADING_ID.match(text)
    if match is None:
        return "", 0
    return match.group("id"), match.end()


def _cells(line: str) -> list[str]:
    return [_clean(c) for c in line.strip().strip("|").split("|")]


# a requirement number in a table's first cell ("7.1.2.5", "7.1.3."), and the rest of one
# the narrow cell wrapped onto the next line ("7.1.1.1" / "0": 7.1.1.10)
_ROW_NUMBER = re.compile(r"\d+(?:\.\d+)+\.?|\d+\.")
_ROW_NUMBER_REST = re.compile(r"\d{1,2}(?:\.\d{1,2})?\.?")


def _row_goes_on(row: list[str], line: str) -> bool:
    """A table line that continues the row before it (a converted document wraps a cell's
    text onto lines of its own): its first cell is empty while the row's is not, or it holds
    the wrapped rest of the row's number."""
    first, cells = _cells(row[0]), _cells(line)
    if len(cells) != len(first) or len(cells) < 2 or not first[0]:
        return False
    if not cells[0]:
        return any(cells[1:])
    return (
        len(row) == 1
        and bool(_ROW_NUMBER.fullmatch(first[0]))
        and bool(_ROW_NUMBER_REST.fullmatch(cells[0]))
    )


def _row_requirement(lines: list[str]) -> tuple[str, str] | None:
    """A table row holding a requirement: (id or "", the requirement's text). A row of
    two cells, a requirement number and a statement of four words or more ("|7.1.2.1|Performs
    virus checking on SIP.|"), is a requirement even without a binding word."""
    rows = [_cells(line) for line in lines]
    cells = [
        (" " if n else "").join(r[n] for r in rows if n < len(r) and r[n]).strip()
        for n in range(len(rows[0]))
    ]
    ids = [c for c in cells if re.fullmatch(ALPHA_ID, c)]
    texts = [c for c in cells if binding_words(c)]
    numbered = (
        len(cells) == 2
        and bool(_ROW_NUMBER.fullmatch(cells[0]) or re.fullmatch(ALPHA_ID, cells[0]))
        and _words(cells[1]) >= 4
        and cells[1][:1].isupper()
    )
    if numbered and not ids:
        ids = [cells[0].rstrip(".")]
    if not texts and numbered:
        texts = [cells[1]]
    if not texts:
        return None
    return (ids[0] if ids else ""), max(texts, key=len)


def parse_requirements(text: str) -> ParsedDocument:
    """The requirements of `text`. A traceability matrix section (`## Traceability matrix` /
    `## 追溯矩阵`, see `reqstudio.check.trace`) repeats requirements: it is not read for them."""
    from reqstudio.check.trace import matrix_span

    lines = text.splitlines()
    span = matrix_span(lines)
    if span is not None:  # blanked, so that line numbers stay the document's
        lines = [*lines[: span[0]], *([""] * (span[1] - span[0])), *lines[span[1] :]]
        text = "\n".join(lines)
    sections = section_starts(text)
    starts = [start for start, _, _ in sections]  # ascending: looked up by bisection

    def section_at(index: int) -> tuple[str, str]:
        found = bisect_right(starts, index)
        return (sections[found - 1][1], sections[found - 1][2]) if found else ("", "")

    requirements: list[Requirement] = []
    declared: set[str] = set()
    heading_id = ""  # the id of the heading the current blocks sit under
    under_heading: Requirement | None = None
    in_rules = False  # under a numbered "... Rules:" title (`_PART_TITLE`)
    after_binding = False  # the block before was a requirement with a binding word
    pending_should: Requirement | None = None  # the block before, a "should" statement
    in_list = False  # the blocks since the last requirement are its items

    own_title = (-1, "")  # the last numbered title line the blocks found ("3.8 Security")
    for start, kind, block in _blocks(lines):
        title, section_id = section_at(start)
        if kind == "title":
            if _SECTION_TITLE.match(block[0]):
                own_title = (start, _clean(block[0]))
            continue
        # (a section starting in own_title[0] + 1 .. start: by bisection, not a scan)
        if own_title[1] and bisect_right(starts, start) == bisect_right(starts, own_title[0]):
            # a numbered title the document model missed (no blank line before it) is
            # the section, unless a section the model found starts after it
            title = own_title[1]
        if kind != "text":
            after_binding, pending_should, in_list = False, None, False
        if kind == "heading":
            in_rules = False
            heading = _clean(re.sub(r"^\s*#+", "", block[0]))
            found = ALPHA_ID_RE.search(heading)
            heading_id = found.group() if found else ""
            under_heading = None
            if heading_id:
                declared.add(heading_id)
            continue
        if kind == "row":
            row = _row_requirement(block)
            if row is None:
                continue
            rid, body = row
            if rid:
                declared.add(rid)
            requirements.append(
                Requirement(rid, body, start + 1, title, section_id, _language(body))
            )
            continue
        block = _row_cells_cut(block)
        if (
            len(block) > 2
            and re.fullmatch(TAG_ID, block[0].strip())
            and re.fullmatch(r"[a-z0-9]{1,4}", block[1].strip())
        ):  # a tag a narrow cell wrapped: "Game.SaveOpeningPosition" / "s"
            block = [block[0].strip() + block[1].strip(), *block[2:]]
        joined = " ".join(_clean(LIST_MARKER.sub("", line, count=1)) for line in block)
        joined = re.sub(r"\s+", " ", joined).strip()
        joined = BARE_NUMBER.sub("", joined)  # "1 The system shall ..." (a lost list number)
        if len(block) == 1 and _PART_TITLE.match(joined):
            in_rules = bool(_RULES_TITLE.search(joined))
            continue
        rid, body_start = _leading_id(joined)
        if rid:
            declared.add(rid)
        binding = binding_words(joined)
        numeric = bool(rid) and rid[0].isdigit()
        if heading_id and not rid:
            # the body of a heading that carries an id is that one requirement
            if under_heading is None:
                under_heading = Requirement(
                    heading_id, joined, start + 1, title, section_id, _language(joined), True
                )
                requirements.append(under_heading)
            else:
                under_heading.text += " " + joined
                under_heading.language = _language(under_heading.text)
            continue
        # an alphanumeric id marks a requirement even without "shall" (reported as such);
        # a section number ("2.4.1 Constraints ...") needs a modal verb: the binding word, or
        # a weak one ("3.3.2 The team will consist of ...", reported as having no "shall")
        body = joined[body_start:]
        is_requirement = (
            bool(binding)
            or bool(RFC_WEAK.search(body))
            or (
                bool(rid)
                and _words(body) >= 4
                and (not numeric or in_rules or bool(WEAK_EN.search(body) or WEAK_ZH.search(body)))
            )
        )
        # a numbered rule of a rules part: "1. Items can be added at any level"
        is_requirement = is_requirement or (
            in_rules and bool(LIST_MARKER.match(block[0])) and _words(body) >= 4
        )
        found = Requirement(
            rid, joined, start + 1, title, section_id, _language(joined), False, body_start
        )
        # a lettered or numbered item under a requirement, with a modal verb of its own
        # ("a. ... each class needs a quota ...", "b. Files ... should not be allowed"): a
        # requirement of its own, as are the items after it
        sub_item = (
            in_list
            and bool(LIST_MARKER.match(block[0]))
            and _words(body) >= 4
            and bool(ITEM_MODAL.search(body))
            and not body.rstrip().endswith(("?", "？"))  # a question to the reader
        )
        if not is_requirement and sub_item:
            requirements.append(found)
            continue
        if not is_requirement:
            # "The system should allow ...": a requirement with a weak modal when it stands
            # next to a binding one (before or after it); alone it may be advice to a reader
            should = _words(body) >= 4 and bool(SHOULD_EN.search(body))
            if should and after_binding:
                requirements.append(found)
                should = False  # taken already
            pending_should, after_binding = (found if should else None), False
            in_list = False
            continue
        if binding and pending_should is not None:
            requirements.append(pending_should)
        requirements.append(found)
        pending_should, after_binding = None, bool(binding)
        in_list = True
    return ParsedDocument(requirements, lines, declared)
