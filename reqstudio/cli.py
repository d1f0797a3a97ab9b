"""`reqstudio`: the command line. Each mode adds its subcommands through a `register` function.

The commands are listed here, each with the module that registers it; that module is imported
only when its command runs (or asks for its own help), so `reqstudio review` never imports
Team, and `reqstudio --help` imports no mode at all. A mode's CLI module keeps its heavy
imports (its engine, LangChain, the model client) inside the function that runs the command.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_IMPORTED_AT = time.monotonic()


@dataclass(frozen=True)
class Command:
    """One `reqstudio` command: its name, its line in `reqstudio --help`, and the module whose
    `register(subparsers)` adds its parser (imported only when the command is used)."""

    name: str
    summary: str
    module: str


COMMANDS: list[Command] = [
    Command("chat", "ask one question in Chat mode", "agents.chat.cli"),
    Command(
        "srs",
        "generate, evaluate and compare SRS documents (multi-agent pipeline)",
        "agents.srs.cli",
    ),
    Command(
        "agent",
        "ask one question in Agent mode (reasoning with web search and MCP tools)",
        "agents.react.cli",
    ),
    Command("team", "give a requirements task to a team of agents", "agents.team.cli"),
    Command(
        "rewrite",
        "rewrite a document with clarifications: outline, sections in order, review",
        "agents.rewrite.cli",
    ),
    Command(
        "review",
        "review a requirements document round after round and fix what the reviewers find",
        "agents.review.cli",
    ),
    Command(
        "check",
        "check a requirements document with deterministic rules (no model needed)",
        "agents.check.cli",
    ),
    # not a mode: the sign-in accounts, without any mode's engine
    Command("users", "manage sign-in accounts (passwords hashed)", "reqstudio.users_cli"),
]


def register_command(command: Command) -> None:
    """Add a mode's command (a mode registered at run time, e.g. by a test or a plugin)."""
    COMMANDS[:] = [c for c in COMMANDS if c.name != command.name] + [command]


class UsageError(Exception):
    """Bad arguments or missing files: exit code 2 with one clear line."""


def check_writable(path: Path | None, flag: str) -> None:
    """Refuse an output path that cannot be written, before any model is called."""
    if path is None:
        return
    if path.is_dir():
        raise UsageError(f"{flag}: {path} is a folder, not a file")
    folder = path.parent
    if not folder.is_dir():
        raise UsageError(f"{flag}: the folder {folder} does not exist")
    existed = path.exists()
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UsageError(f"{flag}: {path} cannot be written ({exc.strerror})") from None
    if not existed:
        path.unlink()


def user_language(environ: dict[str, str] | None = None) -> str:
    """zh when the locale says Chinese (LC_ALL, then LC_MESSAGES, then LANG), else en."""
    environ = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def partial_path(path: Path) -> Path:
    """Where an incomplete result is kept beside `path`: `name.partial.ext`."""
    return path.with_name(f"{path.stem}.partial{path.suffix}")


def process_started() -> float:
    """When this process started, on `time.monotonic`'s scale, so a time limit can count from
    launch (the interpreter, the imports and the set-up before a run included). Linux reads
    it from /proc (10 ms steps); elsewhere it is when this module was first imported."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        started_after_boot = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22, starttime
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started_after_boot
    except (OSError, ValueError, IndexError, AttributeError):
        return _IMPORTED_AT
    now = time.monotonic()
    # A start before this module's import, by less than a minute; else /proc's clock is not ours.
    plausible = now - _IMPORTED_AT <= age <= now - _IMPORTED_AT + 60
    return now - age if plausible else _IMPORTED_AT


def chosen_command(argv: Sequence[str]) -> str | None:
    """The command named in `argv` (the first argument that is not an option), if any."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser for `argv`: the chosen command's module registers its real parser; every
    other command is only a name and a summary, so its module is not imported."""
    parser = argparse.ArgumentParser(
        prog="reqstudio",
        description="ReqStudio: turn what people want into software requirements.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = chosen_command(argv)
    for command in COMMANDS:
        if command.name == chosen:
            importlib.import_module(command.module).register(subparsers)
        else:
            subparsers.add_parser(command.name, help=command.summary)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 0
    # At exit CPython collects the whole heap once more: with LangChain, LangGraph and the
    # model client loaded that took 0.4-0.8 s here, after the output was written. The process
    # is ending (atexit handlers still run), so freeze the heap instead of walking it.
    atexit.register(gc.freeze)
    try:
        return int(args.handler(args) or 0)
    except UsageError as exc:
        print(f"reqstudio: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        # Settings (pydantic-settings) are loaded by the command that runs, not for --help.
        from reqstudio.settings import SettingsError

        if not isinstance(exc, SettingsError):
            raise
        print(f"reqstudio: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("reqstudio: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    # Run through the imported module, so subcommands' `UsageError` is this same class.
    from reqstudio.cli import main as imported_main

    raise SystemExit(imported_main())
