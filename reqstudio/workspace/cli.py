"""`reqstudio import`, `reqstudio export` and `reqstudio diff`: requirement items read from
documents and ReqIF files, written as ReqIF, compared. No model and no provider: only the
files named are read, and the app's database when a project or a baseline is named
(`reqstudio.workspace.store_cli`). Each command's `register_*` is what the CLI registry calls
(`reqstudio.cli.COMMANDS`); the work's imports (the checker, the `reqif` library) happen when
the command runs, so `reqstudio --help` stays fast."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from reqstudio.cli import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_WITHOUT_PASS,
    UsageError,
    add_command,
    add_lang_option,
    check_writable,
    say,
    user_language,
)
from reqstudio.workspace.store_cli import add_project_options, print_items

if TYPE_CHECKING:
    from reqstudio.workspace.items import ItemSet

DOCUMENTS = ".md .txt .pdf .docx, or a ReqIF file (.reqif .reqifz)"


def _read(flag: str, path: Path, max_mb: float = 10) -> ItemSet:
    from reqstudio.workspace.items import ItemsError
    from reqstudio.workspace.loading import load_items

    try:
        return load_items(path, max_mb=max_mb)
    except ItemsError as exc:
        raise UsageError(f"{flag}: {exc}") from None


def _say_skipped(path: Path, skipped: list[str]) -> None:
    for line in skipped:
        say(f"skipped in {path.name}: {line}")


# --- import ------------------------------------------------------------------------------


def register_import(subparsers: argparse._SubParsersAction) -> None:
    """Read a ReqIF file or a document into requirement items: human id, machine id (uid),
    text, section path, kind, attributes and links. Every element that could not be read is
    a line of its own (stderr, or `skipped` in the JSON). With --project NAME the items are
    stored in that project of yours, keeping the ids it gave them before; without it nothing
    is stored. Exit code 0 when the whole file was read, 4 when some of it was skipped, 2
    when it cannot be read."""
    parser = add_command(subparsers, "import", description=register_import.__doc__)
    parser.add_argument("file", type=Path, help=f"the file ({DOCUMENTS})")
    parser.add_argument(
        "--json", action="store_true", help='{"items": [...], "skipped": [...]} on stdout'
    )
    add_project_options(
        parser,
        "store the items in your project NAME (made if new): each keeps the id and uid the "
        "project gave it before; without --project nothing is stored",
    )
    parser.set_defaults(handler=import_command)


def import_command(args: argparse.Namespace) -> int:
    import json

    item_set = _read("import", args.file)
    shown = item_set.as_dict()
    if args.project is not None:
        from reqstudio.workspace.items import ItemSet
        from reqstudio.workspace.store_cli import store_import

        code, stored = store_import(args, item_set)
        if stored is None:
            return code
        item_set = ItemSet(stored.items, item_set.skipped, item_set.title)
        shown = {**item_set.as_dict(), "project": stored.project.name,
                 "revision": stored.project.revision, "stored": stored.counts()}  # fmt: skip
        counts = ", ".join(f"{n} {what}" for what, n in stored.counts().items())
        say(f"stored in the project {stored.project.name} (revision "
            f"{stored.project.revision}): {counts}")  # fmt: skip
    if args.json:
        print(json.dumps(shown, ensure_ascii=False, indent=2))
    else:
        print_items(item_set.items)
        _say_skipped(args.file, item_set.skipped)
    return EXIT_WITHOUT_PASS if item_set.skipped else EXIT_OK


# --- export ------------------------------------------------------------------------------


def register_export(subparsers: argparse._SubParsersAction) -> None:
    """Write a document's or a ReqIF file's requirement items as ReqIF 1.2 (valid against
    the OMG schema): ReqIF.ForeignID the human id, ReqIF.Text the text (XHTML),
    ReqIF.ChapterName the headings, the sections as SPEC-HIERARCHY, links as SPEC-RELATIONs.
    Exit code 0 when written from the whole input, 4 when written but elements of the input
    were skipped (each named on stderr), 2 for bad input or an output path that cannot be
    written."""
    parser = add_command(subparsers, "export", description=register_export.__doc__)
    parser.add_argument("file", type=Path, help=f"the input ({DOCUMENTS})")
    parser.add_argument(
        "--format",
        choices=("reqif", "reqifz"),
        help="a .reqif file, or a .reqifz zip of one (default: from --out's suffix, else reqif)",
    )
    parser.add_argument("--out", type=Path, required=True, help="the file to write")
    parser.set_defaults(handler=export_command)


def export_command(args: argparse.Namespace) -> int:
    out_format = args.format or ("reqifz" if args.out.suffix.lower() == ".reqifz" else "reqif")
    check_writable(args.out, "--out")
    if not args.file.is_file():
        raise UsageError(f"export: no such file: {args.file}")
    if args.out.resolve() == args.file.resolve():
        raise UsageError(f"--out: {args.out} is the input file")
    item_set = _read("export", args.file)
    from reqstudio.workspace.reqif_out import build_reqif, build_reqifz

    title = item_set.title or args.file.stem
    try:
        if out_format == "reqifz":
            args.out.write_bytes(build_reqifz(item_set, args.out.stem + ".reqif", title))
        else:
            args.out.write_text(build_reqif(item_set, title), encoding="utf-8")
    except OSError as exc:
        say(f"reqstudio: --out: {args.out} could not be written ({exc.strerror})")
        return EXIT_FAILED
    _say_skipped(args.file, item_set.skipped)
    say(f"{len(item_set.items)} items written to {args.out}")
    return EXIT_WITHOUT_PASS if item_set.skipped else EXIT_OK


# --- diff --------------------------------------------------------------------------------


def register_diff(subparsers: argparse._SubParsersAction) -> None:
    """Compare two versions of requirements (documents or ReqIF files): the requirements
    added, removed, changed and moved, matched by id, then by text; the words that changed,
    and whether a change touches the meaning (a modal verb, a number or unit, a negation, a
    condition, an actor, a named entity) or is rewording. Exit code 0 (with --exit-code: 0
    when they are the same, 1 when they differ), 2 when a file cannot be read."""
    parser = add_command(subparsers, "diff", description=register_diff.__doc__)
    parser.add_argument(
        "old", help=f"the old version ({DOCUMENTS}), or baseline:NAME (a project's baseline)"
    )
    parser.add_argument("new", help="the new version (a file, or baseline:NAME)")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="the changes as JSON")
    shown.add_argument(
        "--format",
        choices=("table", "markdown", "json"),
        default=None,
        help="table (default), markdown or json",
    )
    parser.add_argument(
        "--exit-code",
        action="store_true",
        help="exit with 1 when there are differences, 0 when there are none (as git diff)",
    )
    add_lang_option(parser, "the table's words and the meaning changes")
    add_project_options(parser, "the project of baseline:NAME (default: your default project)")
    parser.set_defaults(handler=diff_command)


def _version(args: argparse.Namespace, ref: str, flag: str) -> ItemSet:
    """A version to compare: `baseline:NAME` of the user's project, or a file."""
    from reqstudio.workspace.store_cli import is_baseline, read_baseline

    if is_baseline(ref):
        return read_baseline(args, ref, flag)
    if not Path(ref).is_file():
        raise UsageError(f"diff: {flag}: no such file: {ref}")
    return _read(f"diff: {flag}", Path(ref))


def diff_command(args: argparse.Namespace) -> int:
    from reqstudio.workspace.store_cli import is_baseline

    for flag, ref in (("OLD", args.old), ("NEW", args.new)):
        if not is_baseline(ref) and not Path(ref).is_file():
            raise UsageError(f"diff: {flag}: no such file: {ref}")
    old, new = _version(args, args.old, "OLD"), _version(args, args.new, "NEW")
    from reqstudio.workspace.diff import diff_items
    from reqstudio.workspace.diff_report import render_json, render_markdown, render_table

    language = args.lang or user_language()
    result = diff_items(old, new)
    shown = "json" if args.json else args.format or "table"
    tests = None  # between baselines: the project's tests of the requirements that changed
    if is_baseline(args.old) or is_baseline(args.new):
        from reqstudio.workspace.acceptance_cli import changed_requirement_tests

        tests = changed_requirement_tests(args, result)
    if shown == "json":
        extra = {"suspect_tests": tests} if tests is not None else None
        print(render_json(result, str(args.old), str(args.new), language, extra))
    else:
        from reqstudio.workspace.acceptance_cli import render_changed_tests

        if shown == "markdown":
            sys.stdout.write(render_markdown(result, language))
        else:
            print(render_table(result, language))
        sys.stdout.write(render_changed_tests(tests or [], markdown=shown == "markdown"))
    _say_skipped(Path(args.old), old.skipped)
    _say_skipped(Path(args.new), new.skipped)
    return 1 if args.exit_code and result.differs else EXIT_OK
