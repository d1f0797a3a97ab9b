"""The app's database has one place for its tables and their migrations: `reqstudio.schema`."""

from __future__ import annotations

import re
from pathlib import Path

import reqstudio

PACKAGE = Path(reqstudio.__file__).parent
# Team's run record is written through its own synchronous connection, to a SQLite file of
# its own by default (reqstudio/modes/team/store.py): its two tables stay with it.
OWN_RECORD = {PACKAGE / "modes" / "team" / "store.py"}
# A statement in a string (opening it, or a line of its own), not a comment about one.
DDL = re.compile(r"""(^|["'])\s*(CREATE TABLE|ALTER TABLE|CREATE (UNIQUE )?INDEX)\b""", re.M)


def test_no_module_but_the_schema_creates_or_alters_a_table():
    writers = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path not in OWN_RECORD and DDL.search(path.read_text(encoding="utf-8"))
    )
    assert writers == ["schema.py"]


async def test_a_command_s_table_set_up_is_the_app_s_whole_schema(tmp_path: Path):
    """`reqstudio users add` before any app has started makes every table, so the app's first
    start and the command's find the same database."""
    from sqlalchemy import inspect
    from sqlalchemy.ext.asyncio import create_async_engine

    from reqstudio.accounts import AccountStore
    from reqstudio.schema import SCHEMA

    url = f"sqlite+aiosqlite:///{tmp_path / 'history.db'}"
    store = AccountStore(url)
    await store.create_table()
    await store.aclose()
    engine = create_async_engine(url)
    async with engine.connect() as connection:
        tables = set(await connection.run_sync(lambda sync: inspect(sync).get_table_names()))
    await engine.dispose()
    named = {re.search(r"EXISTS (\w+)", statement).group(1) for statement in SCHEMA}
    assert named <= tables and {"accounts", "mcp_tokens", "projects", "threads"} <= named
