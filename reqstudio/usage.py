"""Token, call and time accounting per model role, fed by LangChain callbacks."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol
from uuid import UUID

import openai
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult


class CountedUsage(Protocol):
    model: str
    calls: int
    input_tokens: int
    output_tokens: int


def estimate_cost(
    per_model: Mapping[str, CountedUsage], prices: Mapping[str, tuple[float, float]]
) -> float | None:
    """Cost from prices per 1k tokens (`AGENT_PRICES`); None when a model that was used has no
    price (a partial sum would look like the whole cost)."""
    used = [u for u in per_model.values() if u.calls or u.input_tokens or u.output_tokens]
    if not used or any(u.model not in prices for u in used):
        return None
    total = 0.0
    for usage in used:
        input_price, output_price = prices[usage.model]
        total += usage.input_tokens / 1000 * input_price + usage.output_tokens / 1000 * output_price
    return round(total, 6)


@dataclass
class RoleUsage:
    model: str = ""
    calls: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    unreported: int = 0  # calls whose answer carried no token counts (some servers send none)
    # Calls stopped before their answer ended (a time limit, Stop, a broken stream): counted,
    # with their time, but what they cost in tokens is not known. A provider's refusal (an
    # HTTP error status) is not one: it answered at once and generated nothing.
    unfinished: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(eq=False)  # identity equality: LangChain de-duplicates handlers by ==
class UsageTracker(BaseCallbackHandler):
    """Records every chat-model call made with this handler attached, keyed by role.

    The role and model name come from the metadata the model factory puts on each client.
    """

    roles: dict[str, RoleUsage] = field(default_factory=dict)
    _started: dict[UUID, tuple[str, float]] = field(default_factory=dict)
    run_inline: bool = True  # keep accounting in call order, on the caller's loop

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        meta = metadata or {}
        role = str(meta.get("reqstudio_role", "unknown"))
        usage = self.roles.setdefault(role, RoleUsage())
        usage.model = str(meta.get("reqstudio_model", usage.model))
        self._started[run_id] = (role, time.perf_counter())

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        role, started = self._started.pop(run_id, ("unknown", time.perf_counter()))
        usage = self.roles.setdefault(role, RoleUsage())
        usage.calls += 1
        usage.seconds += time.perf_counter() - started
        reported = False
        for generations in response.generations:
            for generation in generations:
                meta = getattr(getattr(generation, "message", None), "usage_metadata", None)
                if meta:
                    reported = True
                    usage.input_tokens += int(meta.get("input_tokens", 0))
                    usage.output_tokens += int(meta.get("output_tokens", 0))
        usage.unreported += not reported

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        role, started = self._started.pop(run_id, ("unknown", time.perf_counter()))
        usage = self.roles.setdefault(role, RoleUsage())
        usage.errors += 1
        usage.seconds += time.perf_counter() - started
        usage.unfinished += not isinstance(error, openai.APIStatusError)

    # --- reading ---------------------------------------------------------

    @property
    def calls(self) -> int:
        return sum(u.calls for u in self.roles.values())

    @property
    def input_tokens(self) -> int:
        return sum(u.input_tokens for u in self.roles.values())

    @property
    def output_tokens(self) -> int:
        return sum(u.output_tokens for u in self.roles.values())

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def tokens_known(self) -> bool:
        """Whether every call's answer said how many tokens it took (else the totals are
        only what some calls reported): no answer without usage, no call stopped midway."""
        return all(u.unreported == 0 and u.unfinished == 0 for u in self.roles.values())

    @property
    def model_seconds(self) -> float:
        return sum(u.seconds for u in self.roles.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "roles": {role: asdict(u) for role, u in self.roles.items()},
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "tokens_known": self.tokens_known,
            "model_seconds": round(self.model_seconds, 3),
        }


def tokens_known_in(usage: Mapping[str, Any]) -> bool:
    """Whether a usage record (`UsageTracker.as_dict()`, as results carry it) counts every
    call's tokens; a record from before `tokens_known` was kept is read from its roles."""
    if "tokens_known" in usage:
        return bool(usage["tokens_known"])
    roles = usage.get("roles") or {}
    return all(
        not role.get("unreported") and not role.get("unfinished")
        for role in roles.values()
        if isinstance(role, Mapping)
    )


def known_total(usage: Mapping[str, Any] | UsageTracker) -> int | None:
    """A run's token total as far as it is known: None when some call did not report its
    tokens, or calls were made and none reported any (a server that sends no usage, as
    llama.cpp's does when streaming); 0 only when no call was made."""
    if isinstance(usage, UsageTracker):
        usage = usage.as_dict()
    total = int(usage.get("total_tokens") or 0)
    if not tokens_known_in(usage) or (usage.get("calls") and not total):
        return None
    return total


def token_count_text(usage: Mapping[str, Any] | UsageTracker, unknown: str = "unknown") -> str:
    """`known_total` as the command line prints it: the number, or the word for unknown."""
    total = known_total(usage)
    return unknown if total is None else str(total)
