"""`reqstudio`: the command line. Each mode adds its subcommands through a `register` function."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from reqstudio.settings import SettingsError

# Modules that expose `register(subparsers)`; a mode appears here when its issue lands.
SUBCOMMAND_MODULES = (
    "agents.chat.cli",
    "agents.srs.cli",
    "agents.react.cli",
    "agents.team.cli",
    "agents.rewrite.cli",
    "agents.review.cli",
)
# Commands that are not modes: they run without any mode's engine.
ADMIN_COMMAND_MODULES = ("reqstudio.users_cli",)


class UsageError(Exception):
    """Bad arguments or missing files: exit code 2 with one clear line."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reqstudio",
        description="ReqStudio: turn what people want into software requirements.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in ADMIN_COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    for module_name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # that mode is not part of this build
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 0
    try:
        return int(args.handler(args) or 0)
    except (UsageError, SettingsError) as exc:
        print(f"reqstudio: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("reqstudio: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    # Run through the imported module, so subcommands' `UsageError` is this same class.
    from reqstudio.cli import main as imported_main

    raise SystemExit(imported_main())
