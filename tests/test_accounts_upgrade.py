"""Accounts made by the version before approval existed keep working, on SQLite and PostgreSQL:
its `accounts` table (no `pending` column) is brought up to date by the app's start-up and by
`reqstudio users`, whichever runs first, and its first account, made administrator then, still
administers."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from tests.apps import ROOT, AppProcess
from tests.browser_support import provider_env
from tests.scripted_server import ScriptedLLMServer

# The table as the previous version created it, word for word.
OLD_ACCOUNTS_TABLE = """CREATE TABLE IF NOT EXISTS accounts (
    "identifier" TEXT PRIMARY KEY, "displayName" TEXT, "provider" TEXT NOT NULL,
    "subject" TEXT, "passwordHash" TEXT, "isAdmin" BOOLEAN NOT NULL DEFAULT FALSE,
    "disabled" BOOLEAN NOT NULL DEFAULT FALSE, "createdAt" TEXT NOT NULL, "lastSignIn" TEXT)"""
PASSWORDS = {"alice": "alice-long-pass", "bob": "bob-long-pass"}


def old_database(url: str) -> None:
    """alice, the first account (administrator, as the old version made her), and bob."""
    hasher = PasswordHash((Argon2Hasher(),))

    async def make() -> None:
        engine = create_async_engine(url)
        try:
            async with engine.begin() as connection:
                await connection.execute(text(OLD_ACCOUNTS_TABLE))
                for name, admin in (("alice", True), ("bob", False)):
                    await connection.execute(
                        text(
                            'INSERT INTO accounts ("identifier", "provider", "passwordHash", '
                            '"isAdmin", "disabled", "createdAt") '
                            "VALUES (:name, 'password', :hash, :admin, FALSE, :created)"
                        ),
                        {"name": name, "hash": hasher.hash(PASSWORDS[name]), "admin": admin,
                         "created": f"2026-11-0{2 - admin}T00:00:00+00:00"},
                    )  # fmt: skip
        finally:
            await engine.dispose()

    asyncio.run(make())


def users(data_dir: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REQSTUDIO_ADMINS")}
    return subprocess.run(
        [sys.executable, "-m", "reqstudio.cli", "users", *args],
        cwd=ROOT, env=env | {"REQSTUDIO_DATA_DIR": str(data_dir), "REQSTUDIO_DATABASE_URL": url},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path):
    """A factory of databases of the given kind: each call, a new empty one."""
    if request.param == "postgresql":
        request.getfixturevalue("postgres_url")  # the shared server, running
        return request.getfixturevalue("postgres_server").create_database
    made: list[Path] = []

    def new_sqlite() -> str:
        made.append(tmp_path / f"db{len(made)}")
        made[-1].mkdir()
        return f"sqlite+aiosqlite:///{made[-1]}/history.db"

    return new_sqlite


def test_the_command_brings_an_old_table_up_to_date(database, tmp_path: Path):
    url = database()
    old_database(url)
    listing = users(tmp_path / "cli", url, "list")
    assert listing.returncode == 0, listing.stderr
    rows = [line.split("\t")[:4] for line in listing.stdout.splitlines()[1:]]
    assert rows == [["alice", "password", "admin", "active"], ["bob", "password", "user", "active"]]
    again = users(tmp_path / "cli", url, "list")  # the column is there now: nothing to add
    assert again.returncode == 0 and again.stdout == listing.stdout


def test_the_app_brings_an_old_table_up_to_date_and_its_accounts_sign_in(database, tmp_path: Path):
    url = database()
    old_database(url)
    with ScriptedLLMServer() as server:
        app = AppProcess(tmp_path / "data", provider_env(server) | {"REQSTUDIO_DATABASE_URL": url})
        app.start()
        try:
            with httpx.Client(base_url=app.url, timeout=20) as bob:
                login = bob.post("/login", data={"username": "bob", "password": PASSWORDS["bob"]})
                assert login.status_code == 200
                assert bob.get("/reqstudio/admin/users").status_code == 403
            with httpx.Client(base_url=app.url, timeout=20) as alice:
                login = alice.post(
                    "/login", data={"username": "alice", "password": PASSWORDS["alice"]}
                )
                assert login.status_code == 200
                listed = alice.get("/reqstudio/admin/users").json()  # she still administers
            assert {a["identifier"]: (a["admin"], a["pending"]) for a in listed} == {
                "alice": (True, False),
                "bob": (False, False),
            }
        finally:
            app.stop()
    assert "no administrator" not in app.log()
