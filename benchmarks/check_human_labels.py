"""`reqstudio check` judged by people outside the project: precision, recall and F1 per label
and per rule on the ARTA smell sets DS2 and DS4 (each apart: they were labelled with different
habits), the vague-pronoun rule on the ReqEval anaphora training split, each on its dev half and
its check half (tests/data/labelled/split.json, seeded), and the Chinese set labelled here.

    PYTHONPATH=. python benchmarks/check_human_labels.py [--half dev|check|all] [--errors]
    PYTHONPATH=. python benchmarks/check_human_labels.py --report   # both halves, saved
    PYTHONPATH=. python benchmarks/check_human_labels.py --report --before "Before X changed"

The findings are read from `reqstudio check FILE --json` through the label -> rule table
(`labels` of each rule in reqstudio/check/data/rules.toml). The check half is for the figures
reported, not for tuning: `--errors` refuses it."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.check_zh_labels import zh_table  # noqa: E402
from benchmarks.human_labels import (  # noqa: E402
    ARTA_SETS,
    LABELS,
    SEVEN,
    ArtaItem,
    PronounItem,
    SmellScore,
    arta_path,
    in_half,
    label_table,
    load_arta,
    load_reqeval,
    score_document,
    score_pronouns,
    table_head,
    table_row,
)
from reqstudio.check.pronouns import pronoun_hits  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def smell_tables(name: str, half: str, score: SmellScore) -> str:
    title = (
        f"### {name}, {half} half: {score.requirements} requirements "
        f"(macro-F1 over the seven smells: **{score.macro_f1():.2f}**)"
    )
    lines = [title, *label_table(score), *table_head("label: rule")]
    lines += [table_row(f"{label}: {rule}", c) for (label, rule), c in score.by_rule.items()]
    if score.not_found:
        lines.append(f"\nRequirements the checker did not read: {len(score.not_found)}")
    return "\n".join(lines)


def run_arta(name: str, half: str, limit: int | None = None) -> SmellScore:
    """The set's `half` (its first `limit` requirements, for a quick run) through
    `reqstudio check --json`."""
    ids = in_half(name, half)
    items = [item for item in load_arta(name) if item.id in ids][:limit]
    return score_document(items, arta_path(name) if limit is None else _slice_document(items))


def _slice_document(items: list[ArtaItem]) -> Path:
    lines = ["# slice", "", "## 3. Specific requirements", ""]
    lines += [f"- {item.id}: {item.text}" for item in items]
    with tempfile.NamedTemporaryFile(
        "w", suffix=".md", delete=False, encoding="utf-8", prefix="arta-slice-"
    ) as handle:
        handle.write("\n".join(lines) + "\n")
    return Path(handle.name)


def pronoun_flags(items: list[PronounItem]) -> list[bool]:
    """Whether the vague-pronoun rule flags each labelled pronoun (at its position)."""
    flags = []
    for item in items:
        spans = {
            (hit.start, hit.end)
            for hit in pronoun_hits(item.sentence, "en")
            if hit.rule == "ISO29148-vague-pronoun"
        }
        flags.append((item.start, item.end) in spans)
    return flags


def pronoun_table(half: str) -> tuple[str, Counter]:
    groups = in_half("reqeval-training", half)
    items = [item for item in load_reqeval() if item.group in groups]
    counts = score_pronouns(items, pronoun_flags(items))
    every = score_pronouns(items, [True] * len(items))
    title = (
        f"### ReqEval training, {half} half: {len(items)} pronouns, "
        f"{sum(i.ambiguous for i in items)} ambiguous (NOCUOUS)"
    )
    lines = [
        title,
        *table_head("ambiguous pronouns"),
        table_row("ISO29148-vague-pronoun", counts),
        table_row("baseline: every pronoun", every),
    ]
    return "\n".join(lines), counts


def pronoun_errors(half: str = "dev") -> list[str]:
    groups = in_half("reqeval-training", half)
    items = [item for item in load_reqeval() if item.group in groups]
    errors = []
    for item, hit in zip(items, pronoun_flags(items), strict=True):
        if hit != item.ambiguous:
            kind = "extra" if hit else "missed"
            errors.append(f"{item.id} {kind} '{item.pronoun}' ({item.resolved}): {item.sentence}")
    return errors


def summary(scores: dict[tuple[str, str], SmellScore]) -> str:
    """Per label, the F1 of each set and half side by side."""
    keys = list(scores)
    lines = [
        "| label | " + " | ".join(f"{name} {half}" for name, half in keys) + " |",
        "|---|" + "---|" * len(keys),
    ]
    for label in LABELS:
        cells = [f"{scores[key].f1(label):.2f}" for key in keys]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    cells = [f"**{scores[key].macro_f1():.2f}**" for key in keys]
    lines.append("| **macro-F1, the seven smells** | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(halves: tuple[str, ...], limit: int | None = None) -> str:
    scores = {}
    parts = []
    for name in ARTA_SETS:
        for half in halves:
            scores[(name, half)] = run_arta(name, half, limit)
            parts.append(smell_tables(name, half, scores[(name, half)]))
    parts.insert(0, summary(scores))
    for half in halves:
        parts.append(pronoun_table(half)[0])
    parts.append(zh_table())
    return "\n\n".join(parts) + "\n"


def with_before(text: str, previous: str, note: str) -> str:
    """The new report `text` with the tables at the head of the `previous` report (its
    summary and the "before" tables it kept) after its own summary, under `note`: the file
    keeps each earlier run's figures as the runs themselves wrote them."""
    head = previous.split("\n### ", 1)[0].strip()
    if not head:
        return text
    summary, rest = text.split("\n\n", 1)
    return f"{summary}\n\n{note.rstrip('.:')}, the same run gave:\n\n{head}\n\n{rest}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("dev", "check", "all"), default="dev")
    parser.add_argument("--errors", action="store_true", help="every miss and extra (dev only)")
    parser.add_argument("--set", choices=(*ARTA_SETS, "reqeval-training"))
    parser.add_argument("--limit", type=int, help="only the first N requirements of each half")
    parser.add_argument(
        "--report", action="store_true", help="both halves; saved to benchmarks/results/"
    )
    parser.add_argument(
        "--before",
        default="Before this run (the previous report)",
        help="with --report: what changed since the previous report, said above its tables, "
        "which the new file keeps",
    )
    args = parser.parse_args(argv)
    if args.errors and args.half != "dev":
        parser.error("--errors lists dev errors only: the check half is not for tuning")
    if args.report:
        text = report(("dev", "check"), args.limit)
        print(text)
        if args.limit is None:
            path = RESULTS / "check_human_labels.md"
            previous = path.read_text(encoding="utf-8") if path.is_file() else ""
            path.write_text(with_before(text, previous, args.before), encoding="utf-8")
        return 0
    if args.set == "reqeval-training":
        print(pronoun_table(args.half)[0])
        if args.errors:
            print("\n".join(["", *pronoun_errors()]))
        return 0
    for name in [args.set] if args.set else ARTA_SETS:
        score = run_arta(name, args.half, args.limit)
        print(smell_tables(name, args.half, score))
        if args.errors:
            print("\n".join(["", *score.errors]))
        print()
    if not args.set:
        print(pronoun_table(args.half)[0])
    return 0


__all__ = ["SEVEN", "main", "report"]

if __name__ == "__main__":
    raise SystemExit(main())
