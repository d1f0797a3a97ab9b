"""A user's verdicts on the checker's findings: "wrong" (a false alarm, dismissed) or "right"
(confirmed), with an optional reason; a dismissed finding stops being reported.

A verdict names the finding by its rule, its term (the words it flagged) and its context
(the text of the requirement it was found on), and says how far it reaches (`scope`):

- "requirement": that requirement only (the same text);
- "words" (the default when a context is given): the same term between the same words, in
  any requirement (the word before and the word after it; a Chinese term: the character
  before and after): "respond [quickly] to" dismissed once is dismissed wherever it stands
  so, while "[quickly]" in "move quickly enough" is still reported;
- "document" (the default without a context): the term under that rule anywhere.

When verdicts of both kinds match one finding, the narrower reach wins, and at the same
reach "right" wins: a finding someone confirmed is not hidden by a broader dismissal.

The file (`reqstudio check --verdicts FILE`), JSON or TOML:

    {"verdicts": [{"rule": "ISO29148-vague", "term": "quickly",
                   "context": "The system shall respond quickly to a request.",
                   "verdict": "wrong", "reason": "defined in the glossary"}]}

    [[verdict]]
    rule = "ISO29148-vague"
    term = "quickly"
    context = "The system shall respond quickly to a request."
    verdict = "wrong"
    reason = "defined in the glossary"

Standard library only, like the rest of the checker; it reads a report's findings by their
fields (the engine imports this module, not the other way round)."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reqstudio.check.jsonout import fields_as_dict

VERDICTS = ("wrong", "right")
SCOPES = ("requirement", "words", "document")
_REACH = {scope: n for n, scope in enumerate(SCOPES)}  # narrower first


class VerdictError(ValueError):
    """A verdicts file that cannot be read, or an entry in it that says no verdict."""


@dataclass(frozen=True)
class Verdict:
    rule: str
    term: str
    verdict: str  # "wrong" or "right"
    context: str = ""  # the requirement's text
    reason: str = ""
    scope: str = "words"
    requirement_id: str = ""  # for the reader only: where it was given

    def as_dict(self) -> dict[str, str]:
        return fields_as_dict(self, _VERDICT_KEYS)


# the JSON keys of a verdict, in the order a verdicts file and `--json` write them
_VERDICT_KEYS = ("rule", "term", "context", "verdict", "reason", "scope", "requirement_id")


def make_verdict(entry: dict[str, Any]) -> Verdict:
    """One entry of a verdicts file (or a row the browser stored) as a `Verdict`."""
    if not isinstance(entry, dict):
        raise VerdictError(f"a verdict is a table of fields, not {type(entry).__name__}")
    fields = {k: entry.get(k) for k in ("rule", "term", "context", "verdict", "reason", "scope")}
    for key, value in fields.items():
        if value is not None and not isinstance(value, str):
            raise VerdictError(f"verdict field {key!r} must be text")
    rule, verdict = (fields["rule"] or "").strip(), (fields["verdict"] or "").strip().lower()
    if not rule:
        raise VerdictError("a verdict names its rule ('rule')")
    if verdict not in VERDICTS:
        raise VerdictError(f"'verdict' must be one of {', '.join(VERDICTS)}, not {verdict!r}")
    context = _spaced(fields["context"] or "")
    scope = (fields["scope"] or ("words" if context else "document")).strip()
    if scope not in SCOPES:
        raise VerdictError(f"'scope' must be one of {', '.join(SCOPES)}, not {scope!r}")
    if scope != "document" and not context:
        raise VerdictError(f"a verdict of scope {scope!r} needs the requirement's text ('context')")
    return Verdict(
        rule=rule,
        term=_spaced(fields["term"] or ""),
        verdict=verdict,
        context=context,
        reason=(fields["reason"] or "").strip(),
        scope=scope,
        requirement_id=str(entry.get("requirement_id") or entry.get("requirement") or ""),
    )


def read_verdicts(path: Path) -> list[Verdict]:
    """The verdicts of a JSON file (a list, or `{"verdicts": [...]}`) or a TOML file
    (`[[verdict]]` tables)."""
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise VerdictError(f"cannot read {path}: {exc}") from None
    if path.suffix.lower() == ".toml":
        try:
            data: Any = tomllib.loads(raw)
        except tomllib.TOMLDecodeError as exc:
            raise VerdictError(f"{path} is not TOML: {exc}") from None
        entries = data.get("verdict", data.get("verdicts", []))
    else:
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise VerdictError(f"{path} is not JSON: {exc}") from None
        entries = data.get("verdicts", []) if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise VerdictError(f"{path}: the verdicts are a list")
    verdicts = []
    for n, entry in enumerate(entries, 1):
        try:
            verdicts.append(make_verdict(entry))
        except VerdictError as exc:
            raise VerdictError(f"{path}: verdict {n}: {exc}") from None
    return verdicts


# --- matching --------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*|[\u3400-\u9fff\uf900-\ufaff]")


def _spaced(text: str) -> str:
    return " ".join(text.split())


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def surroundings(text: str, term: str) -> set[tuple[str, str]]:
    """The (word before, word after) of each place `term` stands in `text` ("" at an end);
    empty when it is not there."""
    words, wanted = _words(text), _words(term)
    if not wanted:
        return set()
    found = set()
    for n in range(len(words) - len(wanted) + 1):
        if words[n : n + len(wanted)] == wanted:
            before = words[n - 1] if n else ""
            after = words[n + len(wanted)] if n + len(wanted) < len(words) else ""
            found.add((before, after))
    return found


def _same_text(a: str, b: str) -> bool:
    return _spaced(a).casefold() == _spaced(b).casefold()


def reaches(
    verdict: Verdict, rule: str, also: Iterable[str], term: str, text: str, body: str = ""
) -> bool:
    """Whether `verdict` is about a finding of `rule` (or with it in `also`) on `term` in a
    requirement of text `text` (`body`: the same without its leading id)."""
    if verdict.rule != rule and verdict.rule not in also:
        return False
    if verdict.term.casefold() != _spaced(term).casefold():
        return False
    if verdict.scope == "document":
        return True
    if _same_text(verdict.context, text) or (body and _same_text(verdict.context, body)):
        return True
    if verdict.scope == "requirement":
        return False
    here = surroundings(text, term)
    return bool(here) and bool(here & surroundings(verdict.context, verdict.term))


def deciding(verdicts: list[Verdict], finding: Any, text: str, body: str = "") -> Verdict | None:
    """The verdict that decides `finding` (on a requirement of text `text`, `body` without
    its id): the narrowest that reaches it, "right" before "wrong" at the same reach; None
    when none does."""
    matching = [
        v for v in verdicts if reaches(v, finding.rule, finding.also, finding.term, text, body)
    ]
    if not matching:
        return None
    return min(matching, key=lambda v: (_REACH[v.scope], v.verdict != "right"))


@dataclass(frozen=True)
class Suppressed:
    """A finding a verdict dismissed, and that verdict."""

    finding: Any  # reqstudio.check.engine.Finding
    verdict: Verdict

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.finding.as_dict(),
            "verdict": {"reason": self.verdict.reason, "scope": self.verdict.scope,
                        "context": self.verdict.context},
        }  # fmt: skip


def apply_verdicts(report: Any, verdicts: list[Verdict]) -> Any:
    """Take the findings a "wrong" verdict decides out of `report.findings` into
    `report.suppressed` (in place; the report is returned). Findings on the whole document
    (no requirement) are matched by their term only, with a verdict of scope "document"."""
    if not verdicts:
        return report
    texts = {(r.label, r.line): r.text for r in report.requirements}
    bodies = {(r.label, r.line): r.body for r in report.requirements}
    kept = []
    for finding in report.findings:
        where = (finding.requirement_id, finding.line)
        verdict = deciding(verdicts, finding, texts.get(where, ""), bodies.get(where, ""))
        if verdict is not None and verdict.verdict == "wrong":
            report.suppressed.append(Suppressed(finding, verdict))
        else:
            kept.append(finding)
    report.findings = kept
    return report
