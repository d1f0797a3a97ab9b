"""What an Agent's tool step shows, in words a reader takes in at a glance: the arguments as
"name: value" lines, the result as text, or (when the tool answered JSON or MCP content)
as a short list of its fields and items; long values are shortened. The whole result stays
one click away, folded in a step of its own, as the model was shown it."""

from __future__ import annotations

import json
from typing import Any

from reqstudio.tools.mcp_tools import content_to_text
from reqstudio.web.texts import Catalog

tr = Catalog("agent")

VALUE_CHARS = 160  # a value longer than this is cut, with "…"
TEXT_CHARS = 800  # a plain-text result longer than this is cut
ITEMS = 8  # items of a list shown; the rest counted


def shortened(text: str, limit: int) -> str:
    text = " ".join(str(text).split()) if limit <= VALUE_CHARS else str(text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def plain_value(value: Any) -> str:
    """A value as a reader reads it: text as it is, a number or a yes/no as written, a
    nested structure as its own "name: value" pairs on one line."""
    if isinstance(value, str):
        return shortened(value, VALUE_CHARS)
    if isinstance(value, bool):
        return tr("yes") if value else tr("no")
    if value is None:
        return "—"
    if isinstance(value, dict):
        pairs = "; ".join(f"{key}: {plain_value(item)}" for key, item in value.items())
        return shortened(pairs, VALUE_CHARS)
    if isinstance(value, list):
        return shortened(", ".join(plain_value(item) for item in value), VALUE_CHARS)
    return str(value)


def pair(key: str, value: Any) -> str:
    """One argument or field as the tool takes or gives it, in code marks: its name and
    value are the tool's words, not the page's (an English name on a Chinese page, a value
    as the tool wrote it)."""
    return "`" + f"{key}: {plain_value(value)}".replace("`", "'") + "`"


def plain_arguments(arguments: dict[str, Any]) -> str:
    """The call's arguments on one line ("timezone: UTC; query: …"), for the reasoning step."""
    if not arguments:
        return tr("no_arguments")
    return "; ".join(pair(key, value) for key, value in arguments.items())


def arguments_block(arguments: dict[str, Any]) -> str:
    """The call's arguments as a list under a heading, for the tool's own step."""
    if not arguments:
        return f"**{tr('arguments')}**: {tr('no_arguments')}"
    lines = [f"- {pair(key, value)}" for key, value in arguments.items()]
    return f"**{tr('arguments')}**\n\n" + "\n".join(lines)


def _parsed(text: str) -> Any:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if isinstance(data, list) and data and all(isinstance(b, dict) and "type" in b for b in data):
        joined = content_to_text(data)  # MCP content blocks: their text
        return _parsed(joined) if joined.strip().startswith(("{", "[")) else joined
    return data


def readable_result(text: str) -> tuple[str, bool]:
    """The result in words, and whether it differs from what the model was shown (then the
    whole of it is worth keeping folded beside it)."""
    data = _parsed(text)
    if data is None or isinstance(data, int | float | bool):
        shown = shortened(text, TEXT_CHARS)
        return shown, shown != text.strip()
    if isinstance(data, str):
        return shortened(data, TEXT_CHARS), True
    if isinstance(data, dict):
        lines = [f"- {pair(key, value)}" for key, value in data.items()]
        return "\n".join(lines) or tr("empty_result"), True
    items = [
        f"{number}. `" + plain_value(item).replace("`", "'") + "`"
        for number, item in enumerate(data[:ITEMS], 1)
    ]
    if len(data) > ITEMS:
        items.append(tr("more_items", count=len(data) - ITEMS))
    return "\n".join(items) or tr("empty_result"), True


def full_result(text: str) -> str:
    """The whole result, as the model was shown it (JSON laid out), for the folded step."""
    try:
        data = json.loads(text)
    except ValueError:
        return f"```text\n{text}\n```"
    return f"```json\n{json.dumps(data, ensure_ascii=False, indent=1)}\n```"
