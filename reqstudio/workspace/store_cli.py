"""`reqstudio items list` and `reqstudio baseline create|list`, and what `import --project` and
`diff baseline:NAME` share with them: a user's projects in the app's database
(REQSTUDIO_DATABASE_URL, or history.db in the data folder; the same database the browser uses).

The command acts as a user: `--user NAME`, an account of `reqstudio users list`, or without it
`local`, the one user of the app when no sign-in is configured. A project is one of that user's
(`--project NAME`, default `default`, the user's default project); another user's project of
the same name is a different project, and is never read or written."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from reqstudio.cli import EXIT_FAILED, EXIT_OK, UsageError, add_command, say

if TYPE_CHECKING:
    from reqstudio.workspace.store import Project, WorkspaceStore

# The identifier of the app's one local user (reqstudio/web/sign_in.py), the CLI's default.
LOCAL_USER = "local"
BASELINE_PREFIX = "baseline:"


def add_project_options(parser: argparse.ArgumentParser, project_help: str) -> None:
    parser.add_argument("--project", metavar="NAME", help=project_help)
    parser.add_argument(
        "--user",
        metavar="NAME",
        help=f"act as this user, an account of `reqstudio users list` (default: {LOCAL_USER}, "
        "the app's user when no sign-in is configured)",
    )


def run_on_store(args: argparse.Namespace, work: Callable[..., Awaitable[int]]) -> int:
    """`work(store, user)` on the app's database as the command's user; a refused operation
    is exit 2 with one line, an unreachable database exit 1 with one line."""
    from reqstudio.settings import load_settings
    from reqstudio.workspace.store import WorkspaceError, WorkspaceStore

    settings = load_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    store = WorkspaceStore(settings.resolved_database_url)

    async def run() -> int:
        try:
            user = await acting_user(store, getattr(args, "user", None))
            return await work(store, user)
        finally:
            await store.aclose()

    try:
        return asyncio.run(run())
    except WorkspaceError as error:
        raise UsageError(str(error)) from None
    except Exception as error:
        from reqstudio.errors import is_database_failure

        if not is_database_failure(error):
            raise
        say(f"reqstudio: the database could not be reached ({type(error).__name__}: {error})")
        return EXIT_FAILED


async def acting_user(store: WorkspaceStore, name: str | None) -> str:
    from reqstudio.workspace.store import WorkspaceError

    if name is None or name.strip() == LOCAL_USER:
        return LOCAL_USER
    name = name.strip()
    if not await store.has_account(name):
        raise WorkspaceError(f"--user: no user {name!r} (see `reqstudio users list`)")
    return name


async def user_project(store: WorkspaceStore, user: str, name: str | None) -> Project:
    from reqstudio.workspace.store_schema import DEFAULT_PROJECT

    return await store.project(user, name or DEFAULT_PROJECT)


def print_items(items: list[Any]) -> None:
    for item in items:
        where = " / ".join(item.section[1:])
        print(f"{item.id}\t{item.kind}\t{where}\t{item.text}")


# --- items -------------------------------------------------------------------------------


def register_items(subparsers: argparse._SubParsersAction) -> None:
    """The requirement items stored in one of your projects (by `reqstudio import FILE
    --project NAME`), with the ids the project keeps for them."""
    parser = add_command(subparsers, "items", description=register_items.__doc__)
    actions = parser.add_subparsers(dest="items_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="list a project's current items")
    add_project_options(listing, "the project (default: your default project)")
    listing.add_argument(
        "--json", action="store_true", help='{"project": ..., "items": [...]} on stdout'
    )
    parser.set_defaults(handler=items_command)


def items_command(args: argparse.Namespace) -> int:
    async def work(store: WorkspaceStore, user: str) -> int:
        project = await user_project(store, user, args.project)
        items = await store.items(project)
        if args.json:
            shown = {"project": project.name, "revision": project.revision,
                     "items": [item.as_dict() for item in items]}  # fmt: skip
            print(json.dumps(shown, ensure_ascii=False, indent=2))
        else:
            print_items(items)
            say(f"{len(items)} items in the project {project.name} (revision {project.revision})")
        return EXIT_OK

    return run_on_store(args, work)


# --- baseline ----------------------------------------------------------------------------


def register_baseline(subparsers: argparse._SubParsersAction) -> None:
    """Freeze a project's current items as a named baseline, or list the baselines. A
    baseline never changes; compare it with `reqstudio diff baseline:NAME NEW --project P`."""
    parser = add_command(subparsers, "baseline", description=register_baseline.__doc__)
    actions = parser.add_subparsers(dest="baseline_command", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="freeze the project's current items as NAME")
    create.add_argument("name", help="the baseline's name (used once in a project)")
    add_project_options(create, "the project (default: your default project)")
    listing = actions.add_parser("list", help="list the project's baselines")
    add_project_options(listing, "the project (default: your default project)")
    listing.add_argument("--json", action="store_true", help="the baselines as JSON")
    parser.set_defaults(handler=baseline_command)


def baseline_command(args: argparse.Namespace) -> int:
    async def work(store: WorkspaceStore, user: str) -> int:
        project = await user_project(store, user, args.project)
        if args.baseline_command == "create":
            baseline = await store.create_baseline(project, args.name, user)
            say(
                f"baseline {baseline.name} of the project {project.name}: {baseline.count} "
                f"items frozen (revision {baseline.revision})"
            )
            if baseline.suspect_tests:
                say(f"{len(baseline.suspect_tests)} acceptance tests marked suspect (their "
                    f"requirement changed or is gone): {', '.join(baseline.suspect_tests)}; "
                    "see `reqstudio tests list`, clear with `reqstudio tests confirm`")  # fmt: skip
            return EXIT_OK
        baselines = await store.baselines(project)
        if args.json:
            shown = {"project": project.name, "baselines": [b.as_dict() for b in baselines]}
            print(json.dumps(shown, ensure_ascii=False, indent=2))
        else:
            print("name\titems\trevision\tcreated\tby")
            for b in baselines:
                print(f"{b.name}\t{b.count}\t{b.revision}\t{b.created_at}\t{b.created_by}")
        return EXIT_OK

    return run_on_store(args, work)


# --- import --project, diff baseline:NAME ----------------------------------------------


def store_import(args: argparse.Namespace, item_set: Any) -> tuple[int, Any]:
    """Store `item_set` in the user's project `args.project` (made if new): the exit code of
    the storing and what it stored (None when it failed)."""
    stored: list[Any] = []

    async def work(store: WorkspaceStore, user: str) -> int:
        project = await store.project(user, args.project, create=True)
        stored.append(await store.store_items(project, item_set))
        return EXIT_OK

    code = run_on_store(args, work)
    return code, (stored[0] if stored else None)


def is_baseline(ref: str) -> bool:
    return ref.startswith(BASELINE_PREFIX)


def read_baseline(args: argparse.Namespace, ref: str, flag: str) -> Any:
    """The items of `baseline:NAME` in the user's project `args.project`."""
    name = ref[len(BASELINE_PREFIX) :]
    if not name:
        raise UsageError(f"diff: {flag}: {ref!r} names no baseline (baseline:NAME)")
    found: list[Any] = []

    async def work(store: WorkspaceStore, user: str) -> int:
        project = await user_project(store, user, args.project)
        found.append(await store.baseline_items(project, name))
        return EXIT_OK

    if run_on_store(args, work) != EXIT_OK:
        sys.exit(EXIT_FAILED)
    return found[0]
