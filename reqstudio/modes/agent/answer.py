"""The last node of the Agent-mode graph: the answer model writes the final answer, streamed,
from the numbered sources gathered, within what is left of the run's time limit."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from reqstudio.calls import complete_text
from reqstudio.modes.agent.context import (
    NOTES_CHARS,
    SOURCE_TEXT_CHARS,
    AnswerTimeLimit,
    RunContext,
    compact_arguments,
    stop_verdict,
)
from reqstudio.modes.agent.events import AnswerFinished, AnswerRestarted, AnswerToken, HandOver
from reqstudio.modes.agent.state import AgentState, ToolResult, Verdict
from reqstudio.prompts import render_prompt
from reqstudio.tools.mcp_tools import content_to_text

log = logging.getLogger("reqstudio.agent")


async def write_answer(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The answer model writes the final answer from what was gathered, streamed."""
    ctx, emit = runtime.context, runtime.stream_writer
    verdict = state.get("verdict") or stop_verdict("model_done", ctx.language)
    ctx.handed_over_at = ctx.clock()
    emit(
        HandOver(
            reason=verdict.reason,
            limit=verdict.limit,
            answer_model=ctx.answer_model_name,
            reason_code=verdict.reason_code,
        )
    )
    messages = answer_messages(ctx, state, verdict)
    parts: list[str] = []
    kept: list[str] = []  # what earlier parts (before a length-limit continuation) wrote

    def write(piece: str) -> None:
        parts.append(piece)
        ctx.answer_so_far = "".join(parts)
        emit(AnswerToken(text=piece))

    def start_again(attempt: int, error: BaseException, wait: float) -> None:
        parts[:] = kept
        ctx.answer_so_far = "".join(parts)
        emit(AnswerRestarted(attempt=attempt, kept=ctx.answer_so_far))

    def go_on(continuation: int) -> None:
        kept[:] = parts

    # The whole run, answer included, ends by the time limit plus its grace.
    try:
        async with asyncio.timeout(max(0.0, ctx.answer_remaining())):
            # A whole answer only: a `length` finish is continued, never taken as the answer.
            await complete_text(
                ctx.answer_model,
                messages,
                policy=ctx.answer_policy,
                on_token=write,
                on_retry=start_again,
                on_continue=go_on,
                label="Agent answer model",
            )
    except TimeoutError:
        log.warning("Agent answer model: the run's time limit passed before the answer ended")
        raise AnswerTimeLimit() from None
    answer = "".join(parts)
    emit(AnswerFinished(text=answer))
    ctx.trace("agent answer: %s", answer)
    return {"answer": answer}


def answer_messages(ctx: RunContext, state: AgentState, verdict: Verdict) -> list[BaseMessage]:
    results = state.get("results", [])
    sources = numbered_sources(results)
    failures = [
        f"{r.tool}({compact_arguments(r.arguments)}): {r.text[:200]}" for r in results if not r.ok
    ]
    last = state.get("messages", [])[-1:] or [None]
    notes = ""
    if isinstance(last[0], AIMessage) and not last[0].tool_calls:
        notes = content_to_text(last[0].content)[:NOTES_CHARS]
    # What the research found is the system's context; the last user turn is the user's own
    # question, so a model that gives back its last user message gives back the question,
    # never the app's wording.
    context = render_prompt(
        "agent/answer_context.md",
        sources=sources,
        tools_used=bool(results),
        failures=failures,
        limit=verdict.limit,
        notes=notes.strip(),
    )
    return [
        SystemMessage(render_prompt("agent/answer_system.md") + "\n\n" + context),
        *ctx.history,
        HumanMessage(ctx.question),
    ]


def numbered_sources(results: list[ToolResult]) -> list[dict[str, Any]]:
    """Every usable result as a numbered source; a search hit is a source of its own."""
    sources: list[dict[str, Any]] = []
    seen_urls: set[str] = set()
    for result in results:
        if not result.ok:
            continue
        if result.kind == "search":
            for hit in result.hits:
                if hit.url and hit.url in seen_urls:
                    continue
                seen_urls.add(hit.url)
                sources.append({"title": hit.title, "url": hit.url, "text": hit.snippet})
        elif result.text.strip():
            sources.append(
                {
                    "title": f"{result.tool}({compact_arguments(result.arguments)})",
                    "url": "",
                    "text": result.text.strip()[:SOURCE_TEXT_CHARS],
                }
            )
    for number, source in enumerate(sources, start=1):
        source["number"] = number
    return sources
