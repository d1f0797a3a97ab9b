"""A document's requirements as items.

An item is one requirement, heading or piece of information: its human id (`id`, kept from
the document, or assigned here when it has none: `REQ-n` / `SEC-n` in document order, skipping
ids the document declares), its machine id (`uid`, a UUID), its text, its section path (the
document's or specification's title, then the headings above it), its kind (one of `KINDS`),
its attributes (`priority`, `source`, `status`, and from ReqIF every other attribute under its
name) and its links to other items.

A Markdown or text document is read by the checker's own parser
(`reqstudio.check.parse.parse_requirements`, the one that finds requirements for
`reqstudio check`), its sections by `reqstudio.document_model.parse_markdown`; the source of a
requirement is its row in the document's traceability matrix (`reqstudio.check.trace`).

Machine ids are deterministic, with no store to keep them: a UUID 5 of the human id (so an
edited requirement keeps its uid), of the id and its occurrence for an id written twice. A
ReqIF object keeps the UUID its IDENTIFIER ends with (`_<uuid>`, `rmf-<uuid>`), else gets a
UUID 5 of the identifier; an export writes `_<uid>`, so a round trip keeps every uid.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field

# ("test": an acceptance test that verifies a requirement, `reqstudio.workspace.acceptance`)
KINDS = ("functional", "non-functional", "constraint", "heading", "information", "test")
# The namespace of the UUID 5 machine ids (fixed: the same input gives the same uids).
UID_NAMESPACE = uuid.UUID("5b0c3f1e-7d2a-5e4b-9c61-2f8a0d4e7b13")
_TRAILING_UUID = re.compile(
    r"(?:^|[^0-9A-Za-z])([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$"
)


@dataclass
class Link:
    """A link from an item to another: its type ("refers to", a ReqIF relation type's name),
    the target's uid and its human id."""

    type: str
    target: str
    target_id: str

    def as_dict(self) -> dict[str, str]:
        return {"type": self.type, "target": self.target, "target_id": self.target_id}


@dataclass
class Item:
    id: str
    uid: str
    text: str
    section: list[str]
    kind: str
    attributes: dict[str, str | list[str]] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    id_kept: bool = True  # the id was written in the document (False: assigned here)
    # the ReqIF data type of each attribute read from a ReqIF file ("string", "xhtml",
    # "enumeration", "integer", "real", "boolean", "date"); written back by an export
    datatypes: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "uid": self.uid,
            "text": self.text,
            "section": list(self.section),
            "kind": self.kind,
            "attributes": dict(self.attributes),
            "links": [link.as_dict() for link in self.links],
        }


@dataclass
class ItemSet:
    """The items of one document or ReqIF file, and a line for each element of it that was not
    read (or read only in part), with why."""

    items: list[Item]
    skipped: list[str] = field(default_factory=list)
    title: str = ""

    def as_dict(self) -> dict[str, object]:
        return {"items": [item.as_dict() for item in self.items], "skipped": list(self.skipped)}


def uid_for(key: str) -> str:
    return str(uuid.uuid5(UID_NAMESPACE, key))


def uid_from_identifier(identifier: str) -> str:
    """A ReqIF IDENTIFIER's machine id: the UUID it ends with, else a UUID 5 of it."""
    found = _TRAILING_UUID.search(identifier)
    return found.group(1).lower() if found else uid_for("reqif:" + identifier)


def assign_ids(items: list[Item], taken: set[str]) -> None:
    """Give every item without an id one: `SEC-n` for a heading, `REQ-n` for the rest, numbered
    in document order and skipping the ids in `taken` (the document's own)."""
    counters = {"SEC": 0, "REQ": 0}
    for item in items:
        if item.id:
            continue
        prefix = "SEC" if item.kind == "heading" else "REQ"
        while True:
            counters[prefix] += 1
            candidate = f"{prefix}-{counters[prefix]}"
            if candidate not in taken:
                break
        item.id, item.id_kept = candidate, False
        taken.add(candidate)


def assign_uids(items: list[Item]) -> None:
    """UUID 5 of each item's id (its occurrence added for an id written twice), for the items
    that have no uid yet."""
    seen: dict[str, int] = {}
    used = {item.uid for item in items if item.uid}
    for item in items:
        if item.uid:
            continue
        seen[item.id] = seen.get(item.id, 0) + 1
        key = item.id if seen[item.id] == 1 else f"{item.id}#{seen[item.id]}"
        uid = uid_for("item:" + key)
        while uid in used:  # (a uid taken by a ReqIF object: move on deterministically)
            key += "'"
            uid = uid_for("item:" + key)
        item.uid = uid
        used.add(uid)


# --- a Markdown or text document ---------------------------------------------------------

# words of an id's prefix or a section title that say what kind of requirement it is
_NON_FUNCTIONAL = re.compile(
    r"non[- ]?functional|nfr|quality|performance|security|safety|usability|reliability|"
    r"availability|scalability|maintainability|portability|非功能|性能|安全|可用|可靠|质量|易用",
    re.IGNORECASE,
)
_CONSTRAINT = re.compile(r"constraint|restriction|legal|约束|限制", re.IGNORECASE)
_INFORMATION = re.compile(r"information|comment|note|说明|信息|注释", re.IGNORECASE)
_HEADING = re.compile(r"heading|chapter|section|标题|章节", re.IGNORECASE)
# only the whole name of a test's type as ReqStudio exports it (DOORS modules name attributes
# and types "Test Status", "System Test": those are not tests)
_TEST = re.compile(r"(?:acceptance )?test case|(?:验收)?测试用例", re.IGNORECASE)
_ID_PREFIX_KIND = {
    "NFR": "non-functional",
    "CON": "constraint",
    "CONS": "constraint",
    "C": "constraint",
}
# "Priority: High", "优先级：高", "Status: Approved", "状态：已批准" in a requirement's text
_FIELD = {
    "priority": re.compile(
        r"(?:\bpriority|优先级)\s*[:：=]\s*([^\s,;，；。.)）\]]+)", re.IGNORECASE
    ),
    "status": re.compile(r"(?:\bstatus|状态)\s*[:：=]\s*([^\s,;，；。.)）\]]+)", re.IGNORECASE),
}


def kind_from_words(*names: str) -> str | None:
    """The kind a type name, id prefix or section title says, if it says one ("Performance
    Requirement" -> non-functional); None when it names none."""
    for name in names:
        if not name:
            continue
        if _TEST.fullmatch(name.strip()):
            return "test"
        if _NON_FUNCTIONAL.search(name):
            return "non-functional"
        if _CONSTRAINT.search(name):
            return "constraint"
        if _HEADING.search(name):
            return "heading"
        if _INFORMATION.search(name):
            return "information"
        if re.search(r"functional|requirement|user story|需求|功能", name, re.IGNORECASE):
            return "functional"
    return None


def _requirement_kind(requirement_id: str, section: list[str]) -> str:
    prefix = re.split(r"[-_.\d]", requirement_id, maxsplit=1)[0].upper() if requirement_id else ""
    if prefix in _ID_PREFIX_KIND:
        return _ID_PREFIX_KIND[prefix]
    if prefix == "FR":
        return "functional"
    for title in reversed(section[1:]):
        kind = kind_from_words(title)
        if kind in ("non-functional", "constraint", "functional"):
            return kind
    return "functional"


def _section_paths(text: str, default_title: str) -> tuple[str, dict[str, list[str]], list]:
    """The document's title, each section id's heading path (title first, the section's own
    heading last), and its sections."""
    from reqstudio.document_model import parse_markdown

    document = parse_markdown(text, default_title=default_title)
    title = document.title or default_title
    paths: dict[str, list[str]] = {}
    stack: list[tuple[int, str]] = []
    for section in document.sections:
        if not section.heading:  # the text under the title, before any heading
            paths[section.id] = [title]
            continue
        while stack and stack[-1][0] >= section.level:
            stack.pop()
        stack.append((section.level, section.title))
        paths[section.id] = [title, *(name for _, name in stack)]
    return title, paths, document.sections


def items_from_text(text: str, title: str = "") -> ItemSet:
    """The items of a Markdown or plain-text document: its headings, and its requirements as
    `reqstudio check` finds them."""
    from reqstudio.check.parse import parse_requirements
    from reqstudio.check.patterns import ALPHA_ID_RE
    from reqstudio.check.trace import read_matrix

    text = text.replace("\r\n", "\n").replace("\r", "\n")
    doc_title, paths, sections = _section_paths(text, title or "Document")
    parsed = parse_requirements(text)
    origins = {row.id: row.origin for row in read_matrix(text) or [] if row.id and row.origin}
    by_section: dict[str, list] = {}
    for requirement in parsed.requirements:
        by_section.setdefault(requirement.section_id, []).append(requirement)
    items: list[Item] = []
    placed: set[int] = set()
    for section in sections:
        own = by_section.get(section.id, [])
        path = paths.get(section.id, [doc_title])
        # a heading that carries an id ("### FR-03 Login") is that requirement, not a heading
        if section.heading and not any(r.id_from_heading for r in own):
            items.append(Item("", "", section.title, path[:-1], "heading"))
        parent = path[:-1] if any(r.id_from_heading for r in own) else path
        for requirement in own:
            placed.add(id(requirement))
            items.append(_requirement_item(requirement, parent, origins))
    for requirement in parsed.requirements:  # a section the document model did not cut
        if id(requirement) not in placed:
            section_path = [doc_title, requirement.section] if requirement.section else [doc_title]
            items.append(_requirement_item(requirement, section_path, origins))
    assign_ids(items, set(parsed.declared_ids))
    assign_uids(items)
    ids = {}
    for item in items:
        if item.kind != "heading":
            ids.setdefault(item.id, item)
    for item in items:
        if item.kind == "heading":
            continue
        for found in dict.fromkeys(ALPHA_ID_RE.findall(item.text)):
            target = ids.get(found)
            if target is not None and target is not item and found != item.id:
                item.links.append(Link("refers to", target.uid, target.id))
    return ItemSet(items, [], doc_title)


def _requirement_item(requirement, section: list[str], origins: dict[str, str]) -> Item:
    attributes: dict[str, str | list[str]] = {}
    for name, pattern in _FIELD.items():
        found = pattern.search(requirement.text)
        if found:
            attributes[name] = found.group(1)
    if requirement.id in origins:
        attributes["source"] = origins[requirement.id]
    body = requirement.body.strip() if requirement.id and not requirement.id_from_heading else ""
    text = re.sub(r"^[\s:：.\-–—]+", "", body) if body else requirement.text.strip()
    return Item(
        requirement.id,
        "",
        text,
        list(section),
        _requirement_kind(requirement.id, section),
        attributes,
    )


# --- any file ------------------------------------------------------------------------------

REQIF_SUFFIXES = (".reqif", ".reqifz")


class ItemsError(ValueError):
    """A file that cannot be read into items; the message says why (one line)."""
