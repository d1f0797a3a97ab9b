"""`reqstudio`: the command line. Each mode adds its subcommands through a `register` function.

The commands are listed in the mode registry (`reqstudio.commands`, re-exported here), each
with the module that registers it; that module is imported only when its command runs (or asks for its own help), so `reqstudio review` never imports
Team, and `reqstudio --help` imports no mode at all. A mode's CLI module keeps its heavy
imports (its engine, LangChain, the model client) inside the function that runs the command.

The harness every mode's CLI uses lives here too, so a mode's CLI is its own options and one
call to `run_mode`: the exit codes (`EXIT_*`, the same for every mode), `UsageError` (exit 2,
one line), the shared options (`add_lang_option`, `add_quiet_option`), output paths checked
before any model is called (`check_writable`), the settings and the model runtime started and
stopped around the run, each retry of a model call as a line on stderr in the user's language
(`reqstudio.waits`), the `reqstudio` log records on stderr (`show_log_records`), Ctrl-C
(exit 130), and writes that fall back to another folder when the asked path fails
(`write_with_fallback`). This module imports only the standard library: `--help` stays fast.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import inspect
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reqstudio import commands
from reqstudio.commands import COMMANDS as COMMANDS
from reqstudio.commands import Command as Command
from reqstudio.commands import register_command as register_command
from reqstudio.failures import FailureError
from reqstudio.messages import language_code
from reqstudio.outcomes import Outcome

if TYPE_CHECKING:
    from reqstudio.runtime import AppRuntime
    from reqstudio.settings import Settings

_IMPORTED_AT = time.monotonic()

# The exit codes of every command.
EXIT_OK = 0  # complete
EXIT_FAILED = 1  # failed (after the retries); any result written is whole, or none was
EXIT_USAGE = 2  # bad input or an unusable output path, refused before any model call
EXIT_INCOMPLETE = 3  # failed midway; the incomplete result was written, marked as such
EXIT_WITHOUT_PASS = 4  # finished and written, but not passed (`stop_reason` in the JSON says why)
EXIT_INTERRUPTED = 130  # Ctrl-C

# A finished run's exit code is its outcome's (`reqstudio.outcomes`), the same outcome the
# browser's mark is read from: 0 only where the browser shows the run as passed or complete.
EXIT_CODES: dict[Outcome, int] = {
    Outcome.PASSED: EXIT_OK,
    Outcome.WITHOUT_PASS: EXIT_WITHOUT_PASS,
    Outcome.INCOMPLETE: EXIT_INCOMPLETE,
    Outcome.FAILED: EXIT_FAILED,
    Outcome.INTERRUPTED: EXIT_INTERRUPTED,
}


def exit_code(outcome: Outcome) -> int:
    """The exit code of a run that ended with `outcome`."""
    return EXIT_CODES[outcome]


# The commands, each mode's among them, are listed in the mode registry
# (`reqstudio.commands`), which the settings read too: a mode's roles come with its command.


# --- the harness ------------------------------------------------------------------------


class UsageError(Exception):
    """Bad arguments or missing files: exit code 2 with one clear line."""


def add_command(
    subparsers: argparse._SubParsersAction, name: str, description: str | None = None
) -> argparse.ArgumentParser:
    """A mode's command parser; its line in `reqstudio --help` is the registry's summary."""
    summary = next(command.summary for command in commands.COMMANDS if command.name == name)
    return subparsers.add_parser(name, help=summary, description=description)


def read_input(
    flag: str, path: Path, load: Callable[[Path], str], *, need_text: bool = False
) -> str:
    """An input document's text by `load`, or exit 2 with one line naming `flag`: a document
    that cannot be used (a ValueError, its failure or its text saying why) or, with `need_text`, one
    that holds no text."""
    try:
        text = load(path)
    except ValueError as exc:
        said = exc.message("en") if isinstance(exc, FailureError) else exc
        raise UsageError(f"{flag}: {said}") from None
    if need_text and not text.strip():
        raise UsageError(f"{flag}: {path} holds no text")
    return text


def say(text: str) -> None:
    """One progress or error line on stderr, at once."""
    print(text, file=sys.stderr, flush=True)


def add_lang_option(parser: argparse.ArgumentParser, what: str, default: str | None = None) -> None:
    """`--lang zh|en`: the language of `what`; without a default, the locale's (`user_language`)."""
    where = default or "from LC_ALL / LC_MESSAGES / LANG"
    parser.add_argument(
        "--lang",
        choices=("zh", "en"),
        default=default,
        help=f"language of {what} (default: {where})",
    )


def add_quiet_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--quiet", action="store_true", help=f"no {what} on stderr, only errors")


def show_log_records(quiet: bool = False) -> None:
    """The `reqstudio` loggers' warnings (each retry, named) on stderr; with --quiet only errors."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("reqstudio")
    logger.addHandler(handler)
    logger.setLevel(logging.ERROR if quiet else logging.WARNING)


def load_mode_settings() -> Settings:
    """The settings, read when a command runs (a bad one: exit 2 with one line, in `main`)."""
    from reqstudio.settings import load_settings

    return load_settings()


def run_mode(
    work: Callable[[AppRuntime], Awaitable[int | None] | int | None],
    *,
    settings: Settings | None = None,
    outputs: dict[str, Path | None] | None = None,
    language: str | None = None,
    quiet: bool = False,
) -> int:
    """Run a mode's command: check the output paths (`{flag: path}`, exit 2 before any model
    call), start the model runtime (the provider, or the embedded model), run `work(runtime)`
    (a coroutine runs on a fresh event loop), stop the runtime, and give the exit
    code. Bad settings, an unusable embedded model and Ctrl-C end in `main`.
    Every retry of a model call the run makes is a line on stderr in `language` (default:
    the locale's), unless `quiet`."""
    import asyncio
    import contextlib

    from reqstudio.runtime import AppRuntime
    from reqstudio.waits import stderr_retries, watching

    settings = load_mode_settings() if settings is None else settings
    for flag, path in (outputs or {}).items():
        check_writable(path, flag)
    retries = stderr_retries(language or user_language(), say)
    with AppRuntime(settings) as runtime, contextlib.nullcontext() if quiet else watching(retries):
        outcome = work(runtime)
        if inspect.isawaitable(outcome):
            outcome = asyncio.run(outcome)
    return int(outcome or EXIT_OK)


def write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def fallback_folders(first: Path) -> Iterator[Path]:
    """`first`, then the system's temp folder, looked up only when `first` did not take the
    write (finding it writes and removes a probe file)."""
    yield first
    import tempfile

    yield Path(tempfile.gettempdir())


def write_with_fallback(
    path: Path, text: str, folders: Iterable[Path], name: str | None = None
) -> tuple[Path | None, OSError | None]:
    """Write `text` to `path`; if that fails (disk full, the folder gone or read-only since it
    was checked), to `name` (default: the same name) in the first of `folders` that takes it.
    Where it went (None: nowhere) and why `path` failed (None: it did not)."""
    try:
        write_text(path, text)
        return path, None
    except OSError as exc:
        problem = exc
    for folder in folders:
        fallback = folder / (name or path.name)
        try:
            if fallback.resolve() == path.resolve():
                continue
            folder.mkdir(parents=True, exist_ok=True)
            write_text(fallback, text)
        except OSError:
            continue
        return fallback, problem
    return None, problem


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
            return language_code(value)
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


def installed_version() -> str:
    """The installed distribution's version (a checkout without an install: "unknown")."""
    from importlib import metadata

    try:
        return metadata.version("reqstudio")
    except metadata.PackageNotFoundError:
        return "unknown"


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser for `argv`: the chosen command's module registers its real parser; every
    other command is only a name and a summary, so its module is not imported."""
    parser = argparse.ArgumentParser(
        prog="reqstudio",
        description="ReqStudio: turn what people want into software requirements.",
    )
    parser.add_argument("--version", action="version", version=f"reqstudio {installed_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = chosen_command(argv)
    for command in commands.COMMANDS:
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
    # model client loaded that took 0.4-1.3 s here. The `reqstudio` command skips the
    # teardown altogether (`reqstudio.entry`); for a caller of `main` that exits normally,
    # the heap is frozen instead of walked (atexit handlers still run).
    atexit.register(gc.freeze)
    try:
        return int(args.handler(args) or EXIT_OK)
    except UsageError as exc:
        print(f"reqstudio: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        if not _is_usage_problem(exc):
            raise
        print(f"reqstudio: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("reqstudio: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _is_usage_problem(exc: Exception) -> bool:
    """A bad setting, or an embedded model that cannot start: the set-up, not the run. Their
    modules are loaded by the command that runs, not for --help, so they are only looked up."""
    settings, local_model = (sys.modules.get(f"reqstudio.{m}") for m in ("settings", "local_model"))
    return (settings is not None and isinstance(exc, settings.SettingsError)) or (
        local_model is not None and isinstance(exc, local_model.EmbeddedModelUnavailable)
    )


if __name__ == "__main__":
    # Run through the imported module, so subcommands' `UsageError` is this same class.
    from reqstudio.cli import main as imported_main

    raise SystemExit(imported_main())
