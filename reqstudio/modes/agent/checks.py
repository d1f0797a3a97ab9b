"""The result check: after each round of tool calls, go on or hand over to the answer model.

The limits come first and cannot be overridden: the tool-call limit (calls in all, seed 002's
"调用次数") and the time limit of the tool phase. Then a custom check, if one was configured,
may decide; it is bounded by the same time limit (past it, the tool phase ends). Otherwise: a round whose results are all
failed, empty or shorter than `min_result_chars` means go on; with `enough_result_chars` set, a
round that brought that much usable text ends the tool phase; else the function-call model
decides in its next round (it stops by calling no tool).

Also here: loop detection (the same tool with the same arguments again).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from reqstudio.calls import CONTINUE_PROMPT
from reqstudio.modes.agent.events import Language, say
from reqstudio.modes.agent.state import AgentConfig, CheckInput, CheckOutcome, ToolResult, Verdict
from reqstudio.prompts import PROMPTS_DIR, prompt_exists


def is_weak(result: ToolResult, min_chars: int) -> bool:
    return not result.ok or result.substance_chars < max(1, min_chars)


def time_verdict(config: AgentConfig, language: Language) -> Verdict:
    return Verdict(
        continue_=False,
        reason_code="time",
        reason=say(
            "time",
            language,
            limit=f"{config.max_execution_time:g}",
            tools=f"{config.tool_phase_seconds:g}",
        ),
        limit="time",
    )


def calls_verdict(config: AgentConfig, language: Language, skipped: int = 0) -> Verdict:
    code = "iterations_skipped" if skipped else "iterations"
    return Verdict(
        continue_=False,
        reason_code="iterations",
        reason=say(code, language, limit=config.max_iterations, skipped=skipped),
        limit="iterations",
    )


def limit_verdict(
    config: AgentConfig, calls_made: int, elapsed: float, language: Language
) -> Verdict | None:
    """The limits that always apply, whatever a custom check says."""
    if elapsed >= config.tool_phase_seconds:
        return time_verdict(config, language)
    if calls_made >= config.max_iterations:
        return calls_verdict(config, language)
    return None


async def run_custom_check(config: AgentConfig, check: CheckInput, seconds_left: float) -> Any:
    """The configured check, bounded by the time left (a plain function runs in a thread,
    so a slow one cannot hold up the run). Raises TimeoutError when the time is up."""
    assert config.result_check is not None
    result_check = config.result_check
    async with asyncio.timeout(max(0.0, seconds_left)):
        if inspect.iscoroutinefunction(result_check):
            return await result_check(check)
        outcome = await asyncio.to_thread(result_check, check)
        if inspect.isawaitable(outcome):
            outcome = await outcome
        return outcome


async def check_results(
    check: CheckInput, config: AgentConfig, language: Language, calls_made: int
) -> Verdict:
    limit = limit_verdict(config, calls_made, check.elapsed_seconds, language)
    if limit is not None:
        return limit
    if config.result_check is not None:
        seconds_left = config.tool_phase_seconds - check.elapsed_seconds
        try:
            outcome = await run_custom_check(config, check, seconds_left)
        except TimeoutError:
            return time_verdict(config, language)
        if isinstance(outcome, bool):
            outcome = CheckOutcome(outcome, "")
        if isinstance(outcome, CheckOutcome):
            code = "custom_continue" if outcome.continue_ else "custom_stop"
            reason = outcome.reason or say(
                "results_usable" if outcome.continue_ else "enough_results", language
            )
            return Verdict(continue_=outcome.continue_, reason_code=code, reason=reason)
    if all(is_weak(r, check.min_result_chars) for r in check.round_results):
        return Verdict(
            continue_=True,
            reason_code="results_weak",
            reason=say("results_weak", language, min_chars=check.min_result_chars),
        )
    enough = config.enough_result_chars
    if enough is not None and sum(r.substance_chars for r in check.round_results) >= enough:
        return Verdict(
            continue_=False, reason_code="enough_results", reason=say("enough_results", language)
        )
    return Verdict(
        continue_=True, reason_code="results_usable", reason=say("results_usable", language)
    )


# --- loops -------------------------------------------------------------------------------


def _normalise(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, dict):
        return {str(k): _normalise(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise(v) for v in value]
    return value


def call_signature(tool: str, arguments: dict[str, Any]) -> str:
    """Two calls are the same action when tool and arguments match (ignoring case, spacing
    and key order)."""
    return f"{tool}:{json.dumps(_normalise(arguments), sort_keys=True, ensure_ascii=False)}"


def find_repeated_call(
    planned: Iterable[dict[str, Any]], earlier: Sequence[ToolResult]
) -> dict[str, Any] | None:
    """The first planned tool call that repeats one made in an earlier round, if any."""
    done = {call_signature(r.tool, r.arguments) for r in earlier}
    for call in planned:
        if call_signature(call["name"], call.get("args") or {}) in done:
            return call
    return None


# --- the app's own instructions given back as an answer --------------------------------------

# The templates whose wording must never reach the user as an answer. A small model given the
# hand-over ("No research results: ... Research notes: ...") may simply repeat it.
INSTRUCTION_TEMPLATES = (
    "agent/answer_context.md",
    "agent/answer_system.md",
    "agent/react_system.md",
    "agent/react_system_small.md",
)
MIN_FRAGMENT_CHARS = 18
_JINJA = re.compile(r"{%.*?%}|{{.*?}}|{#.*?#}", re.DOTALL)


def _squash(text: str) -> str:
    return " ".join(text.split()).casefold()


@lru_cache(maxsize=1)
def instruction_fragments() -> tuple[str, ...]:
    """The literal wording of the agent's prompts: the text between template tags, cut at
    line ends and sentence ends, long enough that an answer would not say it by chance."""
    fragments: set[str] = set()
    for name in INSTRUCTION_TEMPLATES:
        if not prompt_exists(name):
            continue
        source = (PROMPTS_DIR / name).read_text(encoding="utf-8")
        for literal in _JINJA.split(source):
            for piece in re.split(r"\n|(?<=[.:;])\s", literal):
                piece = _squash(piece.strip(" -*[]()"))
                if len(piece) >= MIN_FRAGMENT_CHARS:
                    fragments.add(piece)
    for piece in re.split(r"(?<=[.。/])\s*", CONTINUE_PROMPT):  # asked after a length finish
        piece = _squash(piece.strip(" /"))
        if len(piece) >= MIN_FRAGMENT_CHARS:
            fragments.add(piece)
    return tuple(sorted(fragments))


def echoes_instructions(answer: str) -> bool:
    """True when the answer repeats the app's own instructions instead of answering: it opens
    with their wording, or holds two of their sentences, or one long one."""
    text = _squash(answer)
    if not text:
        return False
    found = [fragment for fragment in instruction_fragments() if fragment in text]
    return (
        len(found) >= 2
        or any(len(fragment) >= 30 for fragment in found)
        or any(text.startswith(fragment) for fragment in found)
    )


def could_become_instructions(answer: str) -> bool:
    """True while a streamed answer is still the start of one of the instructions' sentences
    (so it is held back until it is clearly an answer)."""
    text = _squash(answer)
    return any(fragment.startswith(text) for fragment in instruction_fragments())
