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
from reqstudio.kept_runs import keep_and_say

if TYPE_CHECKING:
    from reqstudio.modes.chat.outcome import ChatEnding
    from reqstudio.runtime import AppRuntime


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "chat")
    parser.add_argument("message", help="what to ask")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    return run_mode(lambda runtime: _answer(runtime, args.message))


async def _answer(runtime: AppRuntime, message: str) -> int:
    from reqstudio.calls import IncompleteAnswerError
    from reqstudio.cli import user_language
    from reqstudio.errors import describe_failure
    from reqstudio.messages import text
    from reqstudio.modes.chat.engine import ChatEngine, ChatMemory
    from reqstudio.modes.chat.outcome import failed_ending
    from reqstudio.usage import UsageTracker, token_count_text

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
        # The retry's own line (why, which try) follows on stderr, from the harness.
        attempt_text.clear()
        if live:
            print("\n" + text("waits.cli_replaces", user_language()), file=sys.stderr)

    try:
        answer = await engine.reply(ChatMemory(), message, on_token=show, on_retry=retrying)
    except Exception as exc:
        partial = exc.partial if isinstance(exc, IncompleteAnswerError) else "".join(attempt_text)
        # The bundled model's bound ends its answer without a pass (4); anything else fails (1).
        code = chat_exit_code(failed_ending(exc, runtime.endpoint.embedded))
        if live and attempt_text:
            sys.stdout.write("\n")
        print(f"reqstudio: {describe_failure(exc, 'en')}", file=sys.stderr)
        if not partial:
            return code  # nothing arrived: nothing to keep
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
        return code
    if live:
        sys.stdout.write("\n")
    else:
        sys.stdout.write(answer + "\n")
    sys.stdout.flush()
    print(f"[{token_count_text(tracker)} tokens, {tracker.calls} call(s)]", file=sys.stderr)
    return chat_exit_code("answered")


def chat_exit_code(ending: ChatEnding) -> int:
    """The exit code of an answer: its ending's outcome (`reqstudio.modes.chat.outcome`), as the
    browser's mark is."""
    from reqstudio.modes.chat.outcome import chat_outcome

    return exit_code(chat_outcome(ending))
