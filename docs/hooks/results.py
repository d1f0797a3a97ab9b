"""MkDocs hook: the measured figures live in benchmarks/results/ (the benchmark scripts write
them there); the site serves them under results/, so the benchmarks page links them and
strict mode checks those links like any other."""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File, Files

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


def on_files(files: Files, config) -> Files:
    for path in sorted(RESULTS.glob("*")):
        if path.is_file() and path.suffix in {".md", ".txt", ".json"}:
            files.append(File.generated(config, f"results/{path.name}", abs_src_path=str(path)))
    return files
