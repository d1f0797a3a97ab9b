"""`reqstudio srs generate --interactive`: the list at each pause on stderr, the user's
commands from stdin (the command language of `reqstudio.modes.srs.decisions`)."""

from __future__ import annotations

import sys

from reqstudio.cli import say
from reqstudio.messages import text
from reqstudio.modes.srs.events import DecisionApplied, Paused


def pause_table(paused: Paused, language: str) -> str:
    """The list at a pause, for the terminal: id, score, status, text."""
    head = text("cli.srs.pause.head", language, round=paused.round)
    width = max((len(r.id) for r in paused.requirements), default=5)
    lines = [head]
    for row in paused.requirements:
        score = "" if row.score is None else f"{row.score:+d}" if row.score else "0"
        lines.append(f"  {row.id:<{width}}  {score:>2}  {row.status:<7}  {row.content}")
    lines.append(text("cli.srs.pause.commands", language))
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


async def read_decision(language: str):
    """Commands from stdin up to an empty line or the end of the input; a line that is no
    command is named and the commands are asked for again."""
    import asyncio

    from reqstudio.modes.srs.decisions import DecisionError, parse_commands

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
            say(f"reqstudio: {refused.message(language)}")
