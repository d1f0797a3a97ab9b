"""The requirement sets labelled by people outside the project (tests/data/labelled/), their
seeded dev / check split, and the scoring of `reqstudio check --json` against them through the
label -> rule table of `reqstudio/check/data/rules.toml` (`labels` of each rule).

ARTA sets (DS2, DS4): one decision per (requirement, label): a requirement is positive for a
label when its label list holds it (`[]`: labelled clean), and flagged when a finding of a
rule that answers the label (its `rule` or one of its `also`) is on it. ReqEval: one decision
per pronoun occurrence: ambiguous (NOCUOUS) or not."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "tests" / "data" / "labelled"
SPLIT_FILE = LABELLED / "split.json"
SEED = "reqstudio-check-2026"
ARTA_SETS = ("arta-ds2", "arta-ds4")
# the seven smells whose macro-F1 the issue compares with the published tools (loopholes are
# measured and reported too, but are not among the seven)
SEVEN = (
    "subjective",
    "ambiguous_adverb_adjective",
    "nonverifiable",
    "superlative",
    "comparative",
    "negative",
    "vague_pronoun",
)
LABELS = (*SEVEN[:3], "loophole", *SEVEN[3:])


# --- the data --------------------------------------------------------------------------


@dataclass
class ArtaItem:
    id: str
    text: str
    labels: set[str]
    words: dict[str, list[str]] = field(default_factory=dict)  # the words people flagged


def arta_path(name: str) -> Path:
    return LABELLED / "arta-smells" / f"{name}.md"


def load_arta(name: str) -> list[ArtaItem]:
    folder = LABELLED / "arta-smells"
    labels = json.loads((folder / f"{name}.labels.json").read_text(encoding="utf-8"))
    evidence = json.loads((folder / f"{name}.evidence.json").read_text(encoding="utf-8"))
    return [
        ArtaItem(rid, evidence[rid]["text"], set(found), evidence[rid].get("words", {}))
        for rid, found in labels.items()
    ]


@dataclass
class PronounItem:
    id: str  # "library#02-1"
    sentence: str  # without the tags
    start: int  # the pronoun's span in `sentence`
    end: int
    ambiguous: bool  # NOCUOUS
    resolved: str = ""  # the annotators' referent, when INNOCUOUS

    @property
    def pronoun(self) -> str:
        return self.sentence[self.start : self.end]

    @property
    def group(self) -> str:
        """The sentence's id: its pronouns fall in one half together."""
        return re.sub(r"-\d+$", "", self.id)


_TAGGED = re.compile(r"<referential>(.*?)</referential>")


def load_reqeval() -> list[PronounItem]:
    path = LABELLED / "reqeval-training" / "training.tsv"
    items = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        cells = line.split("\t")
        if len(cells) < 3:
            continue
        tagged = _TAGGED.search(cells[1])
        if tagged is None:
            continue
        # a row with two tagged pronouns is one decision, on the first of them
        rest = _TAGGED.sub(r"\1", cells[1][tagged.end() :])
        sentence = cells[1][: tagged.start()] + tagged.group(1) + rest
        start = tagged.start()
        items.append(
            PronounItem(
                cells[0],
                sentence,
                start,
                start + len(tagged.group(1)),
                cells[2].strip() == "NOCUOUS",
                cells[3].strip() if len(cells) > 3 else "",
            )
        )
    return items


# --- the split -------------------------------------------------------------------------


def half_of(key: str) -> str:
    """ "dev" or "check", from a seeded hash of `key`: the same text falls in the same half in
    every set (DS2 and DS4 share about 60 texts)."""
    digest = hashlib.sha256(f"{SEED}\n{key}".encode()).digest()
    return "dev" if digest[0] % 2 == 0 else "check"


def _text_key(text: str) -> str:
    return " ".join(text.lower().split())


def make_split() -> dict:
    """The split as written to tests/data/labelled/split.json."""
    split: dict = {"seed": SEED, "how": "sha256(seed + newline + key), first byte even: dev"}
    for name in ARTA_SETS:
        halves: dict[str, list[str]] = {"dev": [], "check": []}
        for item in load_arta(name):
            halves[half_of(_text_key(item.text))].append(item.id)
        split[name] = halves
    halves = {"dev": [], "check": []}
    for item in load_reqeval():
        if item.group not in halves["dev"] + halves["check"]:
            halves[half_of(item.group)].append(item.group)
    split["reqeval-training"] = halves
    return split


def read_split() -> dict:
    return json.loads(SPLIT_FILE.read_text(encoding="utf-8"))


def in_half(name: str, half: str) -> set[str]:
    """The ids (ReqEval: the sentence groups) of `half` ("dev", "check" or "all") of a set."""
    halves = read_split()[name]
    return set(halves["dev"]) | set(halves["check"]) if half == "all" else set(halves[half])


# --- running the checker ---------------------------------------------------------------


def check_json(path: Path, *extra: str) -> dict:
    """`reqstudio check PATH --json [extra]`, as a user runs it (a process of its own)."""
    done = subprocess.run(
        [sys.executable, "-m", "reqstudio.cli", "check", str(path), "--json", *extra],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"reqstudio check {path} failed: {done.stderr}")
    return json.loads(done.stdout)


def show_report(text: str, path: Path, save: bool) -> None:
    """A check benchmark's ending: its report printed and, when `save`, written to `path`
    (benchmarks/results/)."""
    print(text)
    if save:
        path.write_text(text, encoding="utf-8")


def rules_by_requirement(data: dict) -> dict[str, set[str]]:
    """The rules (a finding's `rule` and its `also`) found on each requirement id."""
    found: dict[str, set[str]] = {}
    for finding in data["findings"]:
        if finding["requirement_id"]:
            found.setdefault(finding["requirement_id"], set()).update(
                {finding["rule"], *finding["also"]}
            )
    return found


# --- scoring ---------------------------------------------------------------------------


def prf(counts: Counter) -> tuple[float, float, float]:
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


@dataclass
class SmellScore:
    by_label: dict[str, Counter]
    by_rule: dict[tuple[str, str], Counter]  # (label, rule) -> counts
    requirements: int
    not_found: list[str]
    errors: list[str] = field(default_factory=list)  # "id label missed|extra: words"

    def f1(self, label: str) -> float:
        return prf(self.by_label[label])[2]

    def macro_f1(self, labels: tuple[str, ...] = SEVEN) -> float:
        return sum(self.f1(label) for label in labels) / len(labels)


def score_arta(
    items: list[ArtaItem], data: dict, mapping: dict[str, tuple[str, ...]]
) -> SmellScore:
    """`data`: the output of `reqstudio check --json` on the set's document."""
    found = rules_by_requirement(data)
    read = {r["requirement_id"] for r in data["requirements"]}
    score = SmellScore(
        {label: Counter() for label in LABELS},
        {(label, rule): Counter() for label in LABELS for rule in mapping[label]},
        len(items),
        [item.id for item in items if item.id not in read],
    )
    for item in items:
        rules = found.get(item.id, set())
        for label in LABELS:
            answering = set(mapping[label]) & rules
            truth = label in item.labels
            counts = score.by_label[label]
            if answering and truth:
                counts["tp"] += 1
            elif answering:
                counts["fp"] += 1
                score.errors.append(f"{item.id} {label} extra ({', '.join(sorted(answering))})")
            elif truth:
                counts["fn"] += 1
                words = ", ".join(item.words.get(label, []))
                score.errors.append(f"{item.id} {label} missed: {words}")
            for rule in mapping[label]:
                by_rule = score.by_rule[(label, rule)]
                hit = rule in rules
                by_rule["tp" if hit and truth else "fp" if hit else "fn" if truth else "tn"] += 1
    return score


def score_document(items: list[ArtaItem], path: Path) -> SmellScore:
    """`items` scored on what `reqstudio check PATH --json` finds in their document, through
    the label -> rule table."""
    from reqstudio.check.rules import label_rules

    return score_arta(items, check_json(path), label_rules())


def score_pronouns(items: list[PronounItem], flagged: list[bool]) -> Counter:
    counts: Counter = Counter()
    for item, hit in zip(items, flagged, strict=True):
        if hit and item.ambiguous:
            counts["tp"] += 1
        elif hit:
            counts["fp"] += 1
        elif item.ambiguous:
            counts["fn"] += 1
        else:
            counts["tn"] += 1
    return counts


# --- the tables ------------------------------------------------------------------------

HEADER = (
    "| {} | labelled | flagged | correct | precision | recall | F1 |",
    "|---|---|---|---|---|---|---|",
)


def table_head(column: str) -> list[str]:
    """A blank line and a table's two header lines, its first column named `column`."""
    return ["", HEADER[0].format(column), HEADER[1]]


def table_row(name: str, counts: Counter) -> str:
    p, r, f = prf(counts)
    labelled, flagged = counts["tp"] + counts["fn"], counts["tp"] + counts["fp"]
    return f"| {name} | {labelled} | {flagged} | {counts['tp']} | {p:.2f} | {r:.2f} | {f:.2f} |"


def label_table(score: SmellScore) -> list[str]:
    """The table of `score` per label, after a blank line."""
    return [*table_head("label"), *(table_row(label, score.by_label[label]) for label in LABELS)]
