"""`reqstudio chat "message"`: one Chat-mode answer on stdout.

stdout holds exactly the final answer, whole: piped or redirected, it is written once the
provider finished it; on a terminal it streams as it comes, and a try that breaks off is
followed by a line on stderr saying the text after it replaces it. A run that fails writes
nothing more to stdout and exits 1: a partial answer, if any arrived, goes to stderr and to
a file under the data directory (`failed-runs/`), named on stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from reqstudio.cli import EXIT_FAILED, EXIT_OK, add_command, run_mode
from reqstudio.kept_runs import keep_and_say

if TYPE_CHECKING:
    from reqstudio.runtime import AppRuntime


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "chat")
    parser.add_argument("message", help="what to ask")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    return run_mode(lambda runtime: _answer(runtime, args.message))


async def _answer(runtime: AppRuntime, message: str) -> int:
    from agents.chat.engine import ChatEngine, ChatMemory
    from reqstudio.calls import IncompleteAnswerError
    from reqstudio.errors import describe_failure
    from reqstudio.usage import UsageTracker

    tracker = UsageTracker()
    engine = ChatEngine(runtime.factory(), callbacks=[tracker])
    live = sys.stdout.isatty()  # a pipe or a file gets the finished answer only
    attempt_text: list[str] = []  # what the current try has written so far

    def show(token: str) -> None:
        attempt_text.append(token)
        if live:
            sys.stdout.write(token)
            sys.stdout.flush()

    def retrying(attempt: int, error: BaseException, wait: float) -> None:
        attempt_text.clear()
        replaces = ", the text after this line replaces the text above" if live else ""
        print(
            f"\nreqstudio: the answer broke off ({describe_failure(error, 'en')}); "
            f"try {attempt} in {wait:.0f} s{replaces}",
            file=sys.stderr,
        )

    try:
        answer = await engine.reply(ChatMemory(), message, on_token=show, on_retry=retrying)
    except Exception as exc:
        partial = exc.partial if isinstance(exc, IncompleteAnswerError) else "".join(attempt_text)
        if live and attempt_text:
            sys.stdout.write("\n")
        print(f"reqstudio: {describe_failure(exc, 'en')}", file=sys.stderr)
        if not partial:
            return EXIT_FAILED  # nothing arrived: nothing to keep
        print(f"  partial answer (not complete): {partial}", file=sys.stderr)
        record = {
            "question": message,
            "error": describe_failure(exc, "en"),
            "error_zh": describe_failure(exc, "zh"),
            "error_type": type(exc).__name__,
            "fault": getattr(exc, "reason", None),
            "partial_answer": partial,
            "usage": tracker.as_dict(),
        }
        keep_and_say(runtime.settings.data_dir, "chat", record, what="the partial answer")
        return EXIT_FAILED
    if live:
        sys.stdout.write("\n")
    else:
        sys.stdout.write(answer + "\n")
    sys.stdout.flush()
    print(f"[{tracker.total_tokens} tokens, {tracker.calls} call(s)]", file=sys.stderr)
    return EXIT_OK
