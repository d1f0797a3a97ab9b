"""Precision and recall of `reqstudio check` per rule on the hand-labelled requirements in
tests/data/check/labels.txt (guide: tests/data/check/LABELLING.md).

    PYTHONPATH=. python benchmarks/check_benchmark.py [--split dev|held-out|all]

A labelled requirement is matched to the checker's findings by its first line; a finding
counts for a rule when the rule is its `rule` or one of its `also`. Each (requirement, rule)
pair is one decision, so a rule that fires twice on one requirement counts once. The
document-wide "no requirement has an id" finding is left out (ids are tested exactly in
tests/test_check.py). EARS templates: precision and recall per template, and the share."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reqstudio.check.engine import check_document  # noqa: E402

DATA = ROOT / "tests" / "data" / "check"
DOCUMENTS = {
    "2007-e-store-doc": ROOT / "tests" / "data" / "pure" / "2007-e-store-doc" / "reference.md",
    "2003-agentmom-pdf": ROOT / "tests" / "data" / "pure" / "2003-agentmom-pdf" / "reference.md",
    "2010-blit-draft": DATA / "2010-blit-draft.md",
    "ears-en": DATA / "ears-en.md",  # EARS templates only: their rule codes are "?"
    "ears-zh": DATA / "ears-zh.md",
}
CASES = ROOT / "cases" / "pure"  # any other labelled document: a benchmark case's reference


def document_path(name: str) -> Path:
    return DOCUMENTS.get(name) or CASES / name / "reference.md"


def held_out() -> set[str]:
    """The quality benchmark's held-out split (cases/pure/split.json): nobody tunes on it."""
    return set(json.loads((CASES / "split.json").read_text(encoding="utf-8"))["splits"]["held-out"])


CODES = {
    "SUP": "ISO29148-superlative",
    "SUBJ": "ISO29148-subjective",
    "PRON": "ISO29148-vague-pronoun",
    "AMB": "ISO29148-ambiguous",
    "OPEN": "ISO29148-open-ended",
    "COMP": "ISO29148-comparative",
    "LOOP": "ISO29148-loophole",
    "NEG": "ISO29148-negative",
    "REF": "ISO29148-incomplete-reference",
    "R2": "INCOSE-R2",
    "R5": "INCOSE-R5",
    "R10": "INCOSE-R10",
    "R15": "INCOSE-R15",
    "R17": "INCOSE-R17",
    "R19": "INCOSE-R19",
    "R20": "INCOSE-R20",
    "R21": "INCOSE-R21",
    "R26": "INCOSE-R26",
    "R30": "INCOSE-R30",
    "R38": "INCOSE-R38",
    "SING": "SRS-singular",
    "NOSHALL": "SRS-no-shall",
    "NFR": "SRS-nfr-unmeasured",
    "ACR": "SRS-acronym-undefined",
}
EARS = {
    "U": "ubiquitous",
    "E": "event-driven",
    "S": "state-driven",
    "O": "optional",
    "W": "unwanted",
    "C": "complex",
    "N": None,
}


@dataclass
class Item:
    document: str
    line: int
    ears: str | None
    rules: set[str] | None  # None: not labelled for the rules ("?"), only for EARS
    words: str


@dataclass
class Outcome:
    items: int = 0
    not_found: list[str] = field(default_factory=list)
    counts: dict[str, Counter] = field(default_factory=dict)  # rule -> tp / fp / fn
    errors: list[str] = field(default_factory=list)  # "doc:line rule: missed|extra  words"
    ears: dict[str, Counter] = field(default_factory=dict)
    ears_share: tuple[int, int] = (0, 0)  # (predicted matching, labelled matching)


def load_labels(path: Path = DATA / "labels.txt") -> list[Item]:
    items = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        document, line, ears, codes, words = raw.split("|", 4)
        rules = None if codes == "?" else {CODES[c] for c in codes.split() if c != "-"}
        items.append(Item(document, int(line), EARS[ears], rules, words))
    return items


_LIST_MARK = re.compile(
    r"^\s*(?:[a-z0-9]{1,2}[.)]|\([a-z]\)|[-*•▪●◦○✓])\s+"
)  # "a. ", "1) ", "(c) ", "• "


def _inside(requirements: list, item: Item) -> list[int]:
    """A labelled requirement the checker read as part of a longer block (a flattened
    table's cells or page headers before it): the nearest requirement starting at most 15
    lines before the label that holds the label's first words."""
    words = " ".join(_LIST_MARK.sub("", item.words).split()[:4])
    near = [
        n
        for n, r in enumerate(requirements)
        if item.line - 15 <= r.line < item.line and words in r.text
    ]
    return near[-1:]


def evaluate(items: list[Item]) -> Outcome:
    outcome = Outcome(items=len(items))
    outcome.counts = {rule: Counter() for rule in CODES.values()}
    outcome.ears = {t: Counter() for t in EARS.values() if t}
    predicted_matching = labelled_matching = 0
    reports = {}
    sources: dict[str, list[str]] = {}
    for document in sorted({i.document for i in items}):
        text = document_path(document).read_text(encoding="utf-8")
        reports[document] = check_document(text)
        sources[document] = text.split("\n")
    for item in items:
        report = reports[item.document]
        positions = [n for n, r in enumerate(report.requirements) if r.line == item.line]
        if not positions:
            positions = _inside(report.requirements, item)
        found: set[str] = set()
        template = None
        if positions:
            requirement = report.requirements[positions[0]]
            template = report.ears[positions[0]]
            words = " ".join(_LIST_MARK.sub("", item.words).split()[:3])
            if words not in _LIST_MARK.sub("", requirement.text):
                # a table row's id sits in a cell of its own: the label reads
                # "7.1.2.5 Any QA", the row "|7.1.2.5|Any QA ...|"
                first, _, rest = item.words.partition(" ")
                source = sources[item.document][item.line - 1].strip()
                if source.startswith("|") and source.split("|")[1].strip() == first:
                    words = " ".join(rest.split()[:3])
            if words.replace(" ", "") not in _LIST_MARK.sub("", requirement.text).replace(" ", ""):
                # (without spaces: a label joins an id a narrow cell wrapped, "Positi" / "ons")
                raise SystemExit(f"{item.document}:{item.line}: the text is not {words!r}")
            for finding in report.findings:  # a requirement's findings carry its first line
                if finding.line == requirement.line and finding.requirement_id:
                    found |= {finding.rule, *finding.also}
        else:
            outcome.not_found.append(f"{item.document}:{item.line}")
        for rule in CODES.values() if item.rules is not None else ():
            if rule in found and rule in item.rules:
                outcome.counts[rule]["tp"] += 1
            elif rule in found:
                outcome.counts[rule]["fp"] += 1
                outcome.errors.append(f"{item.document}:{item.line} {rule} extra: {item.words}")
            elif rule in item.rules:
                outcome.counts[rule]["fn"] += 1
                outcome.errors.append(f"{item.document}:{item.line} {rule} missed: {item.words}")
        predicted_matching += template is not None
        labelled_matching += item.ears is not None
        for name in outcome.ears:
            if template == name and item.ears == name:
                outcome.ears[name]["tp"] += 1
            elif template == name:
                outcome.ears[name]["fp"] += 1
            elif item.ears == name:
                outcome.ears[name]["fn"] += 1
    outcome.ears_share = (predicted_matching, labelled_matching)
    return outcome


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "-"


def precision_recall(counts: Counter) -> tuple[str, str]:
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    return _ratio(tp, tp + fp), _ratio(tp, tp + fn)


def table(outcome: Outcome) -> str:
    lines = [
        "| rule | labelled | flagged | correct | precision | recall |",
        "|---|---|---|---|---|---|",
    ]
    total: Counter = Counter()
    for rule, counts in outcome.counts.items():
        if not (counts["tp"] + counts["fp"] + counts["fn"]):
            continue
        total += counts
        p, r = precision_recall(counts)
        labelled, flagged = counts["tp"] + counts["fn"], counts["tp"] + counts["fp"]
        lines.append(f"| {rule} | {labelled} | {flagged} | {counts['tp']} | {p} | {r} |")
    p, r = precision_recall(total)
    lines.append(
        f"| **all rules (micro)** | {total['tp'] + total['fn']} | {total['tp'] + total['fp']} "
        f"| {total['tp']} | {p} | {r} |"
    )
    lines += ["", "| EARS template | labelled | predicted | correct | precision | recall |"]
    lines.append("|---|---|---|---|---|---|")
    for name, counts in outcome.ears.items():
        if not (counts["tp"] + counts["fp"] + counts["fn"]):
            continue
        p, r = precision_recall(counts)
        lines.append(
            f"| {name} | {counts['tp'] + counts['fn']} | {counts['tp'] + counts['fp']} "
            f"| {counts['tp']} | {p} | {r} |"
        )
    predicted, labelled = outcome.ears_share
    lines.append(
        f"\nEARS share: {predicted}/{outcome.items} predicted, {labelled}/{outcome.items} labelled."
    )
    if outcome.not_found:
        lines.append(f"Labelled requirements the checker did not find: {outcome.not_found}")
    return "\n".join(lines)


def agreement_table(first: list[Item], second: list[Item]) -> str:
    """Per document: the second annotator against the first, and the checker against each."""
    lines = [
        "| document | requirements | second vs first: P / R | checker vs first: P / R "
        "| checker vs second: P / R |",
        "|---|---|---|---|---|",
    ]
    for document in sorted({i.document for i in second}):
        theirs = [i for i in second if i.document == document]
        lines_both = {i.line for i in theirs}
        ours = [i for i in first if i.document == document and i.line in lines_both]
        counts = agreement(ours, theirs)
        row = [document, str(counts["requirements"]), " / ".join(precision_recall(counts))]
        for labels in (ours, theirs):
            checker = sum(evaluate(labels).counts.values(), Counter())
            row.append(" / ".join(precision_recall(checker)))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def micro(outcome: Outcome) -> tuple[float, float]:
    total = sum(outcome.counts.values(), Counter())
    tp, fp, fn = total["tp"], total["fp"], total["fn"]
    return tp / (tp + fp), tp / (tp + fn)


def agreement(first: list[Item], second: list[Item]) -> Counter:
    """How far a second annotator's labels agree with the first's on the requirements both
    labelled (matched by document and line): tp / fp / fn of the second against the first,
    one decision per (requirement, rule), as for the checker."""
    ours = {(i.document, i.line): i for i in first if i.rules is not None}
    counts: Counter = Counter()
    for item in second:
        other = ours.get((item.document, item.line))
        if other is None or item.rules is None:
            continue
        counts["requirements"] += 1
        counts["tp"] += len(item.rules & other.rules)
        counts["fp"] += len(item.rules - other.rules)
        counts["fn"] += len(other.rules - item.rules)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "held-out", "all"), default="all")
    parser.add_argument(
        "--errors", action="store_true", help="list every missed and extra finding (dev only)"
    )
    parser.add_argument(
        "--agreement",
        action="store_true",
        help="how far the second annotators' labels (labels-second.txt) agree with the first's",
    )
    args = parser.parse_args(argv)
    items = load_labels()
    if args.agreement:
        print(agreement_table(items, load_labels(DATA / "labels-second.txt")))
        return 0
    if args.split == "dev":
        items = [i for i in items if i.document not in held_out()]
    elif args.split == "held-out":
        items = [i for i in items if i.document in held_out()]
    outcome = evaluate(items)
    print(f"{args.split}: {len(items)} labelled requirements")
    print(table(outcome))
    if args.errors:
        if args.split != "dev":
            parser.error("--errors lists dev errors only: the held-out split is not for tuning")
        print("\n".join(["", "Errors:", *outcome.errors]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
