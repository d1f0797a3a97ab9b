"""Structure rules: one binding statement per requirement, quality requirements with a number
and a unit, unique and present ids, references to ids that exist, acronyms defined before use.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from reqstudio.check.parse import ParsedDocument, Requirement, binding_words
from reqstudio.check.patterns import ALPHA_ID_RE
from reqstudio.check.rules import word_set


@dataclass(frozen=True)
class StructureFinding:
    rule: str
    requirement: Requirement | None  # None: the whole document
    values: dict[str, object]


# --- one binding statement -------------------------------------------------------------


def shall_findings(requirement: Requirement) -> list[StructureFinding]:
    words = binding_words(requirement.body)
    if len(words) > 1:
        return [
            StructureFinding(
                "SRS-singular",
                requirement,
                {"count": len(words), "term": ", ".join(dict.fromkeys(w.lower() for w in words))},
            )
        ]
    if not words:
        return [StructureFinding("SRS-no-shall", requirement, {})]
    return []


# --- quality requirements need a number and a unit --------------------------------------

_QUALITY_EN = re.compile(
    r"response time|load(?:ing)? time|latency|throughput|availability|uptime|inactivity|idle|downtime|performance|"
    r"concurren|capacity|scalab|reliab|MTBF|MTTR|recovery time|\bfast(?:er)?\b|quickly|"
    r"(?:processing|response|system|transfer|download|upload|search) speed|"
    r"robust|dependab|maintainab|extensib|"
    r"\btimeout\b|simultaneous|as soon as|\bstable\b|lifetime|failover|sustainab|"
    r"usabilit|rapidly|\bscale to\b",
    re.IGNORECASE,
)
_QUALITY_ZH = re.compile(
    r"性能|响应时间|加载时间|延迟|吞吐|可用性|可靠性|并发|容量|扩展性|可伸缩|恢复时间|宕机|速度|"
    r"快速|超时"
)
_QUALITY_SECTION = re.compile(
    r"performance|reliab|availab|capacity|scalab|性能|可靠|可用|容量", re.IGNORECASE
)
_MEASURE = re.compile(
    r"\d+(?:[.,]\d+)?\s*(?:%|％|percent|ms|milliseconds?|s\b|sec|seconds?|minutes?|mins?\b|"
    r"hours?|hrs?\b|h\b|days?|weeks?|months?|years?|users?|requests?|transactions?|sessions?|connections?|"
    r"[KMGT]B\b|[KMG]bps|Hz|times|per\b|/|x\b|次|秒|毫秒|分钟|小时|天|个|人|名|用户|条|笔|"
    r"倍|万|千)|"
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|fifteen|twenty|thirty|sixty|"
    r"hundred|thousand)\s+(?:milliseconds?|seconds?|minutes?|hours?|days?|users?|requests?)|"
    r"[一二两三四五六七八九十百千]+\s*(?:秒|毫秒|分钟|小时|天|个|人|名)",
    re.IGNORECASE,
)


# the same in lower case, on the lower-cased text: a quick test that most requirements fail
# (a pattern that ignores case costs three times as much)
_QUALITY_EN_FOLDED = re.compile(_QUALITY_EN.pattern.lower())
assert not re.search(r"\\[A-Z]", _QUALITY_EN.pattern)  # lower-casing \S or \W would flip it


def measure_findings(requirement: Requirement) -> list[StructureFinding]:
    text = requirement.body
    pattern = _QUALITY_ZH if requirement.language == "zh" else _QUALITY_EN
    quick = pattern is _QUALITY_ZH or _QUALITY_EN_FOLDED.search(text.lower())
    topic = (pattern.search(text) if quick else None) or _QUALITY_SECTION.search(
        requirement.section
    )
    if topic is None or _MEASURE.search(text):
        return []
    return [StructureFinding("SRS-nfr-unmeasured", requirement, {"term": topic.group()})]


# --- ids -------------------------------------------------------------------------------


def id_findings(parsed: ParsedDocument) -> list[StructureFinding]:
    requirements = parsed.requirements
    found: list[StructureFinding] = []
    counts = Counter(r.id for r in requirements if r.id)
    seen: set[str] = set()
    for requirement in requirements:
        rid = requirement.id
        if rid and counts[rid] > 1:
            if rid in seen:
                found.append(
                    StructureFinding(
                        "SRS-duplicate-id", requirement, {"term": rid, "count": counts[rid]}
                    )
                )
            seen.add(rid)
    with_id = [r for r in requirements if r.id]
    if requirements and not with_id:
        found.append(
            StructureFinding(
                "SRS-missing-id",
                None,
                {"count": len(requirements), "term": f"{len(requirements)} requirements"},
            )
        )
    elif with_id:
        found += [StructureFinding("SRS-missing-id", r, {}) for r in requirements if not r.id]
    # references: an id whose prefix the document uses for its own ids, but that is not one
    prefixes = {_prefix(i) for i in parsed.declared_ids if not i[0].isdigit()}
    for requirement in requirements:
        for match in ALPHA_ID_RE.finditer(requirement.body):
            ref = match.group()
            if ref in parsed.declared_ids or _prefix(ref) not in prefixes:
                continue
            found.append(StructureFinding("SRS-unknown-reference", requirement, {"term": ref}))
    return found


def _prefix(identifier: str) -> str:
    return re.sub(r"[-_.]?\d+(?:\.\d+)*[a-z]?$", "", identifier)


# --- acronyms defined before use (INCOSE R37) -------------------------------------------

_ACRONYM = re.compile(r"(?<![\w.-])([A-Z][A-Z0-9&]*[A-Z][A-Z0-9]*)s?(?![\w-])")  # not .NET
_PLACEHOLDER = re.compile(r"\[[^\]]{1,40}\]")  # "[SYSTEM NAME]": a blank to fill, not acronyms
_ROMAN = re.compile(r"^[IVXLC]+$")
_CAPS_WORDS = {
    "SHALL", "MUST", "SHOULD", "MAY", "AND", "OR", "NOT", "IF", "THEN", "WHEN", "WHILE",
    "WHERE", "THE", "NOTE", "ALL", "NO", "YES", "TO", "OF", "IN", "ON", "AT", "BY", "FOR",
}  # fmt: skip


# An acronym defined with a bracket: `Long Form (ACR)`, `ACR (Long Form)`.
_BRACKETED_DEFINITIONS = (
    re.compile(r"[A-Za-z\u4e00-\u9fff][^()（）]{2,}?\s*[(（]\s*([A-Z][A-Za-z0-9&]*[A-Z])s?\s*[)）]"),
    re.compile(r"\b([A-Z][A-Z0-9&]*[A-Z])s?\s*[(（]\s*[A-Za-z\u4e00-\u9fff]"),
)  # fmt: skip
# A glossary line or row that starts with it: `ACR | ...`, `ACR - ...`, `ACR refers to ...`.
_GLOSSARY_LINE = re.compile(
    r"^\s*[|*•-]?\s*\**([A-Z][A-Z0-9&]*[A-Z])s?\**(?:\s+\w{1,3})?\s*(?:\||:|：|-|–|—|=|\s{2,}|refers to|means|stands for)"
)  # fmt: skip


_ACRONYM_IN_BRACKETS = re.compile(r"\s*([A-Z][A-Za-z0-9&]*[A-Z])s?\s*[)）]")
_BRACKET = re.compile(r"[()（）]")
_LETTER = re.compile(r"[A-Za-z\u4e00-\u9fff]")


def _long_form_first(line: str) -> list[str]:
    """The acronyms `_BRACKETED_DEFINITIONS[0]` finds in `line` (`Long Form (ACR)`: a
    letter, two characters or more without a bracket, then the bracketed acronym), found in
    one pass: that pattern, tried from every letter, took time in the square of a line's
    length. A match runs from the first letter after the last bracket to the next bracket."""
    found = []
    after = 0  # just past the last bracket
    for bracket in _BRACKET.finditer(line):
        position = bracket.start()
        if bracket.group() in "(（":
            letter = _LETTER.search(line, after, position)
            acronym = _ACRONYM_IN_BRACKETS.match(line, position + 1)
            if letter is not None and letter.start() <= position - 3 and acronym is not None:
                found.append(acronym.group(1))
        after = position + 1
    return found


def _definitions(lines: list[str]) -> dict[str, int]:
    """The first line (0-based) where each acronym is defined, with a bracket or on a
    glossary line."""
    found: dict[str, int] = {}
    for index, line in enumerate(lines):
        if "(" in line or "（" in line:  # a line without a bracket is spared these
            for acronym in _long_form_first(line):
                found.setdefault(acronym, index)
            for match in _BRACKETED_DEFINITIONS[1].finditer(line):
                found.setdefault(match.group(1), index)
        for match in _GLOSSARY_LINE.finditer(line):
            found.setdefault(match.group(1), index)
    return found


def acronym_findings(parsed: ParsedDocument) -> list[StructureFinding]:
    known = {w.upper() for w in word_set("en", "known-acronyms")}
    defined = _definitions(parsed.lines)
    ids = parsed.declared_ids | {r.id for r in parsed.requirements}
    # every start of an id ("FR" of "FR-12"): an acronym that starts an id is the id's
    # prefix, looked up in this index rather than against every id (a document of 10,000
    # requirements has as many ids)
    id_starts = {identifier[:n] for identifier in ids for n in range(1, len(identifier) + 1)}
    reported: set[str] = set()
    found = []
    for requirement in parsed.requirements:
        for match in _ACRONYM.finditer(_PLACEHOLDER.sub(" ", requirement.body)):
            acronym = match.group(1)
            if (
                acronym in reported
                or acronym in known
                or acronym in _CAPS_WORDS
                or _ROMAN.match(acronym)
                or acronym in id_starts
            ):
                continue
            reported.add(acronym)
            where = defined.get(acronym)
            if acronym in _definitions([requirement.text]):
                continue  # defined where it is first used
            if where is None:
                why = "is not defined in the document"
                why_zh = "在文档中没有定义"
            elif where + 1 > requirement.line:
                why = f"is used before its definition (line {where + 1})"
                why_zh = f"在定义（第 {where + 1} 行）之前使用"
            else:
                continue
            found.append(
                StructureFinding(
                    "SRS-acronym-undefined",
                    requirement,
                    {"term": acronym, "why": why, "why_zh": why_zh},
                )
            )
    return found
