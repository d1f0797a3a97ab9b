"""The checker on Chinese requirements: per label and per rule on tests/data/check/zh-labelled.md,
sixty requirements that an AI session of this project wrote and labelled from the rules'
definitions, before the checker first ran on them. Made here, not by people outside the
project: a secondary figure, named so wherever it is shown.

    PYTHONPATH=. python benchmarks/check_zh_labels.py"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.human_labels import ArtaItem, SmellScore, label_table, score_document  # noqa: E402

ZH_SET = ROOT / "tests" / "data" / "check" / "zh-labelled.md"
ZH_LABELS = ROOT / "tests" / "data" / "check" / "zh-labelled.labels.json"
_LINE = re.compile(r"^- (ZH-\d{3})：(.+)$", re.MULTILINE)


def load_zh() -> list[ArtaItem]:
    labels = json.loads(ZH_LABELS.read_text(encoding="utf-8"))
    texts = dict(_LINE.findall(ZH_SET.read_text(encoding="utf-8")))
    return [ArtaItem(rid, texts[rid], set(found)) for rid, found in labels.items()]


def zh_score() -> SmellScore:
    return score_document(load_zh(), ZH_SET)


def zh_table() -> str:
    score = zh_score()
    title = (
        f"### Chinese, labelled here (secondary): {score.requirements} requirements "
        f"(macro-F1 over the seven smells: {score.macro_f1():.2f})"
    )
    return "\n".join([title, *label_table(score)])


if __name__ == "__main__":
    print(zh_table())
    print("\n".join(["", *zh_score().errors]))
