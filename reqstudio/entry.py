"""The `reqstudio` command's entry point: `main`, then an exit without the interpreter's teardown.

After a run, CPython's finalization deallocates every module and object LangChain, LangGraph,
pydantic and the model client loaded: 40-170 ms on this machine, after the output was written,
paid by every command. mypy ends the same way (`--fast-exit`). Nothing is cut short: the exit
hook is registered before anything else, so it runs after every other atexit handler (the
logging flush, the embedded model's stop, temporary files), and after the interpreter has
joined its non-daemon threads; it flushes stdout and stderr, then ends the process with the
command's exit code. An exception that escapes `main` takes the normal way out.

Before `main`, young collections are set to come every 10 000 net allocations instead of
CPython's 700 (as `reqstudio serve` sets them, `reqstudio.runtime.tune_garbage_collector`):
importing LangChain and the model client made about 400 collections at 700, 0.24 s of CPU
before `srs generate` sent its first request; at 10 000, about 30, 0.10 s.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys

_exit_code: list[int] = []
YOUNG_COLLECTION_EVERY = 10_000  # net allocations between young collections (CPython: 700)


def _end_now() -> None:
    """The last atexit handler: flush the standard streams and end with `main`'s code."""
    if not _exit_code:
        return  # `main` did not return (an exception is on its way out): exit normally
    logging = sys.modules.get("logging")
    if logging is not None:  # its own handler ran already, unless it registered before this one
        logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(_exit_code[0])


def run() -> None:
    """`reqstudio ARGS` as a command: main's exit code, without the interpreter's teardown."""
    atexit.register(_end_now)  # first registered, so last to run
    gc.set_threshold(YOUNG_COLLECTION_EVERY, *gc.get_threshold()[1:])
    from reqstudio.cli import main

    code = main()
    _exit_code.append(code)
    sys.exit(code)
