"""What users' verdicts gain: one half of a human-labelled set's judgements replayed as
verdicts (`reqstudio check --verdicts FILE`), F1 measured on the other half before and after.

    PYTHONPATH=. python benchmarks/check_verdicts.py [--save]

For each ARTA set (DS2, DS4; tests/data/labelled, labelled by the ARTA authors' annotators,
not by this project) and each direction (dev half -> check half, and back), every finding of
`reqstudio check --json` on a requirement of the judged half that answers a label (through
the label -> rule table, `labels` in rules.toml) becomes a verdict as a person holding the
labels would give it: "right" when the requirement carries one of the labels the finding
answers, else "wrong" (a false alarm). Findings that answer no label (structure rules) get
no verdict: the labels say nothing about them. The verdicts are replayed with each reach
(`scope`: the same requirement only, the same term between the same words, the term anywhere
in the document) on the whole set's document, and the other half is scored before and after
with the same scoring as benchmarks/check_human_labels.py. Verdicts never reach the half
they came from in the scores; the "requirement" reach is the control (the halves share no
text, so it must change nothing)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import human_labels as labels  # noqa: E402
from reqstudio.check.rules import label_rules  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "check_verdicts.md"
SCOPES = ("requirement", "words", "document")
DIRECTIONS = (("dev", "check"), ("check", "dev"))


def judgements(
    items: list[labels.ArtaItem], data: dict, mapping: dict[str, tuple[str, ...]], scope: str
) -> list[dict]:
    """The verdicts a person holding the labels of `items` gives on their findings."""
    by_id = {item.id: item for item in items}
    verdicts = []
    for finding in data["findings"]:
        item = by_id.get(finding["requirement_id"])
        if item is None:
            continue
        rules = {finding["rule"], *finding["also"]}
        answered = {label for label in labels.LABELS if rules & set(mapping.get(label, ()))}
        if not answered:
            continue
        entry = {
            "rule": finding["rule"],
            "term": finding["term"],
            "verdict": "right" if answered & item.labels else "wrong",
            "reason": "replayed from the ARTA labels",
            "requirement_id": item.id,
            "scope": scope,
        }
        if scope != "document":
            entry["context"] = item.text
        verdicts.append(entry)
    return verdicts


def micro(score: labels.SmellScore) -> tuple[float, float, float]:
    total: Counter = Counter()
    for label in labels.SEVEN:
        total.update(score.by_label[label])
    return labels.prf(total)


def replay(name: str) -> tuple[list[str], list[str]]:
    """The rows of the summary table and the per-label rows (dev -> check, "words")."""
    mapping = label_rules()
    items = labels.load_arta(name)
    path = labels.arta_path(name)
    before = labels.check_json(path)
    rows, per_label = [], []
    for judged, scored in DIRECTIONS:
        judged_items = [i for i in items if i.id in labels.in_half(name, judged)]
        scored_items = [i for i in items if i.id in labels.in_half(name, scored)]
        base = labels.score_arta(scored_items, before, mapping)
        for scope in SCOPES:
            verdicts = judgements(judged_items, before, mapping, scope)
            with tempfile.NamedTemporaryFile(
                "w", suffix=".json", delete=False, encoding="utf-8", prefix="verdicts-"
            ) as handle:
                json.dump({"verdicts": verdicts}, handle, ensure_ascii=False)
            after_data = labels.check_json(path, "--verdicts", handle.name)
            Path(handle.name).unlink()
            after = labels.score_arta(scored_items, after_data, mapping)
            scored_ids = {i.id for i in scored_items}
            hidden = sum(1 for s in after_data["suppressed"] if s["requirement_id"] in scored_ids)
            kinds = Counter(v["verdict"] for v in verdicts)
            p0, r0, f0 = micro(base)
            p1, r1, f1 = micro(after)
            rows.append(
                f"| {name} | {judged} -> {scored} | {scope} | {kinds['wrong']} / {kinds['right']}"
                f" | {hidden} | {base.macro_f1():.3f} | {after.macro_f1():.3f} "
                f"| {p0:.2f} / {r0:.2f} / {f0:.3f} | {p1:.2f} / {r1:.2f} / {f1:.3f} |"
            )
            if (judged, scope) == ("dev", "words"):
                for label in labels.LABELS:
                    b, a = labels.prf(base.by_label[label]), labels.prf(after.by_label[label])
                    per_label.append(
                        f"| {name} | {label} | {b[0]:.2f} / {b[1]:.2f} / {b[2]:.2f} "
                        f"| {a[0]:.2f} / {a[1]:.2f} / {a[2]:.2f} |"
                    )
    return rows, per_label


def report() -> str:
    rows, per_label = [], []
    for name in labels.ARTA_SETS:
        r, p = replay(name)
        rows += r
        per_label += p
    return "\n".join(
        [
            "# Verdicts replayed: what dismissing findings gains",
            "",
            "Produced by `PYTHONPATH=. python benchmarks/check_verdicts.py --save`. Data: the",
            "ARTA smell sets DS2 and DS4 (tests/data/labelled/arta-smells, labelled by the ARTA",
            "authors' annotators, MIT licence), cut in halves by tests/data/labelled/split.json.",
            "The verdicts are made from one half's labels (a finding answering a label the",
            "requirement carries: right; else: wrong) and replayed through",
            "`reqstudio check --verdicts`; the other half is scored before and after. Verdicts",
            "are given by nobody here: they are the annotators' labels, replayed.",
            "",
            "Reach (`scope` of each verdict): `requirement` = that requirement's text only (the",
            "control: the halves share no text); `words` (the default) = the same term between",
            "the same words anywhere; `document` = the term under that rule anywhere.",
            "",
            "| set | verdicts from -> scored | reach | verdicts wrong / right | findings "
            "suppressed on the scored half | macro-F1 (7 smells) before | after "
            "| micro P / R / F1 before | after |",
            "|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            "## Per label, verdicts from the dev half, reach `words`, scored on the check half",
            "",
            "| set | label | P / R / F1 before | after |",
            "|---|---|---|---|",
            *per_label,
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", action="store_true", help=f"write {RESULTS.name}")
    args = parser.parse_args(argv)
    labels.show_report(report(), RESULTS, args.save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
