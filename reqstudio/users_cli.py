"""`reqstudio users add|list|approve|remove|passwd|disable|enable`: the sign-in accounts.

Accounts live in the app's database (REQSTUDIO_DATABASE_URL, or history.db in the data
folder), so every instance sees a change at the next sign-in. A password is asked twice on a
terminal, or read from the first line of stdin when piped (`echo "$PW" | reqstudio users add
alice`); it is never an argument, which would leave it in the shell history and `ps`.
An administrator is made explicitly, with `--admin` (or REQSTUDIO_ADMINS), never by being
the first user; `approve` lets a single sign-on identity that waits for approval sign in.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the account store (SQLAlchemy, Argon2) and settings load when it runs
    from reqstudio.accounts import AccountStore


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("users", help="manage sign-in accounts (passwords hashed)")
    commands = parser.add_subparsers(dest="users_command", metavar="ACTION", required=True)
    add = commands.add_parser("add", help="add a password user")
    add.add_argument("name")
    add.add_argument("--admin", action="store_true", help="the user administers")
    commands.add_parser("list", help="list users: provider, role, state, last sign-in")
    approve = commands.add_parser(
        "approve", help="let a user waiting for approval (single sign-on) sign in"
    )
    approve.add_argument("name")
    approve.add_argument("--admin", action="store_true", help="the user administers, too")
    remove = commands.add_parser("remove", help="remove a user (their threads stay)")
    remove.add_argument("name")
    passwd = commands.add_parser("passwd", help="set a password user's password")
    passwd.add_argument("name")
    disable = commands.add_parser("disable", help="refuse a user's sign-ins")
    disable.add_argument("name")
    enable = commands.add_parser("enable", help="allow a disabled user again")
    enable.add_argument("name")
    parser.set_defaults(handler=run)


def read_password(name: str) -> str:
    if sys.stdin.isatty():
        first = getpass.getpass(f"Password for {name} / 密码: ")
        if getpass.getpass("Again / 再次输入: ") != first:
            from reqstudio.accounts import AccountError

            raise AccountError("the two passwords differ / 两次输入的密码不一致")
        return first
    return sys.stdin.readline().rstrip("\r\n")


def run(args: argparse.Namespace) -> int:
    from reqstudio.accounts import AccountError, AccountStore
    from reqstudio.settings import load_settings

    settings = load_settings()
    os.umask(0o077)  # the database the app would create is the owner's alone
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    store = AccountStore(settings.resolved_database_url, settings.admin_names)
    try:
        return asyncio.run(_run(store, args))
    except AccountError as error:
        print(f"reqstudio: {error}", file=sys.stderr)
        return 2


async def _run(store: AccountStore, args: argparse.Namespace) -> int:
    from reqstudio.accounts import AccountError

    try:
        await store.create_table()
        action = args.users_command
        if action == "list":
            accounts = await store.list()
            print("name\tprovider\trole\tstate\tcreated\tlast sign-in")
            for a in accounts:
                role = "admin" if a.is_admin else "user"
                state = "disabled" if a.disabled else "pending" if a.pending else "active"
                print(
                    f"{a.identifier}\t{a.provider}\t{role}\t{state}\t{a.created_at}\t"
                    f"{a.last_sign_in or '-'}"
                )
        elif action == "add":
            account = await store.add_password_user(
                args.name, read_password(args.name), admin=args.admin
            )
            role = " (administrator)" if account.is_admin else ""
            print(f"added {account.identifier}{role}", file=sys.stderr)
        elif action == "approve":
            account = await store.approve(args.name, admin=args.admin)
            role = " (administrator)" if account.is_admin else ""
            print(f"approved {account.identifier}{role}", file=sys.stderr)
        elif action == "passwd":
            if await store.get(args.name) is None:
                raise AccountError(f"no user {args.name!r}")
            await store.set_password(args.name, read_password(args.name))
            print(f"password of {args.name} changed", file=sys.stderr)
        elif action == "remove":
            await store.remove(args.name)
            print(f"removed {args.name}", file=sys.stderr)
        else:
            await store.set_disabled(args.name, action == "disable")
            print(f"{args.name} {action}d", file=sys.stderr)
        return 0
    finally:
        await store.aclose()
