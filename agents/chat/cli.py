"""`reqstudio chat "message"`: one Chat-mode answer, streamed to stdout."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reqstudio.runtime import AppRuntime


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("chat", help="ask one question in Chat mode")
    parser.add_argument("message", help="what to ask")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from reqstudio.runtime import AppRuntime  # the model client: only when a command runs
    from reqstudio.settings import load_settings

    settings = load_settings()
    with AppRuntime(settings) as runtime:
        return asyncio.run(_answer(runtime, args.message))


async def _answer(runtime: AppRuntime, message: str) -> int:
    from agents.chat.engine import ChatEngine, ChatMemory
    from reqstudio.errors import describe_failure
    from reqstudio.usage import UsageTracker

    tracker = UsageTracker()
    engine = ChatEngine(runtime.factory(), callbacks=[tracker])

    def show(token: str) -> None:
        sys.stdout.write(token)
        sys.stdout.flush()

    def retrying(attempt: int, error: BaseException, wait: float) -> None:
        print(
            f"\nreqstudio: the answer broke off ({describe_failure(error, 'en')}); "
            f"try {attempt} in {wait:.0f} s, the text after this line replaces the text above",
            file=sys.stderr,
        )

    try:
        await engine.reply(ChatMemory(), message, on_token=show, on_retry=retrying)
    except Exception as exc:
        print(f"\nreqstudio: {describe_failure(exc, 'en')}", file=sys.stderr)
        return 1
    print()
    print(f"[{tracker.total_tokens} tokens, {tracker.calls} call(s)]", file=sys.stderr)
    return 0
