"""The credentials MCP clients use over HTTP: one per client of a user, issued and revoked by the app.

A token belongs to one account of the `accounts` table (`reqstudio.accounts`) and lives beside
it, in the `mcp_tokens` table of the app's database (SQLite in the data folder, or PostgreSQL by
REQSTUDIO_DATABASE_URL), so every instance of the MCP server sees a revocation at the client's
next request. The token itself is shown once, when it is made; the table keeps only its SHA-256.
A token is 256 random bits, so a fast hash is enough to make a stolen table useless (Argon2,
as for passwords, would cost 0.15 s of CPU on every request). A token counts only while it is
not revoked and its account exists, is not disabled and is not waiting for approval.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import text

from reqstudio.accounts import AccountError, now
from reqstudio.pools import OnDataEngine, first_row
from reqstudio.schema import prepare_schema

TOKEN_PREFIX = "rqs_mcp_"  # so a leaked token is recognisable (secret scanners, logs)
# `lastUsed` is written at most this often per token: not one write per request.
LAST_USED_EVERY = 60.0


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class McpToken:
    id: str
    user: str
    label: str
    created_at: str
    last_used: str | None
    revoked_at: str | None

    @property
    def state(self) -> str:
        return "revoked" if self.revoked_at else "active"

    @classmethod
    def from_row(cls, row: Any) -> McpToken:
        return cls(
            id=row.id,
            user=row.identifier,
            label=row.label or "",
            created_at=row.createdAt,
            last_used=row.lastUsed,
            revoked_at=row.revokedAt,
        )


_COLUMNS = '"id", "identifier", "label", "createdAt", "lastUsed", "revokedAt"'


class McpTokenStore(OnDataEngine):
    """The `mcp_tokens` table through the process's data-layer engine."""

    def __init__(self, database_url: str):
        self.database_url = database_url
        self._last_written: dict[str, float] = {}

    async def aclose(self) -> None:
        await self.dispose_engine()

    async def create_table(self) -> None:
        """The database's tables, the token table among them (`reqstudio.schema`)."""
        async with self.engine.begin() as connection:
            await prepare_schema(connection)

    async def create(self, user: str, label: str = "") -> tuple[McpToken, str]:
        """A new token for the account `user`: its record, and the token (shown once)."""
        async with self.engine.begin() as connection:
            account = await first_row(
                connection, 'SELECT "disabled" FROM accounts WHERE "identifier" = :i', {"i": user}
            )
            if account is None:
                raise AccountError(f"no user {user!r} (add it with `reqstudio users add`)")
            if account.disabled:
                raise AccountError(f"the user {user!r} is disabled")
            token = TOKEN_PREFIX + secrets.token_urlsafe(32)
            token_id = "mcp-" + secrets.token_hex(4)
            await connection.execute(
                text(
                    'INSERT INTO mcp_tokens ("id", "identifier", "tokenHash", "label", '
                    '"createdAt") VALUES (:id, :user, :hash, :label, :created)'
                ),
                {
                    "id": token_id,
                    "user": user,
                    "hash": token_hash(token),
                    "label": label,
                    # to the microsecond: tokens issued in one second list in the order issued
                    "created": datetime.now(UTC).isoformat(timespec="microseconds"),
                },
            )
        record = await self.get(token_id)
        assert record is not None
        return record, token

    async def get(self, token_id: str) -> McpToken | None:
        async with self.engine.connect() as connection:
            row = await first_row(
                connection, f'SELECT {_COLUMNS} FROM mcp_tokens WHERE "id" = :i', {"i": token_id}
            )
        return McpToken.from_row(row) if row else None

    async def list(self, user: str | None = None) -> list[McpToken]:
        where = 'WHERE "identifier" = :u ' if user else ""
        async with self.engine.connect() as connection:
            rows = await connection.execute(
                text(f'SELECT {_COLUMNS} FROM mcp_tokens {where}ORDER BY "createdAt", "id"'),
                {"u": user} if user else {},
            )
            return [McpToken.from_row(row) for row in rows]

    async def revoke(self, token_id: str) -> McpToken:
        """Revoke a token: refused from the next request on, on every instance."""
        async with self.engine.begin() as connection:
            result = await connection.execute(
                text(
                    'UPDATE mcp_tokens SET "revokedAt" = :at '
                    'WHERE "id" = :i AND "revokedAt" IS NULL'
                ),
                {"at": now(), "i": token_id},
            )
        record = await self.get(token_id)
        if record is None:
            raise AccountError(f"no MCP token {token_id!r}")
        if result.rowcount == 0:
            raise AccountError(f"the MCP token {token_id} was revoked already")
        return record

    async def user_for(self, token: str) -> str | None:
        """The account a presented token speaks for, or None: unknown, revoked, or its account
        removed, disabled or pending."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        async with self.engine.connect() as connection:
            row = await first_row(
                connection,
                'SELECT t."id", t."identifier" FROM mcp_tokens t JOIN accounts a '
                'ON a."identifier" = t."identifier" WHERE t."tokenHash" = :h '
                'AND t."revokedAt" IS NULL AND NOT a."disabled" AND NOT a."pending"',
                {"h": token_hash(token)},
            )
        if row is None:
            return None
        await self._note_use(row.id)
        return row.identifier

    async def _note_use(self, token_id: str) -> None:
        moment = time.monotonic()
        if moment - self._last_written.get(token_id, -LAST_USED_EVERY) < LAST_USED_EVERY:
            return
        self._last_written[token_id] = moment
        async with self.engine.begin() as connection:
            await connection.execute(
                text('UPDATE mcp_tokens SET "lastUsed" = :at WHERE "id" = :i'),
                {"at": now(), "i": token_id},
            )
