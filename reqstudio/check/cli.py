"""`reqstudio check FILE`: the deterministic requirements checker on a document. It loads no
model and needs no provider: nothing but the document is read."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from reqstudio.cli import UsageError, user_language

if TYPE_CHECKING:
    from reqstudio.modes.srs.documents import ReferenceDocument

SUMMARY = "check a requirements document with deterministic rules (no model needed)"


def register(subparsers: argparse._SubParsersAction) -> None:
    check = subparsers.add_parser(
        "check",
        help=SUMMARY,
        description="Find ambiguous language (ISO/IEC/IEEE 29148, INCOSE rules), structure "
        "problems (binding words, ids, references, acronyms, unmeasured quality requirements) "
        "and the EARS template of each requirement; with --request, the request sentences no "
        "requirement traces to. Exit code 0 when the document was checked "
        "(with or without findings), 2 when it cannot be read.",
    )
    check.add_argument("file", type=Path, help="the document (.md .txt .pdf .docx)")
    check.add_argument("--json", action="store_true", help="findings and summary as JSON")
    check.add_argument(
        "--lang",
        choices=("zh", "en"),
        help="language of the messages (default: from LC_ALL / LC_MESSAGES / LANG)",
    )
    check.add_argument(
        "--request",
        type=Path,
        metavar="REQUEST",
        help="the requirements text the document was written from (.md .txt .pdf .docx): "
        "report its sentences that no requirement traces to (by the document's "
        "traceability matrix when it has one, else by matching words)",
    )
    check.add_argument(
        "--max-mb", type=float, default=10, help="refuse larger documents (default 10)"
    )
    check.add_argument(
        "--verdicts",
        type=Path,
        metavar="FILE",
        help="a JSON or TOML file of your verdicts on findings (rule, term, context: the "
        "requirement's text, verdict: wrong|right, reason, scope: requirement|words|document); "
        "findings judged wrong are not reported, the summary counts them",
    )
    check.add_argument(
        "--show-suppressed",
        action="store_true",
        help="list the findings the verdicts suppressed, with their reasons",
    )
    check.add_argument(
        "--suggest",
        action="store_true",
        help="ask the model (the configured provider, else the offline model) for a rewrite "
        "of each requirement with findings; each is shown as a word diff, re-checked, and "
        "refused with the reason if it changes a modal verb, a number or unit, a negation, "
        "a condition, an actor or a name. Exit code 3 when some suggestions failed, 1 when all did",
    )
    check.add_argument(
        "--suggest-max",
        type=int,
        default=None,
        metavar="N",
        help="ask about the first N requirements with findings (default 20)",
    )
    check.set_defaults(handler=check_command)


def check_command(args: argparse.Namespace) -> int:
    from reqstudio.check.engine import check_document
    from reqstudio.check.jsonout import dumps_indented
    from reqstudio.check.report import render_text
    from reqstudio.modes.srs.documents import ReferenceDocumentError, load_reference

    if not args.file.is_file():
        raise UsageError(f"check: no such file: {args.file}")
    if args.request is not None and not args.request.is_file():
        raise UsageError(f"check: --request: no such file: {args.request}")
    try:
        document = load_reference(args.file, max_mb=args.max_mb)
        request = (
            load_reference(args.request, max_mb=args.max_mb).text
            if args.request is not None
            else None
        )
    except ReferenceDocumentError as exc:
        raise UsageError(f"check: {exc.message('en')}") from None
    verdicts = _verdicts(args.verdicts)
    report = check_document(
        _with_its_lines(args.file, document),
        request=request,
        verdicts=verdicts,
        two_processes=True,  # a large document's checks beside a second process (parallel.py)
    )
    language = args.lang or user_language()
    if args.suggest_max is not None and args.suggest_max < 1:
        raise UsageError("check: --suggest-max must be 1 or more")
    if args.suggest:
        from reqstudio.check.suggest_cli import suggest_command

        return suggest_command(args, report, language)
    if args.json:
        data = {"file": str(args.file), **report.as_dict()}
        print(dumps_indented(data))  # json.dumps(data, ensure_ascii=False, indent=2)
    else:
        print(render_text(report, language, show_suppressed=args.show_suppressed))
        if report.suppressed and not args.show_suppressed:
            from reqstudio.messages import text

            print(text("check_cli.show_suppressed_hint", language))
    return 0


def _verdicts(path: Path | None) -> list:
    from reqstudio.check.verdicts import VerdictError, read_verdicts

    if path is None:
        return []
    if not path.is_file():
        raise UsageError(f"check: --verdicts: no such file: {path}")
    try:
        return read_verdicts(path)
    except VerdictError as exc:
        raise UsageError(f"check: --verdicts: {exc}") from None


def _with_its_lines(path: Path, document: ReferenceDocument) -> str:
    """The text as the file has it (leading blank lines kept), so that the line numbers of
    the findings are the file's; `load_reference` strips the text."""
    if document.kind not in ("markdown", "text"):
        return document.text
    try:
        raw = path.read_text(encoding=document.encoding)
    except (UnicodeDecodeError, LookupError):
        return document.text
    return raw.replace("\r\n", "\n").replace("\r", "\n")
