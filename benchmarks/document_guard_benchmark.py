"""How fast the document guard measures an answer's echo of its prompt (`measure_echo`, run on
every document and section a model writes): CPU seconds over the repository's real documents
(the PURE cases and the test data) and each of their sections, as the guard's calibration test
reads them.

    PYTHONPATH=. python benchmarks/document_guard_benchmark.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reqstudio.document_guard import measure_echo  # noqa: E402
from reqstudio.document_model import parse_markdown  # noqa: E402
from tests.test_document_guard import SECTION_WRITERS, SRS, real_documents  # noqa: E402


def answers() -> list[tuple[str, tuple[str, ...]]]:
    """Each real document against DocGenerate's prompt, each section against the writers'."""
    found = []
    for path in real_documents():
        text = path.read_text(encoding="utf-8", errors="replace")
        if not text.strip():
            continue
        found.append((text, tuple(SRS)))
        for section in parse_markdown(text).sections:
            if section.content.strip():
                found.append((section.content, tuple(SECTION_WRITERS)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    measured = answers()
    characters = sum(len(text) for text, _ in measured)
    seconds = []
    for _ in range(runs):
        started = time.process_time()
        for text, templates in measured:
            measure_echo(text, templates)
        seconds.append(time.process_time() - started)
    median = statistics.median(seconds)
    print("| answers | characters | CPU s per run | median CPU s | characters per CPU s |")
    print("|---|---|---|---|---|")
    print(
        f"| {len(measured)} | {characters} | {' / '.join(f'{s:.2f}' for s in seconds)} "
        f"| {median:.2f} | {characters / median:,.0f} |"
    )


if __name__ == "__main__":
    main()
