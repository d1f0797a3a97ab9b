"""`reqstudio tests`: acceptance tests traced to requirements.

- `generate FILE|--project P`: the acceptance-test writer (a model) writes Given/When/Then
  scenarios for the requirements (all, or `--requirement ID`); each is a test item linked to
  the requirement it verifies, written as Gherkin `.feature` files, CSV, JSON or ReqIF, and with
  `--project` stored in the project.
- `list`, `export`, `matrix` (requirement <-> test, both ways) and `confirm TEST_ID` (a person's
  word that a suspect test still holds) on a project's stored tests: no model.

A test is marked suspect when a new baseline holds its requirement changed or not at all
(`reqstudio.workspace.acceptance_store`); `reqstudio diff` between baselines lists the tests of
the requirements that changed. Exit codes: 0 complete; 1 no test written (the model's answers
failed); 2 bad input, refused before any model call; 3 some requirements got no tests (those
written are whole, the missing ones named on stderr and in the JSON).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reqstudio.cli import (
    EXIT_FAILED,
    EXIT_INCOMPLETE,
    EXIT_OK,
    UsageError,
    add_command,
    add_lang_option,
    say,
    user_language,
)
from reqstudio.workspace.store_cli import add_project_options, run_on_store, user_project

if TYPE_CHECKING:
    from reqstudio.workspace.acceptance import AcceptanceTest
    from reqstudio.workspace.acceptance_writer import Written
    from reqstudio.workspace.items import Item
    from reqstudio.workspace.store import WorkspaceStore

FORMATS = ("feature", "csv", "reqif", "json")
OUT_NAMES = {"csv": "acceptance-tests.csv", "reqif": "acceptance-tests.reqif",
             "json": "acceptance-tests.json"}  # fmt: skip


def register(subparsers: argparse._SubParsersAction) -> None:
    """Acceptance tests traced to requirements: a model writes Given/When/Then scenarios for
    a document's or a project's requirements (`generate`); each is a test item that verifies
    one requirement. A project's tests: `list`, `export`, the traceability `matrix`, and
    `confirm` for a test marked suspect because its requirement changed in a new baseline.
    Exit codes: 0 complete, 1 no test written, 2 bad input, 3 some requirements got no tests
    (named on stderr)."""
    parser = add_command(subparsers, "tests", description=register.__doc__)
    actions = parser.add_subparsers(dest="tests_command", metavar="ACTION", required=True)

    generate = actions.add_parser("generate", help="write acceptance tests with the model")
    generate.add_argument(
        "file", nargs="?", type=Path, help="a document or ReqIF file (or use --project)"
    )
    add_project_options(
        generate, "the requirements of your project NAME; the tests are stored in it"
    )
    generate.add_argument(
        "--requirement", action="append", metavar="ID", help="only this requirement (repeatable)"
    )
    generate.add_argument(
        "--replace",
        action="store_true",
        help="with --project: the new tests replace the stored tests of their requirements",
    )
    _add_output_options(generate)
    add_lang_option(generate, "the scenarios")

    listing = actions.add_parser("list", help="list a project's acceptance tests")
    add_project_options(listing, "the project (default: your default project)")
    listing.add_argument("--json", action="store_true", help="the tests as JSON")

    export = actions.add_parser("export", help="write a project's stored tests")
    add_project_options(export, "the project (default: your default project)")
    _add_output_options(export)

    matrix = actions.add_parser("matrix", help="the traceability matrix requirement <-> test")
    add_project_options(matrix, "the project (default: your default project)")
    matrix.add_argument(
        "--format", choices=("table", "json", "markdown"), default="table", help="default: table"
    )
    add_lang_option(matrix, "the table's words")

    confirm = actions.add_parser(
        "confirm", help="clear a test's suspect mark: it still verifies its requirement"
    )
    confirm.add_argument("test_ids", nargs="+", metavar="TEST_ID")
    add_project_options(confirm, "the project (default: your default project)")
    parser.set_defaults(handler=tests_command)


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=FORMATS, default="feature", help="feature (Gherkin, default), csv, "
        "reqif (requirements and tests, links as SPEC-RELATIONs of type verifies) or json",
    )  # fmt: skip
    parser.add_argument(
        "--per",
        choices=("requirement", "section"),
        default="requirement",
        help="one .feature file per requirement (default) or per section",
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="the folder to write into (default: stdout)"
    )


def tests_command(args: argparse.Namespace) -> int:
    action = args.tests_command
    if action == "generate":
        return generate_command(args)
    if action == "confirm":
        return confirm_command(args)
    return run_on_store(args, lambda store, user: _stored(args, store, user))


# --- generate ----------------------------------------------------------------------------


def _chosen(requirements: list[Item], wanted: list[str] | None, where: str) -> list[Item]:
    if not wanted:
        if not requirements:
            raise UsageError(f"tests generate: {where} holds no requirements")
        return requirements
    by_id = {item.id: item for item in requirements}
    unknown = [rid for rid in wanted if rid not in by_id]
    if unknown:
        raise UsageError(
            f"--requirement: {where} has no requirement {', '.join(unknown)} "
            f"(it has: {', '.join(list(by_id)[:20])})"
        )
    return [by_id[rid] for rid in dict.fromkeys(wanted)]


def _prepare_out(out: Path | None) -> None:
    if out is None:
        return
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out: {out} cannot be made ({exc.strerror})") from None


def generate_command(args: argparse.Namespace) -> int:
    from reqstudio.cli import run_mode
    from reqstudio.workspace.acceptance import verifiable

    if (args.file is None) == (args.project is None):
        raise UsageError("tests generate: give a FILE or --project NAME (one of them)")
    if args.replace and args.project is None:
        raise UsageError("--replace: only with --project (stored tests are replaced)")
    _prepare_out(args.out)
    taken: set[str] = set()
    if args.file is not None:
        from reqstudio.workspace.items import ItemsError
        from reqstudio.workspace.loading import load_items

        try:
            item_set = load_items(args.file)
        except ItemsError as exc:
            raise UsageError(f"tests generate: {exc}") from None
        items, where = item_set.items, str(args.file)
    else:
        found: dict[str, Any] = {}
        code = run_on_store(args, lambda store, user: _project_items(args, store, user, found))
        if code != EXIT_OK:
            return code
        items, where = found["items"], f"the project {found['project']}"
        taken = {t.id for t in found["tests"]}
    chosen = _chosen(verifiable(items), args.requirement, where)
    language = args.lang or user_language()
    results: list[Written] = []

    async def work(runtime: Any) -> int:
        from reqstudio.workspace.acceptance_writer import write_tests

        results.append(await write_tests(runtime.factory(), chosen, language, taken=taken))
        return EXIT_OK

    run_mode(work, language=language)
    written = results[0]
    for failure in written.failures:
        say(f"reqstudio: no tests for {', '.join(failure.requirement_ids)}: "
            f"{failure.as_dict()['error']} ({failure.error})")  # fmt: skip
    if not written.tests:
        say("reqstudio: no acceptance test was written")
        return EXIT_FAILED
    if args.project is not None:
        replacing = {t.requirement_uid for t in written.tests} if args.replace else set()
        code = run_on_store(args, lambda store, user: _store(args, store, user, written, replacing))
        if code != EXIT_OK:
            return code
    extra = {"complete": written.complete, "requirements": written.asked,
             "failed": [f.as_dict() for f in written.failures]}  # fmt: skip
    if args.project is not None:
        extra["project"] = args.project
    _write(args, written.tests, items, extra, Path(args.file).stem if args.file else args.project)
    covered = len({t.requirement_uid for t in written.tests})
    say(f"{len(written.tests)} acceptance tests for {covered} of {written.asked} requirements"
        + (f", stored in the project {args.project}" if args.project else ""))  # fmt: skip
    return EXIT_OK if written.complete else EXIT_INCOMPLETE


async def _project_items(
    args: argparse.Namespace, store: WorkspaceStore, user: str, found: dict[str, Any]
) -> int:
    from reqstudio.workspace.acceptance_store import AcceptanceTests

    project = await user_project(store, user, args.project)
    found.update(project=project.name, items=await store.items(project),
                 tests=await AcceptanceTests(store).tests(project))  # fmt: skip
    return EXIT_OK


async def _store(
    args: argparse.Namespace, store: WorkspaceStore, user: str, written: Written, replacing: set
) -> int:
    from reqstudio.workspace.acceptance_store import AcceptanceTests

    project = await user_project(store, user, args.project)
    await AcceptanceTests(store).add(project, written.tests, replacing=replacing)
    return EXIT_OK


# --- output ------------------------------------------------------------------------------


def _write(
    args: argparse.Namespace,
    tests: list[AcceptanceTest],
    items: list[Item],
    extra: dict[str, Any],
    title: str,
) -> None:
    """The tests in `args.format`, into the folder `args.out` or on stdout."""
    from reqstudio.workspace.acceptance_out import feature_files, tests_csv, tests_reqif

    if args.format == "feature":
        files = feature_files(tests, items, args.per)
    elif args.format == "csv":
        files = {OUT_NAMES["csv"]: tests_csv(tests)}
    elif args.format == "reqif":
        files = {OUT_NAMES["reqif"]: tests_reqif(tests, items, f"{title}: acceptance tests")}
    else:
        shown = {**extra, "tests": [t.as_dict() for t in tests]}
        files = {OUT_NAMES["json"]: json.dumps(shown, ensure_ascii=False, indent=2) + "\n"}
    if args.out is None:
        for name, body in files.items():
            if len(files) > 1:
                sys.stdout.write(f"# file: {name}\n")
            sys.stdout.write(body)
        return
    for name, body in files.items():
        # (CSV with a byte-order mark: spreadsheet programs then read Chinese text right)
        encoding = "utf-8-sig" if name.endswith(".csv") else "utf-8"
        (args.out / name).write_text(body, encoding=encoding)
    say(f"{len(files)} file(s) written to {args.out}")


# --- list, export, matrix, confirm -------------------------------------------------------


async def _stored(args: argparse.Namespace, store: WorkspaceStore, user: str) -> int:
    from reqstudio.workspace.acceptance_out import (
        build_matrix,
        render_matrix_json,
        render_matrix_markdown,
        render_matrix_table,
    )
    from reqstudio.workspace.acceptance_store import AcceptanceTests

    project = await user_project(store, user, args.project)
    tests = await AcceptanceTests(store).tests(project)
    items = await store.items(project)
    action = args.tests_command
    if action == "list":
        if args.json:
            shown = {"project": project.name, "tests": [t.as_dict() for t in tests]}
            print(json.dumps(shown, ensure_ascii=False, indent=2))
        else:
            for t in tests:
                mark = f"suspect ({t.suspect.change})" if t.suspect else "-"
                print(f"{t.id}\t{t.requirement_id}\t{mark}\t{t.title}")
            say(f"{len(tests)} acceptance tests in the project {project.name}")
        return EXIT_OK
    if action == "export":
        _prepare_out(args.out)
        _write(args, tests, items, {"project": project.name}, project.name)
        return EXIT_OK
    matrix = build_matrix(items, tests)
    language = args.lang or user_language()
    if args.format == "json":
        print(render_matrix_json(matrix, project.name))
    elif args.format == "markdown":
        sys.stdout.write(render_matrix_markdown(matrix, language))
    else:
        print(render_matrix_table(matrix, language))
    return EXIT_OK


def confirm_command(args: argparse.Namespace) -> int:
    async def work(store: WorkspaceStore, user: str) -> int:
        from reqstudio.workspace.acceptance_store import AcceptanceTests

        project = await user_project(store, user, args.project)
        tests = AcceptanceTests(store)
        for test_id in dict.fromkeys(args.test_ids):
            test, was_suspect = await tests.confirm(project, test_id, user)
            state = "its suspect mark cleared" if was_suspect else "was not suspect"
            say(f"{test.id} confirmed for {test.requirement_id} as it now reads ({state})")
        return EXIT_OK

    return run_on_store(args, work)


# --- reqstudio diff between baselines ------------------------------------------------------


def changed_requirement_tests(args: argparse.Namespace, diff: Any) -> list[dict[str, object]]:
    """The project's tests of the requirements that changed in text or were removed in
    `diff`, each with whether it is suspect (until a person confirms it) and why."""
    uids = {
        item.uid
        for change in diff.changes
        if change.status == "removed" or change.text_changed
        for item in (change.old, change.new)
        if item is not None
    }
    if not uids:
        return []
    found: list[AcceptanceTest] = []

    async def work(store: WorkspaceStore, user: str) -> int:
        from reqstudio.workspace.acceptance_store import AcceptanceTests

        project = await user_project(store, user, args.project)
        found.extend(await AcceptanceTests(store).tests(project))
        return EXIT_OK

    if run_on_store(args, work) != EXIT_OK:
        return []
    return [
        {"id": t.id, "verifies": t.requirement_id, "title": t.title,
         "suspect": t.suspect is not None,
         "reason": t.suspect.as_dict() if t.suspect else None}
        for t in found
        if t.requirement_uid in uids
    ]  # fmt: skip


def render_changed_tests(tests: list[dict[str, Any]], markdown: bool = False) -> str:
    """The lines `reqstudio diff` adds under its table for the tests of changed requirements."""
    if not tests:
        return ""
    head = "Tests of changed requirements (suspect until confirmed: reqstudio tests confirm)"
    lines = [f"\n## {head}\n" if markdown else f"\n{head}:"]
    for t in tests:
        state = (
            f"suspect ({t['reason']['change']}, baseline {t['reason']['baseline']})"
            if t["suspect"]
            else "confirmed"
        )
        lines.append(f"{'- ' if markdown else '  '}{t['id']} verifies {t['verifies']}: {state}"
                     f" — {t['title']}")  # fmt: skip
    return "\n".join(lines) + "\n"
