"""The verdicts users give on the checker's findings in the browser, in the app's database
(the Chainlit data layer's, SQLite or PostgreSQL): one row per user, thread and finding
(rule, term, the requirement's text). A check in that thread reads them back and no longer
reports what its user dismissed there (`reqstudio.check.verdicts`).

Statements go through the data layer's `execute_sql` (`Sql`), as the usage ledger's do."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from reqstudio.check.verdicts import Verdict, VerdictError, make_verdict

Sql = Callable[..., Awaitable[Any]]  # (query, **parameters) -> rows, a row count, or None


async def save_verdict(sql: Sql, user: str, thread: str, verdict: Verdict) -> bool:
    """Store `verdict` as `user`'s in `thread`, in place of their earlier one on the same
    finding. False when the database did not take it."""
    key = {"user": user, "thread": thread, "rule": verdict.rule, "term": verdict.term,
           "context": verdict.context}  # fmt: skip
    removed = await sql(
        'DELETE FROM check_verdicts WHERE "userIdentifier" = :user AND "threadId" = :thread '
        'AND "rule" = :rule AND "term" = :term AND "context" = :context',
        **key,
    )
    if removed is None:
        return False
    written = await sql(
        'INSERT INTO check_verdicts ("id", "userIdentifier", "threadId", "rule", "term", '
        '"context", "verdict", "reason", "createdAt") VALUES (:id, :user, :thread, :rule, '
        ":term, :context, :verdict, :reason, :at)",
        id=str(uuid.uuid4()),
        verdict=verdict.verdict,
        reason=verdict.reason,
        at=datetime.now(UTC).isoformat(timespec="seconds"),
        **key,
    )
    return written is not None


async def thread_verdicts(sql: Sql, user: str, thread: str) -> list[Verdict]:
    """`user`'s verdicts in `thread`, oldest first (a row that no longer reads is left out)."""
    rows = await sql(
        'SELECT "rule", "term", "context", "verdict", "reason" FROM check_verdicts '
        'WHERE "userIdentifier" = :user AND "threadId" = :thread ORDER BY "createdAt", "id"',
        user=user,
        thread=thread,
    )
    verdicts = []
    for row in rows if isinstance(rows, list) else []:
        try:
            verdicts.append(make_verdict({**row, "scope": "words"}))
        except VerdictError:
            continue
    return verdicts
