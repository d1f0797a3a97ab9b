"""Does a revised section keep every requirement of the original?

A revision (a Review author's, a Rewrite patch) replaces a section only if every requirement
statement of the original is still there as a statement, or a finding of that round asks to
remove, merge, move or renumber it. A requirement statement is a requirement the checker's
parser (`reqstudio.check.parse`) finds, with its id: the id that heads it (a line, a table row,
a heading over its body), or, for a statement that ends with its id ("The system shall send
reminders (FR-04)."), the one id it holds. An id that heads a line the parser does not take as
a requirement ("| FR-02 | Users reset passwords |") must still head one.

Small models asked to revise sometimes keep the ids and lose the requirements: "FR-01, FR-02,
FR-03 were dropped…", "FR-01, FR-02, and FR-03 are no longer asked to remove them". Such a
sentence only mentions ids: a list of ids, or an id as the subject of an editing verb, is no
requirement's statement; nor is a line without a modal verb where the original had one.
Reordering is fine: statements are matched by id, not by place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from reqstudio.check.parse import Requirement, binding_words, parse_requirements
from reqstudio.check.patterns import ALPHA_ID, ALPHA_ID_RE, RFC_WEAK, WEAK_EN, WEAK_ZH
from reqstudio.document_guard import NotADocumentReason, document_problem
from reqstudio.failures import Failure, FailureCode
from reqstudio.messages import text as message

# Words of a finding that asks to remove, merge, move or renumber (a requirement it names may
# then leave the section, or come back under another id), in English and Chinese.
REMOVAL_WORDS = re.compile(
    r"\b(?:remove|removes|removing|delete|deleting|drop|dropping|omit|shorten|merge|"
    r"consolidate|split|move|renumber|renumbering|rename|renaming|replace|supersede)\b"
    r"|删除|删去|删掉|去掉|去除|移除|删减|精简|合并|拆分|移到|移至|重新编号|重命名|替换",
    re.IGNORECASE,
)
# An answer below this share of the section's length is a fragment, unless a finding removes.
MIN_LENGTH_SHARE = 0.4
# Sections shorter than this (characters) are not judged by length: one line may well shrink.
MIN_JUDGED_CHARS = 120

_FULL_ID = re.compile(ALPHA_ID)
# After the leading id: another id joined to it ("FR-01, FR-02 ...", "FR-01、FR-02 和 ...").
_ID_LIST = re.compile(r"^\W{0,3}\s*(?:(?:[,，、;；/&]|(?i:and|or)\b|和|与|及|以及)\s*)?" + ALPHA_ID)
# After the leading id(s): an editing verb with the id as its subject ("FR-02 was dropped",
# "FR-02 has been merged into FR-01", "FR-02 已被删除").
_EDITED = re.compile(
    r"^\W{0,3}\s*(?:(?:was|were|is|are|has been|have been|had been|got|gets|will be|shall be|"
    r"should be|must be|can be|may be|now|also|hereby|therefore|thus)\s+){0,2}"
    r"(?:dropped|removed|deleted|merged|omitted|moved|renumbered|renamed|replaced|superseded|"
    r"retired|withdrawn|obsolete|no longer|not (?:needed|required|kept)|gone)\b"
    r"|^\W{0,3}\s*(?:已经|已被|已|被|现已|均已|都已|均|都){0,2}"
    r"(?:删除|删去|删掉|去掉|移除|合并|移到|移至|废弃|取消|不再|舍弃)",
    re.IGNORECASE,
)


# Chinese modal words the checker does not count as binding or weak, but a revision may use
# for one that was: "系统须在…", "务必", "不可", "不能", "禁止".
_MORE_ZH = re.compile(r"须|务必|不可|不能|禁止")


def has_modal(text: str) -> bool:
    """A binding or weak modal verb: shall, must, should, will, may, 应, 必须, 须, 需要, 可以..."""
    return bool(
        binding_words(text)
        or WEAK_EN.search(text)
        or WEAK_ZH.search(text)
        or RFC_WEAK.search(text)
        or _MORE_ZH.search(text)
    )


def _family(requirement_id: str) -> str:
    return re.split(r"\d", requirement_id, maxsplit=1)[0]


def _statement_id(requirement: Requirement, families: set[str]) -> str:
    """The id whose statement `requirement` is, or "" (a requirement without one, or one that
    holds several ids without starting with one: prose about them). An id inside the text
    counts only as one of a family of ids (FR-01, FR-02: not SHA-256 in "hashed with
    SHA-256")."""
    if requirement.id:
        return requirement.id if _FULL_ID.fullmatch(requirement.id) else ""
    ids = set(ALPHA_ID_RE.findall(requirement.text))
    if len(ids) != 1:
        return ""
    rid = ids.pop()
    return rid if _family(rid) in families else ""


def _families(text: str) -> set[str]:
    """Id prefixes ("FR-") that two ids or more of `text` share."""
    ids = set(ALPHA_ID_RE.findall(text))
    prefixes = [_family(rid) for rid in ids]
    return {p for p in prefixes if prefixes.count(p) > 1}


def _mentions_only(requirement: Requirement) -> bool:
    """A line headed by ids that only talks about them: a list of ids, or an id that is the
    subject of an editing verb."""
    if not requirement.id or requirement.id_from_heading:
        return False
    rest = requirement.body
    if _ID_LIST.match(rest):
        return True
    return bool(_EDITED.match(rest))


@dataclass
class Statements:
    """A text's requirement statements by id, and the ids heading other lines."""

    by_id: dict[str, list[Requirement]] = field(default_factory=dict)
    mentioned: dict[str, list[Requirement]] = field(default_factory=dict)
    heading_ids: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, text: str, families: set[str]) -> Statements:
        """The statements of `text`, ids inside a statement read for the `families` given."""
        parsed = parse_requirements(text)
        found = cls()
        for requirement in parsed.requirements:
            rid = _statement_id(requirement, families)
            if not rid:
                continue
            target = found.mentioned if _mentions_only(requirement) else found.by_id
            target.setdefault(rid, []).append(requirement)
        found.heading_ids = {
            rid for rid in parsed.declared_ids if _FULL_ID.fullmatch(rid) and rid not in found.by_id
        } - set(found.mentioned)
        return found


@dataclass(frozen=True)
class LostRequirements:
    """Requirements of the original that the revision lost: `dropped` are gone, ids and all;
    `mentioned` are named only in text that is not their requirement."""

    dropped: tuple[str, ...] = ()
    mentioned: tuple[str, ...] = ()

    @property
    def ids(self) -> tuple[str, ...]:
        return (*self.dropped, *self.mentioned)

    def text(self, section: str, language: str = "en") -> str:
        """Why the revision of `section` is refused, naming the requirements."""
        if self.dropped and self.mentioned:
            return message(
                "guard.dropped_and_mentioned", language, section=section,
                dropped=", ".join(self.dropped), mentioned=", ".join(self.mentioned),
            )  # fmt: skip
        key = "guard.dropped" if self.dropped else "guard.mentioned"
        return message(key, language, section=section, ids=", ".join(self.ids))


def ids_findings_let_go(findings: Iterable[str]) -> set[str]:
    """Requirement ids a finding both names and asks to remove (merge, move, renumber...)."""
    return {
        rid
        for finding in findings
        if REMOVAL_WORDS.search(finding)
        for rid in ALPHA_ID_RE.findall(finding)
    }


def lost_requirements(before: str, after: str, findings: Iterable[str] = ()) -> LostRequirements:
    """The requirements of `before` that `after` no longer states, less those a finding of the
    round asks to remove (merge, move, renumber)."""
    families = _families(before)
    original, revised = Statements.of(before, families), Statements.of(after, families)
    still_named = set(ALPHA_ID_RE.findall(after))
    let_go = ids_findings_let_go(findings)
    dropped: list[str] = []
    mentioned: list[str] = []
    for rid, statements in original.by_id.items():
        if rid in let_go:
            continue
        modal = any(has_modal(s.body) for s in statements)
        kept = [s for s in revised.by_id.get(rid, []) if has_modal(s.body) or not modal]
        if kept:
            continue
        (mentioned if rid in still_named else dropped).append(rid)
    for rid in sorted(original.heading_ids - let_go):
        if rid in revised.by_id or rid in revised.heading_ids:
            continue
        (mentioned if rid in still_named else dropped).append(rid)

    def in_order(ids: list[str]) -> tuple[str, ...]:  # as the original has them
        return tuple(sorted(ids, key=before.find))

    return LostRequirements(in_order(dropped), in_order(mentioned))


# --- one verdict for a revised section -------------------------------------------------------


@dataclass(frozen=True)
class RevisionRefusal:
    """Why a revision cannot replace its section: `kind` is "not_a_document" (with `reason`),
    "fragment" (with `sizes`) or "requirements" (with `lost`); `section` names it."""

    kind: str
    section: str
    reason: NotADocumentReason | None = None
    lost: LostRequirements | None = None
    sizes: tuple[int, int] = (0, 0)

    @property
    def failure(self) -> Failure:
        """The refusal as a failure code and values (the document guard's messages)."""
        if self.reason is not None:
            return self.reason.failure
        values: dict[str, object] = {"section": self.section}
        lost = self.lost
        if lost is not None and lost.dropped and lost.mentioned:
            values |= {"dropped": ", ".join(lost.dropped), "mentioned": ", ".join(lost.mentioned)}
            values["kind"] = "dropped_and_mentioned"
        elif lost is not None:
            values |= {
                "kind": "dropped" if lost.dropped else "mentioned",
                "ids": ", ".join(lost.ids),
            }
        else:
            values = {"kind": "fragment", "new": self.sizes[0], "old": self.sizes[1]}
        return Failure(FailureCode.NOT_A_DOCUMENT, values)

    def text(self, language: str = "en") -> str:
        if self.reason is not None:
            return self.reason.text(language)
        if self.lost is not None:
            return self.lost.text(self.section, language)
        new, old = self.sizes
        return message("guard.fragment", language, new=new, old=old)

    def __str__(self) -> str:
        return self.text("en")


def revision_refusal(
    before: str,
    after: str,
    findings: Sequence[str],
    *,
    templates: Iterable[str],
    section: str,
    material: str = "",
) -> RevisionRefusal | None:
    """Why `after` (an answer to the prompt `templates`) cannot replace the section `before`,
    given the round's `findings` on it; None: it can. `section` names the section; `material`
    is what else the prompt gave to write from (the section itself always counts)."""
    problem = document_problem(after, templates, material=f"{before}\n{material}")
    if problem is not None:
        return RevisionRefusal("not_a_document", section, reason=problem)
    old, new = before.strip(), after.strip()
    removal = any(REMOVAL_WORDS.search(f) for f in findings)
    if len(old) >= MIN_JUDGED_CHARS and len(new) < MIN_LENGTH_SHARE * len(old) and not removal:
        return RevisionRefusal("fragment", section, sizes=(len(new), len(old)))
    lost = lost_requirements(before, after, findings)
    if lost.ids:
        return RevisionRefusal("requirements", section, lost=lost)
    return None
