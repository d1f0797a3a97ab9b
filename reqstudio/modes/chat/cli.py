"""`reqstudio chat "message"`: one Chat-mode answer on stdout.

stdout holds exactly the final answer, whole: piped or redirected, it is written once the
provider finished it; on a terminal it streams as it comes, and a try that breaks off is
followed on stderr by a line saying the text after it replaces it, and the retry's line (which
try, after what, in the locale's language). A run that fails writes
nothing more to stdout and exits 1: a partial answer, if any arrived, goes to stderr and to
a file under the data directory (`failed-runs/`), named on stderr. With the bundled offline
model an answer that reached its bound (the documented end of its answers) exits 4, finished
without a pass, kept the same way.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from reqstudio.cli import add_command, exit_code, run_mode
from reqstudio.events import BaseEvent
from reqstudio.kept_runs import keep_and_say
from reqstudio.progress import Progress, Said, Words

if TYPE_CHECKING:
    from reqstudio.modes.chat.outcome import ChatEnding
    from reqstudio.runtime import AppRuntime


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "chat")
    parser.add_argument("message", help="what to ask")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    return run_mode(lambda runtime: _answer(runtime, args.message))


class ChatWords(Words):
    """A chat answer in words: the answer streams (when `live`); a try that breaks off is
    followed by the line saying the text after the next line (the retry's, from the harness)
    replaces the text above."""

    def __init__(self, live: bool):
        self.live = live

    def streams(self, event: BaseEvent) -> bool:
        return event.name in ("answer_token", "answer_restarted")

    def lines(self, event: BaseEvent) -> Said:
        if event.name == "answer_restarted" and self.live:
            from reqstudio.cli import user_language
            from reqstudio.messages import text

            return "\n" + text("waits.cli_replaces", user_language())
        return None


async def _answer(runtime: AppRuntime, message: str) -> int:
    from reqstudio.errors import describe_failure
    from reqstudio.modes.chat.entry import ChatRequest, run
    from reqstudio.modes.chat.outcome import failed_ending
    from reqstudio.usage import UsageTracker, token_count_text

    tracker = UsageTracker()
    # a pipe or a file gets the finished answer only
    progress = Progress(ChatWords(live=sys.stdout.isatty()), live=sys.stdout.isatty())
    # The events come as the engine reports them, each shown before it goes on: a retry's
    # "replaces" line comes before the harness's line for the retry.
    async for event in run(ChatRequest(text=message), runtime.factory(), callbacks=[tracker]):
        progress.show(event)
    if progress.failed is not None:
        exc, partial = progress.failed.error, progress.failed.partial
        # The bundled model's bound ends its answer without a pass (4); anything else fails (1).
        code = chat_exit_code(failed_ending(exc, runtime.endpoint.embedded))
        if progress.live and progress.text:
            progress.write_out("\n")
        progress.say(f"reqstudio: {describe_failure(exc, 'en')}")
        if not partial:
            return code  # nothing arrived: nothing to keep
        progress.say(f"  partial answer (not complete): {partial}")
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
        return code
    answer = progress.finished.result
    progress.write_out("\n" if progress.live else answer + "\n")
    progress.say(f"[{token_count_text(tracker)} tokens, {tracker.calls} call(s)]")
    return chat_exit_code("answered")


def chat_exit_code(ending: ChatEnding) -> int:
    """The exit code of an answer: its ending's outcome (`reqstudio.modes.chat.outcome`), as the
    browser's mark is."""
    from reqstudio.modes.chat.outcome import chat_outcome

    return exit_code(chat_outcome(ending))
