"""The ReAct loop as a LangGraph StateGraph with two models.

    reason ──(tool calls)──> run_tools ──> check_results ──(go on)──> reason
       │                                        │
       └──(no tool call / loop / time)──────────┴──(enough / a limit)──> write_answer ──> END

`reason` streams the function-call model's thinking and decides tool calls; `run_tools` runs
one round's calls concurrently; `check_results` is the result check; `write_answer` streams the
answer model's reply from everything gathered. Nodes report progress as events through the
graph's stream writer (stream_mode="custom"); run-scoped things live in `RunContext`
(reqstudio/modes/agent/context.py); `write_answer` is in reqstudio/modes/agent/answer.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import time
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from reqstudio.calls import IncompleteAnswerError, complete
from reqstudio.edges import on_the_loop
from reqstudio.modes.agent.answer import answer_messages, numbered_sources, write_answer
from reqstudio.modes.agent.checks import (
    CheckInput,
    calls_verdict,
    check_results,
    find_repeated_call,
    time_verdict,
)
from reqstudio.modes.agent.context import (
    TOOL_TEXT_CHARS,
    AnswerTimeLimit,
    RunContext,
    compact_arguments,
    emit_decision,
    stop_verdict,
    tool_kind,
)
from reqstudio.modes.agent.events import (
    LoopDetected,
    PlannedCall,
    ThinkingFinished,
    ThinkingStarted,
    ThinkingToken,
    ToolCallFinished,
    ToolCallStarted,
    ToolKind,
    say,
)
from reqstudio.modes.agent.state import AgentState, ToolResult, Verdict
from reqstudio.prompts import render_prompt
from reqstudio.tools.mcp_tools import content_to_text
from reqstudio.tools.web_search import SearchHit

__all__ = [
    "AnswerTimeLimit",
    "RunContext",
    "answer_messages",
    "bind_tools",
    "build_agent_graph",
    "numbered_sources",
    "react_system_prompt",
    "write_answer",
]

log = logging.getLogger("reqstudio.agent")


# --- nodes -----------------------------------------------------------------------------


async def reason(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The function-call model thinks (streamed) and decides which tools to call, if any."""
    ctx, emit = runtime.context, runtime.stream_writer
    round_number = state.get("round", 0) + 1
    # The time check between rounds: no new round once the tool phase's time is up.
    if ctx.remaining() <= 0:
        verdict = time_verdict(ctx.config, ctx.language)
        emit_decision(emit, verdict, round_number - 1)
        return {"verdict": verdict}

    emit(ThinkingStarted(model=ctx.function_call_model_name, round=round_number))
    thought: list[str] = []  # everything the thinking step shows, in order
    reasoning: list[str] = []  # a reasoning model's separate thinking

    def think(piece: str) -> None:
        if reasoning and len(thought) == len(reasoning):  # the reply follows the thinking
            piece = "\n\n" + piece
        thought.append(piece)
        emit(ThinkingToken(text=piece, round=round_number))

    def reflect(piece: str) -> None:
        reasoning.append(piece)
        thought.append(piece)
        emit(ThinkingToken(text=piece, round=round_number, reasoning=True))

    def start_again(attempt: int, error: BaseException, wait: float) -> None:
        thought.clear()  # the broken try's thinking is not part of the answer
        reasoning.clear()

    def finished(planned: list[PlannedCall] | None = None) -> ThinkingFinished:
        return ThinkingFinished(
            text="".join(thought),
            reasoning="".join(reasoning),
            tool_calls=planned or [],
            round=round_number,
        )

    def announce(tool: str) -> None:  # a forced choice has no words of its own: say it
        think(
            say("picked", ctx.language, tool=tool)
            if tool in ctx.tools
            else say("picked_nothing", ctx.language)
        )

    try:
        async with asyncio.timeout(ctx.remaining()):
            if ctx.picker is not None:
                message = await ctx.picker.plan(
                    state["messages"],
                    policy=ctx.function_call_policy,
                    on_pick=announce,
                    on_retry=start_again,
                )
            else:
                message = await complete(
                    ctx.reasoning_model,
                    state["messages"],
                    policy=ctx.function_call_policy,
                    on_token=think,
                    on_reasoning=reflect,
                    on_retry=start_again,
                    label="Agent function-call model",
                )
    except TimeoutError:
        emit(finished())
        verdict = time_verdict(ctx.config, ctx.language)
        emit_decision(emit, verdict, round_number)
        return {"round": round_number, "verdict": verdict}
    except IncompleteAnswerError as exc:
        if exc.reason != "length":
            raise
        # A plan cut at the length limit is not a plan: its tool calls may be half-written.
        emit(finished())
        log.warning("Agent function-call model: reply hit the length limit; answering now")
        verdict = stop_verdict("fc_length", ctx.language)
        emit_decision(emit, verdict, round_number)
        return {"round": round_number, "verdict": verdict}

    for index, call in enumerate([*message.tool_calls, *message.invalid_tool_calls]):
        if not call.get("id"):  # some providers send none; results must refer to the call
            call["id"] = f"call_{round_number}_{index}"
    text = "".join(thought)
    planned = [
        PlannedCall(call_id=c["id"] or "", tool=c["name"], arguments=c["args"])
        for c in message.tool_calls
    ] + [
        PlannedCall(
            call_id=c["id"] or "", tool=c["name"] or "?", arguments={"raw": c["args"] or ""}
        )
        for c in message.invalid_tool_calls
    ]
    emit(finished(planned))
    ctx.trace("agent round %d thought: %s | calls: %s", round_number, text, planned)

    if not planned:
        # a forced choice of "none" before any tool ran: the answer is from what the model knows
        chose_none = ctx.picker is not None and not state.get("results")
        verdict = stop_verdict("picked_none" if chose_none else "model_done", ctx.language)
        emit_decision(emit, verdict, round_number)
        return {"messages": [message], "round": round_number, "verdict": verdict}

    repeated = find_repeated_call(message.tool_calls, state.get("results", []))
    if repeated is not None:
        notice = say("loop", ctx.language, tool=repeated["name"])
        emit(LoopDetected(tool=repeated["name"], arguments=repeated["args"], message=notice))
        ctx.trace("agent loop: %s %s", repeated["name"], repeated["args"])
        verdict = Verdict(continue_=False, reason_code="loop", reason=notice, limit="loop")
        emit_decision(emit, verdict, round_number)
        # The repeating message is not kept: its tool calls will never get results.
        return {"round": round_number, "verdict": verdict}

    return {
        "messages": [message],
        "round": round_number,
        "verdict": Verdict(continue_=True, reason_code="tools_planned", reason=""),
    }


async def run_tools(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Run all tool calls of this round at once; failures come back as results, not errors."""
    ctx, emit = runtime.context, runtime.stream_writer
    round_number = state["round"]
    message = state["messages"][-1]
    assert isinstance(message, AIMessage)
    calls = [
        (c["id"] or f"call_{i}", c["name"], c["args"]) for i, c in enumerate(message.tool_calls)
    ]
    invalid = message.invalid_tool_calls
    # The tool-call limit counts calls: a round may run only what is left of it.
    budget = max(0, ctx.config.max_iterations - len(state.get("results", [])))
    skipped = max(0, len(calls) + len(invalid) - budget)
    calls = calls[:budget]
    invalid = invalid[: max(0, budget - len(calls))]
    if skipped:
        ctx.trace("agent tool-call limit: %d planned call(s) not run", skipped)
    finished: dict[str, ToolResult] = {}

    def not_run(call: dict[str, Any], text: str) -> ToolResult:
        """A call that did not run (the time limit cut it, or its arguments were not JSON): a
        failed result that says why, kept and shown as finished like any other."""
        result = ToolResult(**call, ok=False, text=text)
        ctx.gathered.append(result)
        emit(finished_event(result))
        return result

    async def run_one(call_id: str, name: str, arguments: dict[str, Any]) -> None:
        tool = ctx.tools.get(name)
        kind = tool_kind(tool, name)
        emit(ToolCallStarted(**call_fields(call_id, name, arguments, kind, round_number)))
        ctx.trace("agent tool call %s %s", name, compact_arguments(arguments))
        result = await invoke_tool(ctx, tool, call_id, name, arguments, kind, round_number)
        finished[call_id] = result
        ctx.gathered.append(result)
        emit(finished_event(result))
        ctx.trace("agent tool result %s ok=%s: %s", name, result.ok, result.text)

    timed_out = False
    try:
        async with asyncio.timeout(max(0.0, ctx.remaining())):
            await asyncio.gather(*(run_one(*call) for call in calls))
    except TimeoutError:
        timed_out = True

    results: list[ToolResult] = []
    for call_id, name, arguments in calls:
        result = finished.get(call_id)
        if result is None:  # cancelled by the time limit
            kind = tool_kind(ctx.tools.get(name), name)
            call = call_fields(call_id, name, arguments, kind, round_number)
            result = not_run(call, say("tool_cancelled_time", ctx.language))
        results.append(result)
    for bad in invalid:
        call_id, name = bad["id"] or f"invalid_{len(results)}", bad["name"] or "?"
        arguments = {"raw": bad["args"] or ""}
        kind = tool_kind(ctx.tools.get(name), name)
        call = call_fields(call_id, name, arguments, kind, round_number)
        emit(ToolCallStarted(**call))
        reason = bad.get("error") or "unparsable"
        results.append(not_run(call, f"The arguments for {name} were not valid JSON ({reason})."))

    tool_messages = [
        ToolMessage(
            content=r.text or "(no output)",
            tool_call_id=r.call_id,
            name=r.tool,
            status="success" if r.ok else "error",
        )
        for r in results
    ]
    return {
        "messages": tool_messages,
        "results": results,
        "timed_out": timed_out,
        "skipped_calls": skipped,
    }


def call_fields(
    call_id: str, name: str, arguments: dict[str, Any], kind: ToolKind, round_number: int
) -> dict[str, Any]:
    """What a tool call's start event and its result both say of the call."""
    return {
        "call_id": call_id,
        "tool": name,
        "arguments": arguments,
        "kind": kind,
        "round": round_number,
    }


async def invoke_tool(
    ctx: RunContext,
    tool: BaseTool | None,
    call_id: str,
    name: str,
    arguments: dict[str, Any],
    kind: ToolKind,
    round_number: int,
) -> ToolResult:
    base = call_fields(call_id, name, arguments, kind, round_number)
    if tool is None:
        available = ", ".join(sorted(ctx.tools)) or "none"
        return ToolResult(
            **base, ok=False, text=f"There is no tool named {name!r}. Available: {available}."
        )
    started = time.perf_counter()
    try:
        call = tool.ainvoke({"type": "tool_call", "id": call_id, "name": name, "args": arguments})
        if ctx.config.tool_timeout is not None:
            output = await asyncio.wait_for(call, ctx.config.tool_timeout)
        else:
            output = await call
    except Exception as exc:  # a failing tool is an observation for the model, not a crash
        log.warning("tool %s failed: %s", name, type(exc).__name__)
        detail = "it timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
        return ToolResult(
            **base,
            ok=False,
            text=f"The tool {name} failed ({detail}). Try another tool or query, or answer "
            "from what is known.",
            seconds=time.perf_counter() - started,
        )
    seconds = time.perf_counter() - started
    ok, artifact = True, None
    if isinstance(output, ToolMessage):
        ok = output.status != "error"
        artifact = output.artifact
        text = content_to_text(output.content)
    else:
        text = content_to_text(output)
    if len(text) > TOOL_TEXT_CHARS:  # keep the model's context for the rest of the run
        text = f"{text[:TOOL_TEXT_CHARS]}\n[… {len(text) - TOOL_TEXT_CHARS} more characters cut]"
    hits: list[SearchHit] = []
    cached = False
    error_kind = None
    if isinstance(artifact, dict) and "hits" in artifact:
        hits = [SearchHit.model_validate(hit) for hit in artifact.get("hits") or []]
        ok = ok and bool(artifact.get("ok", True))
        cached = bool(artifact.get("cached"))
        error_kind = artifact.get("error_kind")
    return ToolResult(
        **base, ok=ok, text=text, hits=hits, error_kind=error_kind, cached=cached, seconds=seconds
    )


def finished_event(result: ToolResult) -> ToolCallFinished:
    return ToolCallFinished(
        call_id=result.call_id,
        tool=result.tool,
        ok=result.ok,
        result_text=result.text,
        result_count=len(result.hits) if result.kind == "search" else None,
        top_results=result.hits[:3],
        kind=result.kind,
        cached=result.cached,
        seconds=round(result.seconds, 3),
        round=result.round,
        error_kind=result.error_kind,
    )


async def check_round(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """The result check after a round of tools (see agents.react.checks)."""
    ctx, emit = runtime.context, runtime.stream_writer
    round_number = state["round"]
    results = state.get("results", [])
    if state.get("timed_out"):
        verdict = time_verdict(ctx.config, ctx.language)
    elif state.get("skipped_calls"):
        verdict = calls_verdict(ctx.config, ctx.language, skipped=state["skipped_calls"])
    else:
        verdict = await check_results(
            CheckInput(
                question=ctx.question,
                round=round_number,
                max_iterations=ctx.config.max_iterations,
                elapsed_seconds=ctx.elapsed(),
                max_execution_time=ctx.config.max_execution_time,
                round_results=[r for r in results if r.round == round_number],
                all_results=results,
                min_result_chars=ctx.config.min_result_chars,
            ),
            ctx.config,
            ctx.language,
            calls_made=len(results),
        )
    emit_decision(emit, verdict, round_number)
    ctx.trace("agent round %d decision: %s", round_number, verdict.reason)
    return {"verdict": verdict}


# --- routes and the graph ------------------------------------------------------------------


def after_reasoning(state: AgentState) -> Literal["run_tools", "write_answer"]:
    verdict = state.get("verdict")
    return "run_tools" if verdict is not None and verdict.continue_ else "write_answer"


def after_check(state: AgentState) -> Literal["reason", "write_answer"]:
    verdict = state.get("verdict")
    return "reason" if verdict is not None and verdict.continue_ else "write_answer"


def build_agent_graph() -> CompiledStateGraph:
    graph = StateGraph(AgentState, context_schema=RunContext)
    graph.add_node("reason", reason)
    graph.add_node("run_tools", run_tools)
    graph.add_node("check_results", check_round)
    graph.add_node("write_answer", write_answer)
    graph.add_edge(START, "reason")
    graph.add_conditional_edges("reason", on_the_loop(after_reasoning))
    graph.add_edge("run_tools", "check_results")
    graph.add_conditional_edges("check_results", on_the_loop(after_check))
    graph.add_edge("write_answer", END)
    return graph.compile(name="react_agent")


def react_system_prompt(template: str, tools: list[BaseTool], max_iterations: int) -> str:
    return render_prompt(
        template,
        tools=[
            {
                "name": t.name,
                "kind": tool_kind(t, t.name),
                "description": " ".join((t.description or "").split())[:400],
            }
            for t in tools
        ],
        max_iterations=max_iterations,
        today=dt.date.today().isoformat(),
    )


def bind_tools(model: BaseChatModel | Runnable, tools: list[BaseTool]) -> Runnable:
    if not tools:
        return model
    with contextlib.suppress(NotImplementedError, AttributeError):
        return model.bind_tools(tools)  # type: ignore[union-attr]
    return model
