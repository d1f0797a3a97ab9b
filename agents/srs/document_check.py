"""Is DocGenerate's answer a document? A small model may open with a title and then give back
the JSON list it was given (`# IEEE Std 830-1998` followed by raw JSON): that is retried, then
reported, never offered as `srs.md`."""

from __future__ import annotations

import json
import re

_JSON_LINE = re.compile(r'^\s*([\[\]{}],?|"[^"]*"\s*:.*|"[^"]*",?)\s*$')
MIN_PROSE_LINES = 1


class NotADocument(ValueError):
    """DocGenerate's answer is not a document (raw JSON, or nothing beyond a title)."""


def document_problem(markdown: str) -> str | None:
    """Why `markdown` is not an SRS document, or None when it is one."""
    lines = [line for line in markdown.strip().splitlines() if line.strip()]
    body = [line for line in lines if not line.lstrip().startswith("#")]
    if not body:
        return "it holds nothing but headings"
    text = "\n".join(body).strip()
    if text[:1] in "[{":
        try:
            json.loads(text)
            return "its body is raw JSON"
        except json.JSONDecodeError:
            pass
    json_lines = sum(1 for line in body if _JSON_LINE.match(line))
    if json_lines * 2 > len(body):
        return "most of its body is raw JSON"
    prose = [line for line in body if not _JSON_LINE.match(line) and len(line.strip()) > 3]
    if len(prose) < MIN_PROSE_LINES:
        return "it holds no text beyond its title"
    return None
