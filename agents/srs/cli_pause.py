"""`reqstudio srs generate --interactive`: the list at each pause on stderr, the user's
commands from stdin (the command language of `agents.srs.decisions`)."""

from __future__ import annotations

import sys

from agents.srs.events import DecisionApplied, Paused
from reqstudio.cli import say

COMMAND_HELP = (
    "edit ID text | remove ID | add text | score ID -2..2 -- one a line; an empty line "
    "(or the end of the input) ends them, nothing at all accepts the list",
    "edit ID 文本 | remove ID | add 文本 | score ID -2..2 —— 每行一条；空行（或输入结束）"
    "表示输入完毕，什么都不输入即接受列表",
)


def pause_table(paused: Paused, zh: bool) -> str:
    """The list at a pause, for the terminal: id, score, status, text."""
    head = (
        f"[User] 第 {paused.round} 轮 ReqClarify 之后的需求列表（评分、状态）："
        if zh
        else f"[User] round {paused.round}: the list after ReqClarify (score, status):"
    )
    width = max((len(r.id) for r in paused.requirements), default=5)
    lines = [head]
    for row in paused.requirements:
        score = "" if row.score is None else f"{row.score:+d}" if row.score else "0"
        lines.append(f"  {row.id:<{width}}  {score:>2}  {row.status:<7}  {row.content}")
    lines.append(COMMAND_HELP[1] if zh else COMMAND_HELP[0])
    return "\n".join(lines)


def describe_decision(event: DecisionApplied) -> str:
    c = event.changes
    if c.get("accepted_as_is"):
        return f"[User] round {event.round}: list accepted as it is"
    parts = [
        f"{label} {', '.join(c[key]) if isinstance(c[key], list) else c[key]}"
        for key, label in (("edited", "edited"), ("removed", "removed"), ("added", "added"))
        if c.get(key)
    ]
    parts += [f"score {rid} {score:+d}" for rid, score in (c.get("scores") or {}).items()]
    return f"[User] round {event.round}: " + "; ".join(parts) + f" ({len(event.requirements)} now)"


async def read_decision(zh: bool):
    """Commands from stdin up to an empty line or the end of the input; a line that is no
    command is named and the commands are asked for again."""
    import asyncio

    from agents.srs.decisions import DecisionError, parse_commands

    while True:
        if sys.stdin.isatty():
            print("> ", end="", file=sys.stderr, flush=True)
        lines: list[str] = []
        while True:
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line.strip():  # an empty line, or the end of the input
                break
            lines.append(line.rstrip("\n"))
        try:
            return parse_commands("\n".join(lines))
        except DecisionError as refused:
            say(f"reqstudio: {refused.message('zh' if zh else 'en')}")
