"""`reqstudio srs generate | evaluate | experiment`: SRS mode on the command line.

Progress goes to stderr; results (the SRS, the evaluation JSON, the means table) to stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reqstudio.cli import (
    EXIT_FAILED,
    EXIT_OK,
    UsageError,
    add_command,
    add_lang_option,
    add_quiet_option,
    check_writable,
    exit_code,
    fallback_folders,
    load_mode_settings,
    read_input,
    run_mode,
    say,
    show_log_records,
    user_language,
    write_with_fallback,
)
from reqstudio.events import BaseEvent
from reqstudio.kept_runs import keep_and_say
from reqstudio.modes.srs.cli_pause import describe_decision, pause_table, read_decision
from reqstudio.modes.srs.documents import ReferenceDocumentError, load_reference
from reqstudio.modes.srs.events import (
    DecisionApplied,
    DocumentContinued,
    DocumentReset,
    DocumentToken,
    NodeFinished,
    NodeStarted,
    NodeToken,
    Notice,
    RunFailed,
    RunFinished,
    SrsResult,
    Trail,
)
from reqstudio.modes.srs.experiment_cli import add_arguments as add_experiment_arguments
from reqstudio.modes.srs.outcome import SrsEnding, srs_outcome
from reqstudio.modes.srs.state import ABLATIONS
from reqstudio.progress import Progress, Said, Words

if TYPE_CHECKING:
    from reqstudio.llm import ModelFactory
    from reqstudio.modes.srs.engine import SrsRequest
    from reqstudio.runtime import AppRuntime
    from reqstudio.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    srs = add_command(subparsers, "srs")
    srs.set_defaults(handler=_missing_subcommand)
    commands = srs.add_subparsers(dest="srs_command", metavar="SUBCOMMAND")

    generate = commands.add_parser("generate", help="write an SRS from a requirements text")
    generate.add_argument(
        "--input", required=True, type=Path, help="requirements (.md .txt .pdf .docx)"
    )
    generate.add_argument("--reference", type=Path, help="reference SRS ReqClarify scores against")
    generate.add_argument("--ablation", choices=ABLATIONS, default="none")
    generate.add_argument(
        "--max-iterations",
        type=int,
        help="the seed's iteration bound (default SRS_MAX_ITERATIONS, 5): ReqParse counts as "
        "iteration 1, so N gives N-1 ReqExplore/ReqClarify rounds (at least 1)",
    )
    generate.add_argument(
        "--out",
        type=Path,
        help="write the SRS here instead of stdout; its traceability matrix also goes beside "
        "it as CSV, <name>-trace.csv (srs.md: srs-trace.csv)",
    )
    generate.add_argument(
        "--trace",
        type=Path,
        metavar="CSV",
        help="write the traceability matrix (CSV) here (default: beside --out)",
    )
    generate.add_argument("--log", type=Path, help="write the interaction log (JSON) here")
    generate.add_argument(
        "--interactive",
        action="store_true",
        help="after each ReqClarify round show the list with its scores (stderr) and read your "
        "changes from stdin, one command a line, an empty line ending them: edit ID text | "
        "remove ID | add text | score ID -2..2 (nothing, or the end of the input, accepts)",
    )
    add_quiet_option(generate, "progress or [日志] lines")
    add_lang_option(generate, "the seed's [日志] lines")
    generate.set_defaults(handler=generate_command)

    evaluate = commands.add_parser("evaluate", help="score an SRS against a reference SRS")
    evaluate.add_argument("--reference", required=True, type=Path)
    evaluate.add_argument("--candidate", required=True, type=Path)
    evaluate.set_defaults(handler=evaluate_command)

    experiment = commands.add_parser(
        "experiment",
        help="the quality benchmark: every case under every ablation, each SRS judged",
        description="Each folder under --cases holding input.md and reference.md is a case. "
        "Exit code 1 if any run failed (its row says why); the others still run, and "
        "--resume runs the failed ones again.",
    )
    add_experiment_arguments(experiment)
    experiment.set_defaults(handler=experiment_command)


def _missing_subcommand(args: argparse.Namespace) -> int:
    raise UsageError("srs: choose a subcommand: generate, evaluate or experiment")


def _read(path: Path, flag: str, max_mb: float) -> str:
    return read_input(flag, path, lambda path: load_reference(path, max_mb=max_mb).text)


def _max_iterations(value: int | None, settings: Settings) -> int:
    value = settings.srs_max_iterations if value is None else value
    if not 1 <= value <= 20:
        raise UsageError(f"--max-iterations must be between 1 and 20, not {value}")
    return value


# --- generate --------------------------------------------------------------------------


def generate_command(args: argparse.Namespace) -> int:
    # The engine, LangGraph and the model client: imported only when the command runs.
    from reqstudio.modes.srs.engine import SrsRequest

    settings = load_mode_settings()
    request = SrsRequest(
        user_input=_read(args.input, "--input", settings.reference_max_mb),
        reference_srs=_read(args.reference, "--reference", settings.reference_max_mb)
        if args.reference
        else "",
        ablation=args.ablation,
        max_iterations=_max_iterations(args.max_iterations, settings),
        pause_after_round=args.interactive,
    )
    check_writable(args.out, "--out")
    trace_path = args.trace or trace_csv_path(args.out)
    check_writable(trace_path, "--trace")
    check_writable(args.log, "--log")
    show_log_records(args.quiet)
    language = args.lang or user_language()
    return run_mode(
        lambda runtime: _generate(
            runtime.factory(),
            request,
            args.out,
            args.log,
            trace_path=trace_path,
            quiet=args.quiet,
            language=language,
            fallback_dir=settings.data_dir,
        ),
        settings=settings,
        language=language,
        quiet=args.quiet,
    )


_progress = say


def trace_csv_path(out: Path | None) -> Path | None:
    """Where the traceability matrix goes beside the SRS: srs.md -> srs-trace.csv."""
    return None if out is None else out.with_name(f"{out.stem}-trace.csv")


def _save(path: Path, text: str, fallback_dir: Path, suffix: str) -> tuple[Path, str | None]:
    """Write `text` to `path`; if that fails, to `srs-<time><suffix>` in the data folder (or
    the temp folder). Returns where it went and why `path` failed (None if it did not)."""
    name = f"srs-{time.strftime('%Y%m%d-%H%M%S')}{suffix}"
    where, problem = write_with_fallback(path, text, fallback_folders(fallback_dir), name)
    why = None if problem is None else f"{type(problem).__name__}: {problem.strerror or problem}"
    if where is None:
        raise OSError(why)
    return where, why


class SrsWords(Words):
    """The SRS run's events in words on stderr, in the run's `language` (the trail, notes);
    the document streams as DocGenerate writes it."""

    def __init__(self, language: str):
        self.language = language

    def streams(self, event: BaseEvent) -> bool:
        return isinstance(event, DocumentToken | DocumentReset)

    def lines(self, event: BaseEvent) -> Said:
        match event:
            case Trail():
                return event.text(self.language)
            case Notice():
                return f"note: {event.text(self.language)}"
            case NodeStarted(agent=agent, round=number):
                looping = agent in ("ReqExplore", "ReqClarify")
                return f"[{agent}]" + (f" round {number}" if looping else "") + " ..."
            case NodeFinished():
                return _describe_node(event)
            case DocumentReset(attempt=attempt):
                return f"[DocGenerate] the stream broke; writing the document again ({attempt})"
            case DocumentContinued(count=count):
                return (
                    "[DocGenerate] the document hit the model's length limit; asking the "
                    f"model to continue it ({count})"
                )
        return None


def _describe_node(event: NodeFinished) -> str:
    c = event.counts
    looping = event.agent in ("ReqExplore", "ReqClarify")
    parts = [
        f"[{event.agent}]{f' round {event.round}' if looping else ''}: {c['total']} requirements "
        f"({c['frozen']} frozen, {c['removed']} removed, {c['unfrozen']} open)"
    ]
    if event.scores:
        parts.append(f"{len(event.scores)} scored")
    if event.frozen_now:
        parts.append("frozen now " + ", ".join(event.frozen_now))
    if event.removed_now:
        parts.append("removed now " + ", ".join(event.removed_now))
    if event.skipped:
        parts.append("nothing open, no model call")
    else:
        parts.append(f"{event.seconds:.1f} s, {event.input_tokens}+{event.output_tokens} tokens")
    return " · ".join(parts)


def _warm_up(reference: str, checker: bool) -> None:
    """What the run needs after its second answer, done while that answer is awaited: the
    checker (imports and word lists, ~0.15 s) when a log will carry its summary, and the
    reference parsed into the sections ReqExplore's new items are traced to (from its second
    round on)."""
    if checker:
        from reqstudio.check.engine import check_document

        check_document("# SRS\n\n## 1 Scope\n\nThe system shall start.\n")
    if reference.strip():
        from reqstudio.check.trace import content_words
        from reqstudio.modes.srs.trace import reference_sections

        for section in reference_sections(reference)[0]:
            content_words(section)


def _write_log(
    path: Path | None, result: SrsResult | None, fallback_dir: Path, request: str = ""
) -> bool:
    """Write the log JSON; False (and where it went instead) if `path` could not be written."""
    if path is None or result is None:
        return True
    data = result.model_dump(mode="json", exclude={"srs_markdown"})
    if result.srs_markdown.strip():
        # the deterministic checker's summary of the document (`reqstudio check --request`)
        from reqstudio.check.engine import check_document

        data["check"] = check_document(result.final_markdown(), request=request).summary()
    text = json.dumps(data, ensure_ascii=False, indent=2)
    where, problem = _save(path, text, fallback_dir, "-log.json")
    if problem:
        _progress(f"reqstudio: --log: could not write {path} ({problem}); the log is in {where}")
        return False
    return True


def _write_trace(path: Path | None, result: SrsResult, fallback_dir: Path) -> bool:
    """Write the traceability matrix as CSV; False if `path` could not be written."""
    if path is None:
        return True
    from reqstudio.modes.srs.trace import document_language

    text = result.trace_csv(document_language(result.srs_markdown))
    where, problem = _save(path, text, fallback_dir, "-trace.csv")
    if problem:
        _progress(f"reqstudio: --trace: could not write {path} ({problem}); it is in {where}")
        return False
    return True


def _keep_failed_run(
    event: RunFailed, partial_document: str, data_dir: Path, *, log_written: bool
) -> None:
    """What a failed run produced (the interaction log so far, the requirement list, the
    document as far as DocGenerate wrote it) in `<data dir>/failed-runs/`, named on stderr.
    With `--log` written, the log is there and only a partial document is kept here."""
    partial = event.partial or SrsResult()
    produced = partial.logs or partial.requirements
    if not partial_document.strip() and (log_written or not produced):
        return  # nothing was produced, or it is all in --log already
    record = {
        "agent": event.agent,
        "error": event.message,
        "error_zh": event.text("zh"),  # the key the record had, said by the catalogue
        "error_type": event.error_type,
    }
    if not log_written:
        record["log"] = partial.model_dump(mode="json", exclude={"srs_markdown"})
    keep_and_say(data_dir, "srs", record, {".partial.md": partial_document})


async def _generate(
    factory: ModelFactory,
    request: SrsRequest,
    out: Path | None,
    log_path: Path | None,
    *,
    trace_path: Path | None = None,
    quiet: bool = False,
    language: str = "en",
    fallback_dir: Path = Path("."),
) -> int:
    # a pipe gets the finished document only
    progress = Progress(SrsWords(language), live=out is None and sys.stdout.isatty(), quiet=quiet)
    from reqstudio.usage import UsageTracker

    # Work the run needs later (the checker for the log's summary, the reference's sections)
    # is done while the second model call answers (once its request has left), not before it
    # nor between answers: the first answer's wait is LangGraph's import and the graph's
    # building (`reqstudio.modes.srs.first_call`).
    warm_up = threading.Thread(
        target=_warm_up,
        args=(request.reference_srs, log_path is not None),
        name="srs-warm-up",
        daemon=True,
    )
    tracker = UsageTracker()
    run_options: dict = {}
    scratch = None
    if request.pause_after_round:
        # The pause waits in memory; the log's file keeps the whole log across the resumes.
        from langgraph.checkpoint.memory import InMemorySaver

        scratch = tempfile.TemporaryDirectory(prefix="reqstudio-srs-")
        run_options = {
            "checkpointer": InMemorySaver(),
            "thread_id": "interactive",
            "log_dir": Path(scratch.name),
        }
        if request.ablation != "none" or not request.reference_srs.strip():
            progress.note("note: --interactive pauses after ReqClarify rounds; this run has none")
    delivery = _Delivery(out, log_path, trace_path, fallback_dir, language, progress)
    try:
        return await _generate_rounds(
            factory, request, delivery, tracker=tracker, run_options=run_options, warm_up=warm_up
        )
    finally:
        if scratch is not None:
            scratch.cleanup()


@dataclass(frozen=True)
class _Delivery:
    """Where a run's document, log and trace go (`fallback_dir` when a path fails), and how
    its progress is told (`progress.live`: the document streams to the terminal as it is
    written)."""

    out: Path | None
    log_path: Path | None
    trace_path: Path | None
    fallback_dir: Path
    language: str
    progress: Progress


async def _generate_rounds(
    factory: ModelFactory,
    request: SrsRequest,
    delivery: _Delivery,
    *,
    tracker,
    run_options: dict,
    warm_up: threading.Thread,
) -> int:
    """The run, and with --interactive each resume after a pause with the user's decision."""
    progress, language = delivery.progress, delivery.language
    from reqstudio.modes.srs.engine import run_srs

    refusals: tuple[type[Exception], ...] = ()  # only a pause's decision can be refused
    if request.pause_after_round:
        from reqstudio.modes.srs.decisions import DecisionError

        refusals = (DecisionError,)

    resume = False
    decision = None
    first_answered = False
    while True:
        progress.begin()
        try:
            async for event in run_srs(
                request,
                factory,
                tracker=tracker,
                resume=resume,
                decision=decision,
                # LangGraph is imported while the first request is in flight, not before it
                early_first_call=True,
                **run_options,
            ):
                answer = isinstance(event, NodeToken | DocumentToken | NodeFinished)
                if warm_up.ident is None and first_answered and answer:
                    # The second answer is streaming (or done): its request has left. Started
                    # earlier, the warm-up's imports held the interpreter while a request was
                    # being built and sent, or while LangGraph was imported during the first.
                    warm_up.start()
                first_answered = first_answered or isinstance(event, NodeFinished)
                progress.show(event)
                if isinstance(event, DecisionApplied):
                    # said even with --quiet: it answers the user's own decision
                    progress.say(describe_decision(event))
                elif isinstance(event, RunFailed):
                    logged = delivery.log_path is not None and _write_log(
                        delivery.log_path, event.partial, delivery.fallback_dir, request.user_input
                    )
                    where = f"{event.agent} failed: " if event.agent else ""
                    progress.say(f"reqstudio: {where}{event.text(language)}")
                    _keep_failed_run(
                        event, progress.text, delivery.fallback_dir, log_written=logged
                    )
                    return srs_exit_code("failed")
                elif isinstance(event, RunFinished):
                    return _finish(event.result, delivery, request.user_input)
        except refusals as refused:  # nothing was applied: the same pause, asked again
            progress.say(f"reqstudio: {refused.message(language)}")
            decision = await read_decision(language)
            continue
        if progress.paused is None:
            return EXIT_OK
        progress.say(pause_table(progress.paused, language))
        decision = await read_decision(language)
        resume = True


def _finish(result: SrsResult, delivery: _Delivery, request: str) -> int:
    out, trace_path, fallback_dir = delivery.out, delivery.trace_path, delivery.fallback_dir
    final = result.final_markdown()  # the document, then the traceability matrix
    written = True
    if out is not None:
        where, problem = _save(out, final, fallback_dir, ".md")
        if problem:
            _progress(
                f"reqstudio: --out: could not write {out} ({problem}); the SRS is saved in {where}"
            )
            written = False
    elif delivery.progress.live:  # the document was streamed; the matrix follows it
        matrix = final[len(result.srs_markdown.rstrip("\n")) :]
        sys.stdout.write(matrix.rstrip("\n") + "\n")
    else:
        sys.stdout.write(final.rstrip("\n") + "\n")
    written = _write_trace(trace_path, result, fallback_dir) and written
    written = _write_log(delivery.log_path, result, fallback_dir, request) and written
    from reqstudio.usage import token_count_text

    usage = result.usage
    delivery.progress.note(
        f"done: {len(result.requirements)} requirements, {result.rounds} "
        f"ReqExplore/ReqClarify round(s), {usage['calls']} model calls, "
        f"{token_count_text(usage)} tokens, {result.seconds:.1f} s"
        + (f" -> {out}" if out and written else "")
        + (f" (traceability matrix: {trace_path})" if trace_path and written else "")
        + (f"; the document was continued {result.continuations}×" if result.continuations else "")
    )
    # The run's ending is its outcome's (as the browser's mark); a result that could not be
    # written where asked fails the command all the same.
    return srs_exit_code("done") if written else EXIT_FAILED


def srs_exit_code(ending: SrsEnding) -> int:
    """The exit code of a run: its ending's outcome (`reqstudio.modes.srs.outcome`), as the browser's
    mark is."""
    return exit_code(srs_outcome(ending))


# --- evaluate --------------------------------------------------------------------------


def evaluate_command(args: argparse.Namespace) -> int:
    from reqstudio.errors import describe_failure
    from reqstudio.modes.srs.evaluation import evaluate_srs

    settings = load_mode_settings()
    reference = _read(args.reference, "--reference", settings.reference_max_mb)
    candidate = _read(args.candidate, "--candidate", settings.reference_max_mb)

    async def evaluate(runtime: AppRuntime) -> int:
        try:
            result = await evaluate_srs(reference, candidate, runtime.factory())
        except ReferenceDocumentError as exc:  # refused before any call: too large
            raise UsageError(exc.message("en")) from None
        except Exception as exc:
            _progress(f"reqstudio: evaluation failed: {describe_failure(exc, 'en')}")
            return EXIT_FAILED
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return EXIT_FAILED if "error" in result else EXIT_OK

    return run_mode(evaluate, settings=settings)


# --- experiment ------------------------------------------------------------------------


def experiment_command(args: argparse.Namespace) -> int:
    from reqstudio.modes.srs.experiment_cli import experiment_command as run_benchmark

    return run_benchmark(args, _max_iterations)
