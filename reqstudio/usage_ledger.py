"""Tokens used per user and mode, kept for the administrator.

Every model call made while a turn runs is counted by one `UsageTracker` for the turn, without
any mode passing it along: LangChain adds the handler in `TURN_USAGE` to every run started in
that context (`register_configure_hook`). At the turn's end one row per model role goes into
`usage_records` in the app's database. Costs are estimated when read, from AGENT_PRICES
(per 1k tokens, input and output), so a price set later applies to past use too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from langchain_core.tracers.context import register_configure_hook

from reqstudio.usage import UsageTracker

TURN_USAGE: ContextVar[UsageTracker | None] = ContextVar("reqstudio_turn_usage", default=None)
register_configure_hook(TURN_USAGE, inheritable=True)

Sql = Callable[..., Awaitable[Any]]  # (query, **parameters) -> rows


@dataclass(frozen=True)
class UsageLine:
    user: str
    mode: str
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    cost: float | None  # None: the model has no price in AGENT_PRICES

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


async def record_turn(sql: Sql, user: str, mode: str, tracker: UsageTracker) -> None:
    at = datetime.now(UTC).isoformat(timespec="seconds")
    for usage in tracker.roles.values():
        if not (usage.calls or usage.input_tokens or usage.output_tokens):
            continue
        await sql(
            'INSERT INTO usage_records ("userIdentifier", "mode", "model", "calls", '
            '"inputTokens", "outputTokens", "at") VALUES (:user, :mode, :model, :calls, '
            ":input, :output, :at)",
            user=user,
            mode=mode,
            model=usage.model or "unknown",
            calls=usage.calls,
            input=usage.input_tokens,
            output=usage.output_tokens,
            at=at,
        )


async def usage_by_user_and_mode(
    sql: Sql, prices: dict[str, tuple[float, float]]
) -> list[UsageLine]:
    rows = await sql(
        'SELECT "userIdentifier" AS user_id, "mode" AS mode, "model" AS model, '
        'SUM("calls") AS calls, SUM("inputTokens") AS input_tokens, '
        'SUM("outputTokens") AS output_tokens FROM usage_records '
        'GROUP BY "userIdentifier", "mode", "model" ORDER BY "userIdentifier", "mode", "model"'
    )
    lines = []
    for row in rows or []:
        price = prices.get(row["model"])
        cost = (
            None
            if price is None
            else round(
                int(row["input_tokens"]) / 1000 * price[0]
                + int(row["output_tokens"]) / 1000 * price[1],
                6,
            )
        )
        lines.append(
            UsageLine(
                user=row["user_id"],
                mode=row["mode"],
                model=row["model"],
                calls=int(row["calls"]),
                input_tokens=int(row["input_tokens"]),
                output_tokens=int(row["output_tokens"]),
                cost=cost,
            )
        )
    return lines
