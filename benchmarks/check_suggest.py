"""How many of a model's suggested rewrites the meaning guard accepts, and how many of those
re-check with fewer findings: `reqstudio check --suggest --json` on requirements labelled by
people outside the project (the ARTA DS2 dev half, English) and on the Chinese check set.

    PYTHONPATH=. python benchmarks/check_suggest.py [--english N] [--chinese N] [--save]

Without OPENAI_BASE_URL / OPENAI_API_KEY the offline model answers (SmolLM2-135M-Instruct
under llama.cpp, started by `reqstudio` itself); with them, the configured provider does, and
the results name it."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.human_labels import in_half, load_arta, show_report  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "check_suggest.md"
ZH_DOCUMENT = ROOT / "tests" / "data" / "check" / "zh-srs.md"


def english_document(count: int) -> Path:
    """Requirements of the ARTA DS2 dev half that carry a label, one sentence of at most 40
    words each (a rewrite is of one requirement; some entries are whole paragraphs)."""
    ids = in_half("arta-ds2", "dev")
    items = [
        i
        for i in load_arta("arta-ds2")
        if i.id in ids and i.labels and len(i.text.split()) <= 40 and i.text.count(". ") == 0
    ]
    lines = ["# ARTA DS2, dev half", "", "## 3. Specific requirements", ""]
    lines += [f"- {item.id}: {item.text}" for item in items[: count * 2]]
    with tempfile.NamedTemporaryFile(
        "w", suffix=".md", delete=False, encoding="utf-8", prefix="suggest-en-"
    ) as handle:
        handle.write("\n".join(lines) + "\n")
    return Path(handle.name)


def run_suggest(path: Path, count: int) -> tuple[dict, float, int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", "from reqstudio.entry import run; run()", "check", str(path),
         "--suggest", "--json", "--suggest-max", str(count)],
        cwd=ROOT, env=env, capture_output=True, text=True, encoding="utf-8", timeout=3600,
        check=False,
    )  # fmt: skip
    if done.returncode not in (0, 1, 3):
        raise SystemExit(f"reqstudio check --suggest failed ({done.returncode}): {done.stderr}")
    return json.loads(done.stdout), time.monotonic() - started, done.returncode


def row(name: str, data: dict, seconds: float, code: int) -> str:
    s = data["suggestions"]["summary"]
    answered = s["answered"] or 1
    accepted = s["accepted"] or 1
    return (
        f"| {name} | {s['asked']} | {s['failed']} | {s['accepted']} ({s['accepted'] / answered:.0%}"
        f" of answered) | {s['refused']} | {s['fewer_findings']} ({s['fewer_findings'] / accepted:.0%}"
        f" of accepted) | {seconds:.0f} s | {code} |"
    )


def reasons(data: dict) -> dict[str, int]:
    """How often each kind of meaning change refused a rewrite."""
    counts: dict[str, int] = {}
    for item in data["suggestions"]["items"]:
        for change in item.get("changes", []):
            key = f"{change['kind']} {change['what']}"
            counts[key] = counts.get(key, 0) + 1
        for reason in item.get("refused_because", []):
            if reason.startswith("the rewrite"):
                counts[reason] = counts.get(reason, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def examples(data: dict, limit: int = 4) -> list[str]:
    """The first `limit` suggestions, and every accepted one after them."""
    out = []
    items = data["suggestions"]["items"]
    for item in items[:limit] + [i for i in items[limit:] if i.get("accepted")]:
        if item.get("rewrite") is None:
            out.append(f"- {item['requirement_id']}: no answer ({item['error']})")
            continue
        verdict = (
            f"accepted, findings {item['findings_before']} -> {item['findings_after']}"
            if item["accepted"]
            else "refused: " + "; ".join(item["refused_because"])
        )
        out.append(f"- {item['requirement_id']}: `{item['diff']}` ({verdict})")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--english", type=int, default=40)
    parser.add_argument("--chinese", type=int, default=20)
    parser.add_argument("--save", action="store_true", help=f"write {RESULTS.name}")
    args = parser.parse_args(argv)
    runs = [
        ("ARTA DS2 dev half (English)", english_document(args.english), args.english),
        ("zh-srs.md (Chinese)", ZH_DOCUMENT, args.chinese),
    ]
    rows, details, model = [], [], ""
    for name, path, count in runs:
        data, seconds, code = run_suggest(path, count)
        model = data["suggestions"]["summary"]["model"]
        rows.append(row(name, data, seconds, code))
        details += [f"### {name}", "", f"Refusals by kind: {reasons(data) or 'none'}", ""]
        details += ["The first suggestions, and every accepted one:", "", *examples(data), ""]
    provider = os.environ.get("OPENAI_BASE_URL") or "none (the offline model, started by reqstudio)"
    text = "\n".join(
        [
            "# Suggested rewrites through the meaning guard",
            "",
            f"Produced by `PYTHONPATH=. python benchmarks/check_suggest.py --save`. Model: "
            f"**{model}**; provider: {provider}. One `reqstudio check --suggest --json` run per "
            "document, one call per requirement with findings (the first N), each rewrite "
            "judged by the meaning guard (modal verbs, numbers and units, negations, "
            "conditions, actors, names) and re-checked. Data: ARTA DS2 (labelled by the ARTA "
            "authors' annotators; its dev half, requirements carrying a label, one sentence of at most 40 words) and "
            "tests/data/check/zh-srs.md (written in this project: a secondary figure).",
            "",
            "| data | asked | failed (no usable answer) | accepted by the guard | refused "
            "| re-check with fewer findings | time | exit code |",
            "|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            *details,
        ]
    )
    show_report(text, RESULTS, args.save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
