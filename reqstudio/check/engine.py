"""`check_document`: every rule on every requirement of a document, and the summary.

Deterministic and local: no model, no provider, no network. Several rules that fire on the
same words (29148's "vague" and INCOSE R7, "never" as a negative and as an absolute) give one
finding, named by the first rule in `data/rules.toml` with the others in `also`."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from reqstudio.check.cross import CrossFinding, cross_findings
from reqstudio.check.ears import TEMPLATES, ears_template
from reqstudio.check.lexical import Hit, language_hits
from reqstudio.check.parse import ParsedDocument, Requirement, parse_requirements
from reqstudio.check.rules import catalog
from reqstudio.check.structure import (
    StructureFinding,
    acronym_findings,
    id_findings,
    measure_findings,
    shall_findings,
)
from reqstudio.check.trace import request_sentences, traced_sentences
from reqstudio.check.verdicts import Suppressed, Verdict, apply_verdicts
from reqstudio.messages import language_code


@dataclass
class Finding:
    requirement_id: str  # the requirement's id, `L<line>` without one, "" for the document
    rule: str
    message: str
    term: str = ""
    also: list[str] = field(default_factory=list)
    section: str = ""
    line: int = 0
    message_zh: str = ""

    def message_in(self, language: str) -> str:
        """Its words in `language` (a finding carries both, as its JSON does)."""
        return self.message_zh if language_code(language) == "zh" else self.message

    def as_dict(self) -> dict[str, Any]:
        """The JSON keys in the fields' order, as `dataclasses.asdict` gives them, written out:
        a report of 10,000 requirements has some 30,000 findings (a loop over the names took
        0.19 s of `--json`, this 0.05 s)."""
        return {
            "requirement_id": self.requirement_id,
            "rule": self.rule,
            "message": self.message,
            "term": self.term,
            "also": list(self.also),
            "section": self.section,
            "line": self.line,
            "message_zh": self.message_zh,
        }


@dataclass
class CheckReport:
    requirements: list[Requirement]
    findings: list[Finding]
    ears: list[str | None]  # the EARS template of each requirement, in order
    # with a request: its sentences (S1 first) and the numbers of those no requirement traces to
    request_sentences: list[str] | None = None
    untraced: list[int] = field(default_factory=list)
    # across requirements: duplicates, near-duplicates, conflicts, term and unit drift
    cross: list[CrossFinding] = field(default_factory=list)
    # the findings a user's verdict dismissed (`reqstudio.check.verdicts`), out of `findings`
    suppressed: list[Suppressed] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        total = len(self.requirements)
        flagged = {(f.requirement_id, f.line) for f in self.findings if f.requirement_id}
        with_findings = sum(1 for r in self.requirements if (r.label, r.line) in flagged)
        matched = [t for t in self.ears if t]
        by_template = Counter(matched)
        return {
            "requirements": total,
            "with_findings": with_findings,
            "findings": len(self.findings),
            # the share of requirements no rule has anything to say about
            "score": round((total - with_findings) / total, 3) if total else None,
            "by_rule": dict(sorted(Counter(f.rule for f in self.findings).items())),
            "ears": {
                "matched": len(matched),
                "share": round(len(matched) / total, 3) if total else None,
                "by_template": {t: by_template[t] for t in TEMPLATES if by_template[t]},
            },
            "cross_requirement": {
                "findings": len(self.cross),
                "by_rule": dict(sorted(Counter(f.rule for f in self.cross).items())),
            },
            "suppressed": len(self.suppressed),
            **(
                {}
                if self.request_sentences is None
                else {
                    "trace": {
                        "request_sentences": len(self.request_sentences),
                        "untraced": [f"S{n}" for n in self.untraced],
                    }
                }
            ),
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary(),
            "findings": [f.as_dict() for f in self.findings],
            "requirements": [
                {
                    "requirement_id": r.label,
                    "line": r.line,
                    "section": r.section,
                    "ears": template,
                    "text": r.text,
                }
                for r, template in zip(self.requirements, self.ears, strict=True)
            ],
            "cross_requirement": [
                f.as_dict(cross_message(f, "en"), cross_message(f, "zh")) for f in self.cross
            ],
            "suppressed": [s.as_dict() for s in self.suppressed],
        }


def _merge(hits: list[Hit]) -> list[tuple[Hit, list[str]]]:
    """One hit per stretch of words: the first rule in catalog order keeps it; an INCOSE
    rule, or another rule on exactly the same words, goes into its `also`. Two 29148 rules
    on different but overlapping words ("conform to the standard if possible") both stay."""
    order = {rule_id: n for n, rule_id in enumerate(catalog())}
    kept: list[tuple[Hit, list[str]]] = []
    for hit in sorted(hits, key=lambda h: (order.get(h.rule, 999), h.start, -(h.end - h.start))):
        for other, also in kept:
            if not (hit.start < other.end and other.start < hit.end):
                continue
            same_words = (hit.start, hit.end) == (other.start, other.end)
            if hit.rule == other.rule or same_words or hit.rule.startswith("INCOSE"):
                if hit.rule != other.rule and hit.rule not in also:
                    also.append(hit.rule)
                break
        else:
            kept.append((hit, []))
    return sorted(kept, key=lambda pair: pair[0].start)


def _finding(rule_id: str, requirement: Requirement | None, values: dict, also=()) -> Finding:
    rule = catalog()[rule_id]
    values_zh = {**values, "why": values.get("why_zh", values.get("why", ""))}
    return Finding(
        requirement_id=requirement.label if requirement else "",
        rule=rule_id,
        message=rule.message("en", **values),
        message_zh=rule.message("zh", **values_zh),
        term=str(values.get("term", "")),
        also=sorted(set(rule.also) | set(also)),
        section=requirement.section if requirement else "",
        line=requirement.line if requirement else 0,
    )


def cross_message(finding: CrossFinding, language: str = "en") -> str:
    """The message of a finding across requirements, from its rule's template: the
    requirements and the words involved ("FR-12 and FR-13 contradict each other: 'within 2
    seconds' / 'within 5 seconds'")."""
    from reqstudio.messages import text

    ids = finding.requirement_ids

    def quoted(word: str) -> str:
        return text("meaning.word", language, word=word)

    if finding.rule in ("SRS-term-drift", "SRS-unit-drift"):
        words = " / ".join(
            text("meaning.word_of", language, word=w, requirement=i)
            for w, i in zip(finding.words, ids, strict=False)
        )
    elif finding.rule == "SRS-conflict":  # both sides, "—" for a side without the word
        words = " / ".join(quoted(w) if w else "—" for w in finding.words)
    else:
        words = " / ".join(quoted(w) for w in finding.words if w)
    values = {"a": ids[0], "b": ids[-1], "words": words}
    return catalog()[finding.rule].message(language, **values)


def check_requirement(requirement: Requirement) -> list[Finding]:
    findings = []
    for hit, also in _merge(language_hits(requirement.body, requirement.language)):
        findings.append(_finding(hit.rule, requirement, {"term": hit.term, "why": hit.why}, also))
    for found in shall_findings(requirement) + measure_findings(requirement):
        findings.append(_finding(found.rule, found.requirement, found.values))
    return findings


def check_parsed(
    parsed: ParsedDocument, cross: bool = True, two_processes: bool = False
) -> CheckReport:
    """The report of `parsed`; with `two_processes`, a large document's rules and checks
    across requirements shared with a second process where that is faster
    (reqstudio/check/parallel.py: for the command line only)."""
    findings: list[Finding] = []
    document_wide: list[StructureFinding] = id_findings(parsed) + acronym_findings(parsed)
    by_requirement: dict[int, list[Finding]] = {}
    for found in document_wide:
        finding = _finding(found.rule, found.requirement, found.values)
        if found.requirement is None:
            findings.append(finding)
        else:
            by_requirement.setdefault(id(found.requirement), []).append(finding)

    def rules_on(requirements: list[Requirement]) -> list[Finding]:
        found: list[Finding] = []
        for requirement in requirements:
            found += check_requirement(requirement)
            found += by_requirement.get(id(requirement), [])
        return found

    requirements = parsed.requirements
    if two_processes:
        from reqstudio.check.parallel import check_on_two_processes, two_processes_help

        two_processes = two_processes_help(len(requirements))
    if two_processes:
        per_requirement, across = check_on_two_processes(requirements, rules_on, cross)
    else:
        per_requirement = rules_on(requirements)
        across = cross_findings(requirements) if cross else []
    ears = [ears_template(r.body, r.language) for r in requirements]
    report = CheckReport(requirements, findings + per_requirement, ears)
    report.cross = across
    return report


UNTRACED_SECTION = "request / 需求描述"


def trace_findings(report: CheckReport, text: str, request: str | list[str]) -> None:
    """Add a finding for each sentence of `request` (its text, or its sentences as
    `request_sentences` cut it) that no requirement of `text` traces to: by the document's
    traceability matrix when it has one, else by matching the texts."""
    sentences = request_sentences(request) if isinstance(request, str) else list(request)
    traced = traced_sentences(text, [r.body for r in report.requirements], sentences)
    report.request_sentences = sentences
    report.untraced = [n for n in range(1, len(sentences) + 1) if n not in traced]
    for n in report.untraced:
        finding = _finding("SRS-untraced-request", None, {"count": n, "term": sentences[n - 1]})
        finding.section = UNTRACED_SECTION
        report.findings.append(finding)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's collector of reference cycles off while a document is checked: the check
    makes no cycles, but its many findings set off full collections that read every object
    again, a quarter of the time of a document of 50,000 requirements and growing with it.
    (Restored as it was; a check running beside another leaves it on at the end.)"""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def check_document(
    text: str,
    request: str | list[str] | None = None,
    cross: bool = True,
    verdicts: list[Verdict] | None = None,
    two_processes: bool = False,
) -> CheckReport:
    """Every rule on every requirement found in `text` (Markdown or plain SRS text), and
    (unless `cross` is False) the checks across requirements; with `request` (the user's
    requirements text, or its sentences), also the sentences no requirement traces to; with
    `verdicts`, the findings a user dismissed moved to `suppressed`; `two_processes`: see
    `check_parsed`."""
    with _no_cycle_collection():
        report = check_parsed(parse_requirements(text), cross, two_processes)
        if request if isinstance(request, list) else (request or "").strip():
            trace_findings(report, text, request)
        apply_verdicts(report, verdicts or [])
    return report
