"""The engine's progress lines in the user's language ("zh" or "en"). The seed's example
"正在生成第 2/5 节..." is the Chinese form; an English user reads "Writing section 2/5...".
Stage ids (`outline_generation`, ...) stay as they are in both: scripts match them."""

from __future__ import annotations

from reqstudio import messages


def text(key: str, language: str, **values: object) -> str:
    """The progress line `key` (`rewrite.progress.<key>` in the catalogue) in `language`."""
    return messages.text(f"rewrite.progress.{key}", language, **values)
