"""`reqstudio rewrite` and `python -m agents.rewrite` (seed 003, section 5).

Inputs are checked before any model is started or called: a missing or unreadable document, a
clarifications file that is not a JSON list of {question, answer} objects (the message names the
entry and the field), or an output path that cannot be written exit with code 2 and one line.
Progress goes to stderr; without --output-md and --output-json the Markdown goes to stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from reqstudio.cli import UsageError, check_writable

if TYPE_CHECKING:
    from agents.rewrite.models import ClarificationItem, RewriteResult


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--original-doc",
        required=True,
        type=Path,
        help="the original document (.md .txt .pdf .docx)",
    )
    parser.add_argument(
        "--clarifications",
        required=True,
        type=Path,
        help='JSON file: a list of {"question": ..., "answer": ...} objects',
    )
    parser.add_argument("--output-md", type=Path, help="write the rewritten Markdown here")
    parser.add_argument("--output-json", type=Path, help="write the structured document here")
    parser.set_defaults(handler=rewrite_command)


def register(subparsers: argparse._SubParsersAction) -> None:
    rewrite = subparsers.add_parser(
        "rewrite",
        help="rewrite a document with clarifications: outline, sections in order, review",
        description="Rewrite a document with the answers to clarifying questions: an outline "
        "first, then each section in order, then reviewed and patched. Progress on stderr.",
    )
    add_arguments(rewrite)


def read_clarifications(path: Path) -> list[ClarificationItem]:
    from agents.rewrite.questions import ClarificationsError, parse_clarifications

    flag = "--clarifications"
    if not path.is_file():
        raise UsageError(f"{flag}: no such file: {path}")
    try:
        return parse_clarifications(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise UsageError(f"{flag}: {path} is not UTF-8 text") from None
    except ClarificationsError as exc:
        raise UsageError(f"{flag}: {path}: {exc}") from None


def structure_json(result: RewriteResult) -> str:
    data = result.model_dump(mode="json")
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def partial_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}.partial{path.suffix}")


def rewrite_command(args: argparse.Namespace) -> int:
    # The chain, LangChain and the model client: imported only when the command runs.
    from agents.rewrite.callbacks import CLICallbackHandler
    from agents.rewrite.chain import RewriteChain
    from agents.rewrite.errors import RewriteStageError
    from agents.rewrite.models import RewriteRequest
    from agents.srs.documents import ReferenceDocumentError, load_reference
    from reqstudio.runtime import AppRuntime
    from reqstudio.settings import load_settings

    settings = load_settings()
    try:
        original = load_reference(args.original_doc, max_mb=settings.reference_max_mb).text
    except ReferenceDocumentError as exc:
        raise UsageError(f"--original-doc: {exc.message_en}") from None
    if not original.strip():
        raise UsageError(f"--original-doc: {args.original_doc} holds no text")
    clarifications = read_clarifications(args.clarifications)
    check_writable(args.output_md, "--output-md")
    check_writable(args.output_json, "--output-json")
    request = RewriteRequest(original_content=original, clarifications=clarifications)
    handler = CLICallbackHandler()
    with AppRuntime(settings) as runtime:
        try:
            result = RewriteChain(runtime.factory()).invoke(request, handler)
        except RewriteStageError as error:
            kept = ""
            if error.partial is not None and args.output_md is not None:
                target = partial_path(args.output_md)
                target.write_text(error.partial.to_markdown(), encoding="utf-8")
                kept = f" (the document so far: {target})"
            print(f"ERROR: {error}{kept}", file=sys.stderr)
            return 1
    if args.output_md is not None:
        args.output_md.write_text(result.rewritten_content, encoding="utf-8")
    if args.output_json is not None:
        args.output_json.write_text(structure_json(result), encoding="utf-8")
    if args.output_md is None and args.output_json is None:
        sys.stdout.write(result.rewritten_content)
        sys.stdout.flush()
    print(
        f"INFO: Done: {len(result.structured_document.sections)} sections, "
        f"{result.rounds} review round(s), {result.issues_fixed} issue(s) fixed, "
        f"{result.usage.get('total_tokens', 0)} tokens, {result.seconds:.1f} s",
        file=sys.stderr,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    from reqstudio.cli import main as reqstudio_main

    return reqstudio_main(["rewrite", *(sys.argv[1:] if argv is None else argv)])
