"""The in-app Readme (the header's Readme button: chainlit.md, chainlit_zh-CN.md) describes
every mode the selector offers, in both languages (it described Chat alone)."""

from __future__ import annotations

import re
from pathlib import Path

from reqstudio.messages import both

ROOT = Path(__file__).resolve().parent.parent
MODES = ("chat", "agent", "srs", "review", "rewrite", "team")


def described_modes(readme: str) -> list[str]:
    """The modes a Readme has a bullet for: `- **<title>**: …` (or `：`)."""
    return re.findall(r"^- \*\*(.+?)\*\*[:：]", readme, re.M)


def test_the_readme_describes_every_mode_in_both_languages():
    registered = Path(ROOT / "reqstudio" / "web" / "app.py").read_text(encoding="utf-8")
    assert registered.count("register_mode(") == len(MODES)  # a new mode needs its line here
    for file, language in (("chainlit.md", "en"), ("chainlit_zh-CN.md", "zh")):
        titles = [both(f"{mode}.mode.title")[language] for mode in MODES]
        assert described_modes((ROOT / file).read_text(encoding="utf-8")) == titles, file
