"""`reqstudio rewrite` and `python -m reqstudio.modes.rewrite` (seed 003, section 5).

Inputs are checked before any model is started or called: a missing or unreadable document, a
clarifications file that is not a JSON list of {question, answer} objects (the message names the
entry and the field), an output path that cannot be written, or `--output-md` and
`--output-json` naming the same file exit with code 2 and one line. Progress goes to stderr;
without --output-md and --output-json the Markdown goes to stdout.

Exit codes: 0 complete; 1 failed (a stage failed, or a finished document could not be written
where asked: it is then in a file in the working directory, named on stderr); 2 bad input;
3 incomplete result written (some patches failed: those sections stay as drafted); 4 finished
without a pass (a reviewer could not review, or the last review's issues named no section:
the document is written where asked, `stop_reason` in the JSON says which).
Every run is checkpointed in the data directory; a failed or interrupted one continues with
`--resume RUN_ID` (the id is printed when the run starts).
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from reqstudio.cli import (
    EXIT_FAILED,
    UsageError,
    add_command,
    add_lang_option,
    exit_code,
    fallback_folders,
    load_mode_settings,
    partial_path,
    read_input,
    run_mode,
    user_language,
    write_with_fallback,
)
from reqstudio.events import BaseEvent
from reqstudio.messages import messages_under
from reqstudio.outcomes import Outcome
from reqstudio.progress import Progress

if TYPE_CHECKING:  # the chain, LangGraph and the model client load when the command runs
    from reqstudio.modes.rewrite.chain import RewriteChain
    from reqstudio.modes.rewrite.models import ClarificationItem, RewriteRequest, RewriteResult
    from reqstudio.runtime import AppRuntime
    from reqstudio.settings import Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # Required unless --resume: checked in the command, with argparse's own wording.
    parser.add_argument(
        "--original-doc", type=Path, help="the original document (.md .txt .pdf .docx)"
    )
    parser.add_argument(
        "--clarifications",
        type=Path,
        help='JSON file: a list of {"question": ..., "answer": ...} objects',
    )
    parser.add_argument("--output-md", type=Path, help="write the rewritten Markdown here")
    parser.add_argument("--output-json", type=Path, help="write the structured document here")
    parser.add_argument(
        "--resume",
        metavar="RUN_ID",
        help="continue a failed or interrupted run from its last saved step (the run id is "
        "printed when a run starts); its original and clarifications are the saved ones",
    )
    add_lang_option(parser, "the progress lines")
    parser.set_defaults(handler=rewrite_command, parser=parser)


def register(subparsers: argparse._SubParsersAction) -> None:
    rewrite = add_command(
        subparsers,
        "rewrite",
        "Rewrite a document with the answers to clarifying questions: an outline "
        "first, then each section in order, then reviewed and patched. Progress on stderr. "
        "Exit codes: 0 complete, 1 failed, 2 bad input, 3 incomplete result written, "
        "4 finished without a pass.",
    )
    add_arguments(rewrite)


def read_clarifications(path: Path) -> list[ClarificationItem]:
    from reqstudio.modes.rewrite.questions import ClarificationsError, parse_clarifications

    flag = "--clarifications"
    if not path.is_file():
        raise UsageError(f"{flag}: no such file: {path}")
    try:
        return parse_clarifications(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise UsageError(f"{flag}: {path} is not UTF-8 text") from None
    except ClarificationsError as exc:
        raise UsageError(f"{flag}: {path}: {exc}") from None


def check_distinct(output_md: Path | None, output_json: Path | None) -> None:
    """Both outputs on one file would overwrite each other."""
    if output_md is None or output_json is None:
        return
    if output_md.resolve() == output_json.resolve():
        raise UsageError(
            f"--output-md and --output-json name the same file ({output_md}); give two paths"
        )


def structure_json(result: RewriteResult) -> str:
    data = result.model_dump(mode="json")
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


class Writer:
    """Writes the run's files after the run; a write that fails (disk full, the folder removed
    meanwhile) goes to a file of the same name in the working directory (or the temp folder),
    and stderr says where."""

    def __init__(self, say: dict[str, str]):
        self.say = say
        self.fell_back = False
        self.lost = False

    def write(self, path: Path, text: str) -> Path | None:
        where, problem = write_with_fallback(path, text, fallback_folders(Path.cwd()))
        if problem is None:
            return where
        why = problem.strerror or type(problem).__name__
        if where is None:
            self.lost = True
            print(self.say["lost"].format(path=path, why=why, folder=Path.cwd()), file=sys.stderr)
            return None
        self.fell_back = True
        print(self.say["fallback"].format(path=path, why=why, fallback=where), file=sys.stderr)
        return where


def require_inputs(args: argparse.Namespace) -> None:
    missing = [
        flag
        for flag, value in (
            ("--original-doc", args.original_doc),
            ("--clarifications", args.clarifications),
        )
        if value is None
    ]
    if missing:
        args.parser.error(f"the following arguments are required: {', '.join(missing)}")


def read_request(args: argparse.Namespace, settings: Settings) -> RewriteRequest:
    from reqstudio.modes.rewrite.models import RewriteRequest
    from reqstudio.modes.srs.documents import load_reference

    max_mb = settings.reference_max_mb
    original = read_input(
        "--original-doc",
        args.original_doc,
        lambda path: load_reference(path, max_mb=max_mb).text,
        need_text=True,
    )
    clarifications = read_clarifications(args.clarifications)
    return RewriteRequest(original_content=original, clarifications=clarifications)


async def run_checkpointed(
    chain: RewriteChain,
    request: RewriteRequest | None,
    progress: Progress,
    settings: Settings,
    run_id: str,
    resume: bool,
) -> RewriteResult:
    """The run, each event shown by `progress` as it happens (a stage that Ctrl-C ends says
    so); raises what the run failed with."""
    from reqstudio.persistence import open_checkpointer, prepare_checkpoints

    async def show(event: BaseEvent) -> None:
        progress.show(event)

    await prepare_checkpoints(settings)
    async with open_checkpointer(settings) as saver:
        return await chain.arun(request, show, checkpointer=saver, run_id=run_id, resume=resume)


def rewrite_command(args: argparse.Namespace) -> int:
    # The chain, LangGraph and the model client: imported only when the command runs.
    from reqstudio.modes.rewrite.callbacks import RewriteWords
    from reqstudio.modes.rewrite.chain import RewriteChain, RewriteResumeError, run_sync
    from reqstudio.modes.rewrite.errors import RewriteStageError
    from reqstudio.modes.rewrite.sizes import context_sizes
    from reqstudio.modes.rewrite.state import RewriteOptions

    settings = load_mode_settings()
    language = args.lang or user_language()
    say = messages_under("cli.rewrite", language)
    request: RewriteRequest | None = None
    if args.resume:
        if args.original_doc is not None or args.clarifications is not None:
            raise UsageError(
                "--resume continues the saved run with its own original and clarifications; "
                "leave out --original-doc and --clarifications"
            )
    else:
        require_inputs(args)
        request = read_request(args, settings)
    check_distinct(args.output_md, args.output_json)
    run_id = args.resume or f"rewrite-{uuid.uuid4().hex[:12]}"
    progress = Progress(RewriteWords(language))
    options = RewriteOptions(
        max_review_rounds=settings.rewrite_max_review_rounds, language=language
    )
    writer = Writer(say)

    def rewrite(runtime: AppRuntime) -> int:
        chain = RewriteChain(runtime.factory(), options=options)
        if request is not None:
            sizes = context_sizes(request, chain.factory)
            if not sizes.fits:
                raise UsageError(f"--original-doc: too large for the model: {sizes.describe('en')}")
            print(say["sizes"].format(sizes=sizes.describe(language)), file=sys.stderr)
            if sizes.draft_may_not_fit:
                print(say["may_not_fit"], file=sys.stderr)
            print(say["run_id"].format(run_id=run_id), file=sys.stderr, flush=True)
        else:
            print(say["resuming"].format(run_id=run_id), file=sys.stderr, flush=True)
        try:
            result = run_sync(
                run_checkpointed(chain, request, progress, settings, run_id, bool(args.resume))
            )
        except RewriteResumeError as error:
            raise UsageError(f"--resume: {error}") from None
        except RewriteStageError as error:
            kept = ""
            if error.partial is not None:
                target = partial_path(args.output_md or Path.cwd() / f"{run_id}.md")
                written = writer.write(target, error.partial.to_markdown())
                kept = say["kept"].format(path=written) if written else ""
            print(resume_line(error, say, run_id), file=sys.stderr)
            print(f"ERROR: {error}{kept}", file=sys.stderr)
            return exit_code(Outcome.FAILED)
        except KeyboardInterrupt:
            print(say["resume_hint"].format(run_id=run_id), file=sys.stderr)
            raise
        return write_result(args, result, writer, say, run_id, language)

    outputs = {"--output-md": args.output_md, "--output-json": args.output_json}
    return run_mode(rewrite, settings=settings, outputs=outputs, language=language)


def resume_line(error: BaseException, say: dict[str, str], run_id: str) -> str:
    """After a failure: the `--resume` command when resuming as it is can go otherwise (the
    rule the browser's Resume button follows, `reqstudio.resume_advice`); else what to change
    first (the model, or the provider's settings, which a command reads from its environment)."""
    from reqstudio.errors import remedy_for
    from reqstudio.resume_advice import advice_key, resume_can_help

    remedy = remedy_for(error)
    if resume_can_help(remedy, other_models=False):
        return say["resume_hint"].format(run_id=run_id)
    key = advice_key(remedy, other_models=True)  # a command picks its model by OPENAI_MODEL
    return say[key].format(run_id=run_id)


def write_result(
    args: argparse.Namespace,
    result: RewriteResult,
    writer: Writer,
    say: dict[str, str],
    run_id: str,
    language: str = "en",
) -> int:
    from reqstudio.modes.rewrite.outcome import rewrite_outcome

    if args.output_json is not None:
        writer.write(args.output_json, structure_json(result))
    outcome = rewrite_outcome(result)
    if outcome is Outcome.INCOMPLETE:
        # Never where a complete document is expected: a script reading --output-md (or
        # stdout) gets nothing rather than a document that is not what the review asked for.
        target = partial_path(args.output_md or Path.cwd() / f"{run_id}.md")
        written = writer.write(target, result.rewritten_content)
        for failure in result.failed_patches:
            print(
                say["not_patched"].format(
                    section_id=failure.section_id, title=failure.title, reason=failure.reason
                ),
                file=sys.stderr,
            )
        patches = sum(len(r.patches) + len(r.failed_patches) for r in result.review_rounds)
        print(
            say["incomplete"].format(
                failed=len(result.failed_patches), total=patches, path=written or "-"
            ),
            file=sys.stderr,
        )
        return exit_code(outcome)
    if args.output_md is not None:
        writer.write(args.output_md, result.rewritten_content)
    if args.output_md is None and args.output_json is None:
        sys.stdout.write(result.rewritten_content)
        sys.stdout.flush()
    from reqstudio.usage import token_count_text

    print(
        say["done"].format(
            sections=len(result.structured_document.sections),
            rounds=result.rounds,
            fixed=result.issues_fixed,
            tokens=token_count_text(result.usage, say["tokens_unknown"]),
            seconds=result.seconds,
        ),
        file=sys.stderr,
    )
    if outcome is Outcome.WITHOUT_PASS:
        for line in no_pass_lines(result, say, language):
            print(line, file=sys.stderr)
    if writer.fell_back or writer.lost:
        return EXIT_FAILED
    return rewrite_exit_code(result)


def rewrite_exit_code(result: RewriteResult) -> int:
    """The exit code of a finished rewrite: its outcome's, as the browser's mark is."""
    from reqstudio.modes.rewrite.outcome import rewrite_outcome

    return exit_code(rewrite_outcome(result))


def no_pass_lines(result: RewriteResult, say: dict[str, str], language: str) -> list[str]:
    """Why a finished rewrite is no pass: the reviewers that could not review, and the issues
    of the last review that named no section."""
    lines = [
        say["not_reviewed"].format(
            round=r.round,
            reviewer=f.reviewer,
            reason=f.text(language),
        )
        for r in result.review_rounds
        for f in r.failed_reviewers
    ]
    last = result.review_rounds[-1] if result.review_rounds else None
    if result.stop_reason == "unplaced_issues" and last is not None:
        lines += [
            say["not_placed"].format(
                round=last.round, section_id=i.section_id, description=i.description
            )
            for i in last.ignored
        ]
    return [*lines, say["no_pass"].format(stop_reason=result.stop_reason)]


def main(argv: list[str] | None = None) -> int:
    from reqstudio.cli import main as reqstudio_main

    return reqstudio_main(["rewrite", *(sys.argv[1:] if argv is None else argv)])
