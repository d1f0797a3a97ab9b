"""Prompts are files under `prompts/<mode>/`, rendered with Jinja2 and StrictUndefined,
so a missing variable is an error rather than a silently empty hole."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"


@lru_cache(maxsize=1)
def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(PROMPTS_DIR),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        # prompts ship with the code: no file check per render between two model calls
        auto_reload=False,
    )


def render_prompt(name: str, **variables: Any) -> str:
    """Render `prompts/<name>` (for example `srs/req_parse.md`)."""
    return _environment().get_template(name).render(**variables)


def prompt_exists(name: str) -> bool:
    return (PROMPTS_DIR / name).is_file()
