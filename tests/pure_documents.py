"""The PURE requirements documents vendored under tests/data/pure/ (source and licence note in
the README there). The files are listed, not globbed: a missing one fails the tests that read
it instead of leaving them with nothing to run."""

from __future__ import annotations

from pathlib import Path

PURE = Path(__file__).resolve().parent / "data" / "pure"
CASES = ("2003-agentmom-pdf", "2007-e-store-doc", "2011-opensg-0-1-doc")
DOCUMENTS = [PURE / case / name for case in CASES for name in ("input.md", "reference.md")]
E_STORE_REFERENCE = PURE / "2007-e-store-doc" / "reference.md"
