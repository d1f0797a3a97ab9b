"""ReqStudio's accounts: who may sign in, with what, and who administers.

One row per person in the `accounts` table of the app's database (the history database:
SQLite in the data folder, or PostgreSQL by REQSTUDIO_DATABASE_URL), so every instance sees
the same accounts. Password accounts hold an Argon2 hash (pwdlib), never the password; single
sign-on accounts are added at their first sign-in and hold the provider and its subject; one
that no allowed domain or group admitted is added pending and signs in only once approved. An
administrator is made explicitly (`users add --admin`, `users approve --admin`, or named by
REQSTUDIO_ADMINS), never by being the first account. A disabled account cannot sign in.
Nothing here imports Chainlit: the CLI and the app share it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher
from sqlalchemy import text

from reqstudio.pools import OnDataEngine, first_row
from reqstudio.schema import prepare_schema

PASSWORD = "password"  # the provider of accounts made by `reqstudio users add`
LEGACY = "env"  # accounts that signed in through the deprecated REQSTUDIO_USERS list
MAX_NAME = 200

_HASHER = PasswordHash((Argon2Hasher(),))
# Checked against when a name has no password account, so an unknown name costs the same
# time as a wrong password and timing does not tell which names exist. Written out, with the
# hasher's parameters (m=65536, t=3, p=4): hashing it at import cost every app start and
# command 0.15 s of CPU. A test checks that it is a hash of the hasher's kind and parameters.
_DUMMY_HASH = "$argon2id$v=19$m=65536,t=3,p=4$0dT1f+aLyEmn+Hid2DeslQ$zIYO9LPtLCMmh+ebDzHlsAuXIxF1c3yIO5h3/TX+LLw"


def _yield_to_the_loop() -> None:
    """Run the hashing thread, and the lane threads libargon2 starts from it, at nice 10."""
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or not allowed
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


# One Argon2 hash costs about 0.15 s of CPU in 4 threads. Twenty people signing in at once
# through the default executor ran six hashes (24 threads) at once on 2 cores, and the event
# loop, one thread among them, stalled for 150-200 ms. Hashes are taken one at a time, on a
# thread the scheduler puts behind the loop: a burst of sign-ins queues, streams do not stall.
_HASHING = ThreadPoolExecutor(1, "password-hash", initializer=_yield_to_the_loop)
# Sign-ins that may be in line for it at once: at about 0.15 s each the last waits about 15 s.
# Past that the sign-in route answers "busy, try again" at once (reqstudio/web/login_guard.py) rather
# than let a flood of tries make every sign-in wait without a bound.
MAX_IN_LINE = 100
_in_line = 0


def hashes_in_line() -> int:
    """Hashes waiting for the hashing thread or running on it."""
    return _in_line


async def _hashed(function: Any, *args: str) -> Any:
    global _in_line
    _in_line += 1
    try:
        return await asyncio.get_running_loop().run_in_executor(_HASHING, function, *args)
    finally:
        _in_line -= 1


class AccountError(ValueError):
    """A refused account change (unknown name, name taken, bad password): one line to show."""


class AwaitingApproval(Exception):
    """The identity has an account, pending: it signs in once an administrator approves it."""


@dataclass(frozen=True)
class Account:
    identifier: str
    display_name: str
    provider: str
    subject: str | None
    is_admin: bool
    disabled: bool
    created_at: str
    last_sign_in: str | None
    has_password: bool
    pending: bool = False

    @classmethod
    def from_row(cls, row: Any) -> Account:
        return cls(
            identifier=row.identifier,
            display_name=row.displayName or row.identifier,
            provider=row.provider,
            subject=row.subject,
            is_admin=bool(row.isAdmin),
            disabled=bool(row.disabled),
            created_at=row.createdAt,
            last_sign_in=row.lastSignIn,
            has_password=bool(row.passwordHash),
            pending=bool(row.pending),
        )


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def check_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > MAX_NAME or any(ord(c) < 32 or c in ":," for c in name):
        raise AccountError(
            f"a user name is 1 to {MAX_NAME} characters, without control characters, ':' or ','"
        )
    return name


def check_password(password: str) -> str:
    if len(password) < 8:
        raise AccountError("a password has at least 8 characters / 密码至少 8 个字符")
    return password


# A new account's columns unless `_insert` is given them: never an administrator by being
# first (whoever reached the app first), never pending unless the sign-in needs approval.
_NEW_ACCOUNT: dict[str, Any] = {
    "displayName": None,
    "subject": None,
    "passwordHash": None,
    "isAdmin": False,
    "disabled": False,
    "lastSignIn": None,
    "pending": False,
}
_COLUMNS = (
    '"identifier", "displayName", "provider", "subject", "passwordHash", "isAdmin", '
    '"disabled", "createdAt", "lastSignIn", "pending"'
)


class AccountStore(OnDataEngine):
    """The `accounts` table through one SQLAlchemy async engine."""

    def __init__(self, database_url: str, admins: frozenset[str] = frozenset()):
        self.database_url = database_url
        self.admins = admins  # named by REQSTUDIO_ADMINS: administrators whatever the table says

    async def aclose(self) -> None:
        await self.dispose_engine()

    async def create_table(self) -> None:
        """The database's tables, brought up to date (`reqstudio.schema`, as the app's start-up
        does): for a command run before the new app started."""
        async with self.engine.begin() as connection:
            await prepare_schema(connection)

    def _account(self, row: Any) -> Account:
        account = Account.from_row(row)
        if account.identifier in self.admins and not account.is_admin:
            return Account(**{**account.__dict__, "is_admin": True})
        return account

    async def get(self, identifier: str) -> Account | None:
        async with self.engine.connect() as connection:
            row = await first_row(
                connection,
                f'SELECT {_COLUMNS} FROM accounts WHERE "identifier" = :i',
                {"i": identifier},
            )
        return self._account(row) if row else None

    async def list(self) -> list[Account]:
        async with self.engine.connect() as connection:
            rows = await connection.execute(
                text(f'SELECT {_COLUMNS} FROM accounts ORDER BY "createdAt", "identifier"')
            )
            return [self._account(row) for row in rows]

    async def counts(self) -> tuple[int, int]:
        """How many accounts have a password, and how many enabled ones administer (from the
        table: REQSTUDIO_ADMINS is not counted). Only columns of the table's first version, so
        it reads a table the start-up has not brought up to date yet."""
        async with self.engine.connect() as connection:
            row = (
                await connection.execute(
                    text(
                        'SELECT COUNT(CASE WHEN "passwordHash" IS NOT NULL THEN 1 END), '
                        'COUNT(CASE WHEN "isAdmin" AND NOT "disabled" THEN 1 END) FROM accounts'
                    )
                )
            ).one()
        return int(row[0]), int(row[1])

    async def _insert(self, identifier: str, provider: str, **columns: Any) -> Account:
        """A new account: `columns` by their names, as `_update` takes them; the others as
        `_NEW_ACCOUNT` has them."""
        values = {**_NEW_ACCOUNT, **columns, "identifier": identifier, "provider": provider}
        values["createdAt"] = now()
        async with self.engine.begin() as connection:
            taken = await first_row(
                connection, 'SELECT 1 FROM accounts WHERE "identifier" = :i', {"i": identifier}
            )
            if taken:
                raise AccountError(f"the user {identifier!r} exists already")
            names = ", ".join(f'"{column}"' for column in values)
            holes = ", ".join(f":{column}" for column in values)
            await connection.execute(
                text(f"INSERT INTO accounts ({names}) VALUES ({holes})"), values
            )
        account = await self.get(identifier)
        assert account is not None
        return account

    async def add_password_user(self, name: str, password: str, *, admin: bool = False) -> Account:
        name = check_name(name)
        hashed = await _hashed(_HASHER.hash, check_password(password))
        existing = await self.get(name)
        if existing is not None and existing.provider == LEGACY:
            # moving a REQSTUDIO_USERS user to a hashed password keeps role and state
            moved: dict[str, Any] = {"provider": PASSWORD, "passwordHash": hashed}
            await self._update(name, **moved, **({"isAdmin": True} if admin else {}))
            return await self.get(name)  # type: ignore[return-value]
        return await self._insert(name, PASSWORD, passwordHash=hashed, isAdmin=admin)

    async def approve(self, name: str, *, admin: bool = False) -> Account:
        """Let a pending account sign in (and with `admin`, administer)."""
        if await self.get(name) is None:
            raise AccountError(f"no user {name!r}")
        await self._update(name, pending=False, **({"isAdmin": True} if admin else {}))
        return await self.get(name)  # type: ignore[return-value]

    async def set_password(self, name: str, password: str) -> None:
        account = await self.get(name)
        if account is None or account.provider != PASSWORD:
            raise AccountError(f"no password user {name!r}")
        hashed = await _hashed(_HASHER.hash, check_password(password))
        await self._update(name, passwordHash=hashed)

    async def remove(self, name: str) -> None:
        async with self.engine.begin() as connection:
            result = await connection.execute(
                text('DELETE FROM accounts WHERE "identifier" = :i'), {"i": name}
            )
        if result.rowcount == 0:
            raise AccountError(f"no user {name!r}")

    async def set_disabled(self, name: str, disabled: bool) -> None:
        if await self.get(name) is None:
            raise AccountError(f"no user {name!r}")
        await self._update(name, disabled=disabled)

    async def _update(self, name: str, **columns: Any) -> None:
        assignments = ", ".join(f'"{column}" = :{column}' for column in columns)
        async with self.engine.begin() as connection:
            await connection.execute(
                text(f'UPDATE accounts SET {assignments} WHERE "identifier" = :identifier'),
                {**columns, "identifier": name},
            )

    async def verify_password(self, name: str, password: str) -> Account | None:
        """The account if `password` is right and the account may sign in, else None."""
        async with self.engine.connect() as connection:
            row = await first_row(
                connection, f'SELECT {_COLUMNS} FROM accounts WHERE "identifier" = :i', {"i": name}
            )
        stored = row.passwordHash if row is not None and row.passwordHash else None
        valid, new_hash = await _hashed(_HASHER.verify_and_update, password, stored or _DUMMY_HASH)
        if not (valid and stored) or row.disabled or row.pending:
            return None
        updates: dict[str, Any] = {"lastSignIn": now()}
        if new_hash:  # hashed with older parameters: stored again with today's
            updates["passwordHash"] = new_hash
        await self._update(name, **updates)
        return self._account(row)

    async def sign_in_external(
        self,
        identifier: str,
        *,
        provider: str,
        subject: str | None,
        display_name: str | None,
        needs_approval: bool = False,
    ) -> Account | None:
        """The account of someone signed in elsewhere (single sign-on, REQSTUDIO_USERS, the
        local user), added at the first sign-in. None when it may not sign in: disabled, a
        password account of that name, or the name now held by another subject of the
        provider. With `needs_approval` (nothing configured admits this identity) it is added
        pending, and AwaitingApproval is raised until an administrator approves it; without,
        a pending account is admitted (the configuration admits it now)."""
        account = await self.get(identifier)
        if account is None:
            try:
                account = await self._insert(
                    identifier,
                    provider,
                    subject=subject,
                    displayName=display_name,
                    pending=needs_approval,
                )
            except AccountError:  # added by a sign-in on another instance meanwhile
                account = await self.get(identifier)
                if account is None:
                    return None
        if account.disabled or account.provider != provider:
            return None
        if account.subject and subject and account.subject != subject:
            return None
        if account.pending and needs_approval:
            raise AwaitingApproval(identifier)
        await self._update(
            identifier,
            lastSignIn=now(),
            displayName=display_name or account.display_name,
            **({"pending": False} if account.pending else {}),
        )
        return account
