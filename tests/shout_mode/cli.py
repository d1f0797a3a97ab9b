"""Shout mode's command: its own options and one call to `run_mode`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reqstudio.cli import EXIT_FAILED, EXIT_OK, UsageError, add_command, run_mode


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "shout", "Shout mode: the answer in capitals on stdout.")
    parser.add_argument("text", help="what to say")
    parser.add_argument("--out", type=Path, help="write the answer here")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if not args.text.strip():
        raise UsageError("the text is empty")

    async def work(runtime) -> int:
        from tests.shout_mode.engine import shout  # the engine's imports only when it runs

        try:
            answer = await shout(runtime.factory(), args.text)
        except Exception as exc:  # the tries ran out: one line, nothing written
            from reqstudio.errors import describe_failure

            print(f"reqstudio: {describe_failure(exc, 'en')}", file=sys.stderr)
            return EXIT_FAILED
        if args.out is not None:
            args.out.write_text(answer + "\n", encoding="utf-8")
        else:
            print(answer)
        return EXIT_OK

    return run_mode(work, outputs={"--out": args.out})
