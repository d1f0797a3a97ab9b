"""Prompts are files of this package (`reqstudio/prompts/<mode>/*.md`, package data), rendered
with Jinja2 and StrictUndefined, so a missing variable is an error rather than a silently empty
hole."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, nodes

# The folder the templates are installed in (package data beside this module).
PROMPTS_DIR = Path(str(resources.files(__name__)))


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
    """Render `reqstudio/prompts/<name>` (for example `srs/req_parse.md`)."""
    return _environment().get_template(name).render(**variables)


def parse_prompt(name: str) -> nodes.Template:
    """`reqstudio/prompts/<name>` as Jinja's syntax tree (what the template says whatever it is given:
    `reqstudio.document_guard` reads its literal text there)."""
    environment = _environment()
    source, _, _ = environment.loader.get_source(environment, name)
    return environment.parse(source)


def prompt_exists(name: str) -> bool:
    return (PROMPTS_DIR / name).is_file()
