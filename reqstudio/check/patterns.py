"""The patterns that find requirements in a document: ids (alphanumeric, numbered, named,
spaced, dotted tags), list markers, page furniture, headings, and the binding and weak modal
words in English and Chinese. `reqstudio.check.parse` applies them."""

from __future__ import annotations

import re

ALPHA_ID = r"[A-Z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)*?[-_]\d+(?:\.\d+)*(?:[a-z]|[A-Z]\d{1,2})?"
ALPHA_ID_RE = re.compile(r"(?<![\w-])" + ALPHA_ID + r"(?![\w-])")
# "3.2.1.4", or "1.2." (two levels need the final dot: "1.2. The Department Name must ...")
NUMERIC_ID = r"\d+(?:\.\d+){2,}|\d{1,2}\.\d{1,2}(?=\.\s)"
# a named requirement: "Req 3:", "Requirement 12:", "Virtual-Space Req 1:", "Clean GUI Req 2:"
# (up to three capitalised words before "Req", the colon required)
NAMED_ID = r"(?:[A-Z][\w'’-]*\s+){0,3}(?:Req|REQ|Requirement)\s*#?\d{1,3}[a-z]?(?=\s*:)"
# an id with a space before its number, set off by a dash: "FR 13 — It shall be possible",
# "NFR 11.1 -- Migration configurations can be built"
SPACED_ID = r"[A-Z]{2,6} \d{1,3}(?:\.\d{1,2})*(?=\s*(?:—|–|--)\s)"
# a dotted tag in camel case, IEEE 830's hierarchical names: "Game.LoadAI", "GUI.mouseInput"
# (not "Node.js", "U.S.": a capital after the dot, two letters before it)
TAG_ID = r"[A-Z][A-Za-z]+(?:\.[A-Za-z]*[A-Z][A-Za-z0-9]*)+(?=\s+[A-Z]|\s*$)"
LEADING_ID = re.compile(
    r"^\s*[*_\[(（【#>|-]{0,4}\s*(?P<id>"
    + ALPHA_ID
    + "|"
    + NUMERIC_ID
    + "|"
    + NAMED_ID
    + "|"
    + SPACED_ID
    + "|"
    + TAG_ID
    + r")(?![\w-])"
    r"[\s*_\])）】:：.、|—–-]*"
)
# bullets as converted documents leave them too: \x02 and U+F0B7 (a PDF's Symbol-font dot)
LIST_MARKER = re.compile(
    r"^\s*(?:[-*+•✓▪●◦○]\s+|[\x02\uf0b7\uf0a7]\s*|(?:\d{1,2}|[a-z]|[ivx]{1,4})[.)]\s+)"
)
LEADING_ALPHA_ID = re.compile(r"^(?:" + ALPHA_ID + r")(?![\w-])\s*[-–:]\s+\w")
BARE_NUMBER = re.compile(r"^\d{1,2}\s+(?=[A-Z])")
# an id wrapped in a flattened table's narrow cell: "F-" on one line, "101B1" on the next
ID_FIRST_PART = re.compile(r"^[A-Z][A-Za-z0-9]*[-_]$")
SPLIT_ID = re.compile(r"^([A-Z][A-Za-z0-9]*[-_]) (\d+[A-Za-z0-9]*(?:\.\d+)*)\s+")
# an item of a numbered list of rules, one a line: "1.2. The Department Name must be unique"
# ("1.3. ..." on the next line starts the next item, not a wrapped line of this one)
NUMBERED_ITEM = re.compile(r"^\s*\d{1,2}\.\d{1,2}\.?\s+(?=[A-Z])")
# page furniture of converted PDFs: "Page 7 of 12", "Created on 7/15/2009" (skipped, a page
# break inside a paragraph does not end it)
PAGE_LINE = re.compile(r"^\s*page\s+\d+(?:\s+of\s+\d+)?\s*$", re.IGNORECASE)
# (a bare "4.5.10" is a section number, not a date: a dotted date alone needs a four-digit year)
DATED_LINE = re.compile(
    r"^\s*(?:[A-Za-z ]{0,30}\d{1,4}[/-]\d{1,2}[/-]\d{2,4}|[A-Za-z ]{0,30}\d{1,2}\.\d{1,2}\.\d{4}"
    r"|[A-Za-z ]{0,30}[A-Za-z]\s+\d{1,2}\.\d{1,2}\.\d{2})\s*$"
)
# a numbered heading of a converted document: "2.8 Interfaces", "3.2.1 Unicast Communication"
NUMBERED_HEADING = re.compile(r"^\s*\d+(?:\.\d+)*\.?\s+[^\s.].{0,60}$")
FENCE = re.compile(r"^\s*(```|~~~)")
ATX_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
TABLE_SEPARATOR = re.compile(r"^\s*\|?[\s:|-]+\|[\s:|-]*$")

BINDING_EN = re.compile(r"\b(?:shall|must)\b", re.IGNORECASE)
WEAK_EN = re.compile(
    r"\b(?:should|will|may|can|cannot|(?:is|are) required to|(?:is|are) to be)\b", re.IGNORECASE
)
# 应 as a modal, not inside 应用, 响应, 对应, 供应 ...
BINDING_ZH = re.compile(
    r"必须|不得|应当|应该|(?<![反对适响供回感效相答呼顺理])应(?![用答对急聘变激收付])"
)
WEAK_ZH = re.compile(r"需要|可以|能够|将会")
# the modal verbs that make an item under a requirement one of its own ("can" describes)
ITEM_MODAL = re.compile(
    r"\b(?:should|will|may|cannot|needs?|ha(?:s|ve) to|(?:is|are) (?:required )?to be)\b",
    re.IGNORECASE,
)
# "should" in any case: a requirement with a weak modal when it stands next to a binding one
SHOULD_EN = re.compile(r"\bshould\b", re.IGNORECASE)
# RFC 2119's keywords in capitals: a document that writes "SHOULD" and "MAY" so marks its
# recommendations and options as requirement statements (reported as having no "shall")
RFC_WEAK = re.compile(r"\b(?:SHOULD|MAY|RECOMMENDED|OPTIONAL)\b")
# a section number alone on its line, the title on the next (a converted PDF's "2.2.1" /
# "General Requirements")
BARE_SECTION_NUMBER = re.compile(r"^\s*\d+(?:\.\d+)+\.?\s*$")
