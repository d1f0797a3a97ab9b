"""Agent mode in the browser: every step of the ReAct loop live, the answer streamed in its
own message, and token / call / time statistics under it."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import chainlit as cl
from mcp import ClientSession

from agents.react import events
from agents.react.checks import could_become_instructions, echoes_instructions
from agents.react.engine import ReactAgent
from agents.react.state import AgentConfig, AgentMemory
from reqstudio.errors import describe_failure
from reqstudio.settings import ModelSpec, SettingsError
from tools.confirmation import guard_side_effects
from tools.mcp_tools import McpConfigError, McpToolbox, SharedMcpServers, resolve_mcp_config
from tools.web_search import WebSearch, load_backend
from ui.edits import regenerate_action
from ui.modes import catalog_mode
from ui.session import (
    finish_step,
    open_top_level_step,
    persist_thread_state,
    runtime,
    send_finished_step,
    send_notice,
    send_top_level,
    top_level_message,
)
from ui.settings_panel import choices, chosen_settings, model_select, thread_factory, thread_model
from ui.texts import Catalog, counted, lang
from ui.tool_confirmation import ask_in_chat

log = logging.getLogger("reqstudio.agent")

MEMORY_KEY = "agent_memory"


tr = Catalog("agent")


# mcp.json's servers: one set per process, shared by every Agent session (closed at shutdown).
SHARED_MCP_SERVERS = SharedMcpServers()


def settings_widgets() -> list:
    return [
        model_select("agent_fc_model", tr("settings_fc"), tr("settings_default")),
        model_select("agent_answer_model", tr("settings_answer"), tr("settings_default")),
    ]


def chosen_spec(select_key: str, configured: ModelSpec | None) -> ModelSpec | None:
    """The model the user picked for this role in the settings; else the thread's model when
    one is picked (None: the factory applies it), else the configured one. A name that is not
    among the configured models counts as no pick."""
    name = chosen_settings().get(select_key)
    picked = choices().get(name) if isinstance(name, str) else None
    if picked is not None:
        return picked
    return None if thread_model().spec is not None else configured


async def on_agent_start() -> None:
    toolbox = await open_toolbox()
    tools = ["web_search", *[t.name for t in toolbox.tools]]
    await send_notice(tr("intro", tools=", ".join(f"`{t}`" for t in tools)))


async def open_toolbox() -> McpToolbox:
    toolbox = cl.user_session.get("mcp_toolbox")
    if toolbox is not None:
        return toolbox
    try:
        shared = await SHARED_MCP_SERVERS.get(resolve_mcp_config(runtime().settings.mcp_config))
    except McpConfigError as error:
        await cl.Message(content=f"⚠️ {error}").send()
        shared = await SHARED_MCP_SERVERS.get(None)
    toolbox = McpToolbox.for_session(shared)
    for status in toolbox.failed:
        await send_notice(tr("mcp_failed", name=status.name, error=status.error))
    cl.user_session.set("mcp_toolbox", toolbox)
    cl.user_session.set("web_search", WebSearch(load_backend(runtime().settings.search_backend)))
    return toolbox


async def on_agent_resume(thread: dict) -> None:
    await open_toolbox()


async def close_agent_session() -> None:
    toolbox = cl.user_session.get("mcp_toolbox")
    if toolbox is not None:
        await toolbox.aclose()


async def on_mcp_connect(connection: Any, session: ClientSession) -> None:
    toolbox = await open_toolbox()
    status = await toolbox.add_session(connection.name, session)
    if status.ok:
        await cl.Message(
            content=tr("mcp_added", name=connection.name, tools=", ".join(status.tools))
        ).send()
    else:
        await cl.Message(content=tr("mcp_failed", name=connection.name, error=status.error)).send()


async def on_mcp_disconnect(name: str, session: ClientSession) -> None:
    toolbox = cl.user_session.get("mcp_toolbox")
    if toolbox is not None:
        toolbox.remove_server(name)


def build_agent() -> ReactAgent:
    settings = runtime().settings
    config = AgentConfig.from_settings(
        settings,
        language=lang(),
        function_call_spec=chosen_spec("agent_fc_model", settings.agent_function_call_model),
        answer_spec=chosen_spec("agent_answer_model", settings.agent_answer_model),
    )
    toolbox: McpToolbox = cl.user_session.get("mcp_toolbox")
    search: WebSearch = cl.user_session.get("web_search")
    memory = AgentMemory.load(cl.user_session.get(MEMORY_KEY))
    # a tool that may change things asks the user before each call (prompt injection)
    mcp_tools = guard_side_effects(toolbox.tools, ask_in_chat, settings.mcp_read_only_names)
    return ReactAgent(
        thread_factory(),
        [search.as_tool(), *mcp_tools],
        config,
        memory=memory,
    )


def tool_result_text(event: events.ToolCallFinished) -> str:
    """What a tool step shows: the result; for a failed search, why, in the user's language
    (the model's text carries the search library's English exception)."""
    if event.kind == "search" and not event.ok and event.error_kind:
        return tr(f"search_error_{event.error_kind}")
    return event.result_text


class AgentRunView:
    """Turns one run's events into Chainlit steps and messages."""

    def __init__(self):
        self.thinking: cl.Step | None = None
        self.tool_steps: dict[str, cl.Step] = {}
        self.answer: cl.Message | None = None
        self.answer_text = ""  # what the answer model wrote so far
        self.shown = 0  # how much of it is on screen
        self.echoed = False  # it gave back the app's instructions: never shown

    async def answer_token(self, text: str) -> None:
        """Stream the answer, holding back what could still be the app's own instructions."""
        self.answer_text += text
        if self.echoed:
            return
        if echoes_instructions(self.answer_text):
            await self.show_no_answer()
            return
        if could_become_instructions(self.answer_text):
            return
        if self.answer is None:
            self.answer = top_level_message()
        await self.answer.stream_token(self.answer_text[self.shown :])
        self.shown = len(self.answer_text)

    async def answer_restarted(self, kept: str) -> None:
        """A broken try is dropped from the screen: the message shows only what is kept."""
        self.answer_text = kept
        if self.echoed:
            return
        self.shown = min(self.shown, len(kept))
        if self.answer is not None:
            self.answer.content = kept[: self.shown]
            await self.answer.update()

    async def show_no_answer(self) -> None:
        self.echoed = True
        if self.answer is None:
            self.answer = top_level_message()
        embedded = runtime().endpoint.embedded
        self.answer.content = tr("no_answer_small" if embedded else "no_answer")
        await self.answer.send()

    async def show(self, event: Any) -> None:
        if isinstance(event, events.ThinkingStarted):
            self.thinking = await open_top_level_step(
                tr("thinking", round=event.round, model=event.model), "llm"
            )
            self.thinking.metadata = {"model": event.model, "round": event.round}
        elif isinstance(event, events.ThinkingToken) and self.thinking is not None:
            await self.thinking.stream_token(event.text)
        elif isinstance(event, events.ThinkingFinished) and self.thinking is not None:
            model = (self.thinking.metadata or {}).get("model", "")
            plans = [
                tr("plan", tool=c.tool, args=json.dumps(c.arguments, ensure_ascii=False))
                for c in event.tool_calls
            ] or [tr("no_tools")]
            await finish_step(
                self.thinking,
                name=tr("thought", round=event.round, model=model),
                output="\n\n".join([event.text.strip(), *plans]).strip(),
            )
            self.thinking = None
        elif isinstance(event, events.ToolCallStarted):
            name = (
                tr("search") if event.kind == "search" else f"{event.kind.upper()} · {event.tool}"
            )
            icon = "globe" if event.kind == "search" else "wrench"
            step = await open_top_level_step(name, "tool", icon=icon, show_input="json")
            step.input = json.dumps(event.arguments, ensure_ascii=False)
            step.output = tr("running")
            await step.update()
            self.tool_steps[event.call_id] = step
        elif isinstance(event, events.ToolCallFinished):
            await self.tool_finished(event)
        elif isinstance(event, events.Decision):
            name = tr("decision_go" if event.continue_ else "decision_stop")
            await send_finished_step(name, "run", event.reason, icon="git-branch")
        elif isinstance(event, events.LoopDetected):
            await send_top_level(f"⚠️ {event.message}")
        elif isinstance(event, events.HandOver):
            await send_top_level(tr("handover", reason=event.reason, model=event.answer_model))
        elif isinstance(event, events.AnswerToken):
            await self.answer_token(event.text)
        elif isinstance(event, events.AnswerRestarted):
            await self.answer_restarted(event.kept)
        elif isinstance(event, events.AnswerFinished):
            if self.echoed or echoes_instructions(event.text):
                await self.show_no_answer()
                return
            if self.answer is None:
                self.answer = top_level_message()
            self.answer.content = event.text
            await self.answer.send()
        elif isinstance(event, events.Failed):
            await self.close_open_steps("failed", event.message)
            await self.failed(event)
        elif isinstance(event, events.Stats):
            await send_top_level(stats_markdown(event))

    async def tool_finished(self, event: events.ToolCallFinished) -> None:
        step = self.tool_steps.pop(event.call_id, None)
        status = tr("done") if event.ok else tr("failed_status")
        if event.cached:
            status += " " + tr("cached")
        if step is not None:
            await finish_step(
                step,
                "done" if event.ok else "failed",
                output=f"**{status}** · {event.seconds:.1f} s\n\n{tool_result_text(event)}",
            )
        if event.kind == "search" and event.ok:
            name = tr("search_results")
            lines = [tr("found", count=event.result_count or 0)]
            for number, hit in enumerate(event.top_results[:3], 1):
                lines.append(f"{number}. **{hit.title}** — {hit.snippet}\n   {hit.url}")
            await send_finished_step(name, "tool", "\n\n".join(lines), icon="globe")

    async def failed(self, event: events.Failed) -> None:
        """The failure in one message: the partial answer already streamed is completed
        with the notice in place, never shown a second time in a new message."""
        parts = [f"⚠️ {event.message}"]
        if event.partial_answer and not echoes_instructions(event.partial_answer):
            parts.insert(0, event.partial_answer)
        if event.kept_results:
            parts.append(tr("kept"))
            parts += [f"- `{r.tool}` {json.dumps(r.arguments, ensure_ascii=False)}: {r.result_text[:300]}"
                      for r in event.kept_results]  # fmt: skip
        content = "\n\n".join(parts)
        if self.answer is not None and not self.echoed:
            self.answer.content = content
            await self.answer.send()
            return
        await send_top_level(content)

    async def close_open_steps(self, outcome: str, note: str) -> None:
        """Every ending (answer, failure, stop) leaves no step running."""
        for step in [self.thinking, *self.tool_steps.values()]:
            await finish_step(step, outcome, note=note)
        self.thinking = None
        self.tool_steps.clear()


UNKNOWN = "—"


def stats_markdown(stats: events.Stats) -> str:
    """The run's numbers; a count the provider did not send is shown as unknown (—), not 0."""
    usage_unknown = stats.total_tokens == 0 and any(u.calls for u in stats.per_model.values())
    rows = [f"**{tr('stats_title')}**", "", tr("stats_header"), "|---|---|---|---|---|---|"]
    for role, usage in stats.per_model.items():
        role_name = tr(f"role_{role}") if role in ("function_call", "answer") else role
        known = not usage_unknown and (usage.input_tokens or usage.output_tokens or not usage.calls)
        tokens_in = usage.input_tokens if known else UNKNOWN
        tokens_out = usage.output_tokens if known else UNKNOWN
        rows.append(
            f"| {usage.model} | {role_name} | {usage.calls} | {tokens_in} | {tokens_out} | "
            f"{usage.seconds:.1f} |"
        )
    cost = tr("cost_unknown") if stats.estimated_cost is None else f"${stats.estimated_cost:.4f}"
    phases = stats.phase_seconds
    # The engine's "tools" phase runs from the question to the hand-over: the function-call
    # model's reasoning is in it. Each phase's time goes to its own phase here.
    reasoning = stats.per_model.get("function_call")
    reasoning_seconds = reasoning.seconds if reasoning is not None else 0.0
    tool_seconds = max(phases.get("tools", 0.0) - reasoning_seconds, 0.0)
    rows += [
        "",
        tr(
            "phases",
            reasoning=reasoning_seconds,
            tools=tool_seconds,
            answer=phases.get("answer", 0.0),
            total=phases.get("total", 0.0),
            tokens=tr("tokens_unknown") if usage_unknown else stats.total_tokens,
            tool_calls=counted(stats.tool_calls, "tool call", zh_unit="次工具调用"),
            rounds=counted(stats.rounds, "round", zh_unit="轮"),
            cost=cost,
        ),
    ]
    if usage_unknown:
        rows.append(tr("no_usage"))
    return "\n".join(rows)


async def on_agent_message(message: cl.Message) -> None:
    question = (message.content or "").strip()
    if not question:
        return
    await open_toolbox()
    try:
        agent = build_agent()
    except (SettingsError, ValueError) as error:
        await cl.Message(content=tr("config_error", error=error)).send()
        return
    agent.memory.rewind_to(message.id)  # an edited or regenerated question: what followed goes
    asked_before = len(agent.memory.turns)
    view = AgentRunView()
    try:
        async for event in agent.run(question):
            await view.show(event)
        await view.close_open_steps("done", "")
    except asyncio.CancelledError:
        await view.close_open_steps("stopped", tr("stopped"))
        if view.answer is not None:
            view.answer.content += "\n\n" + tr("stopped")
            await view.answer.send()
        else:
            await send_top_level(tr("stopped"))
        raise
    except Exception as exc:  # the engine reports failures as events; this is a last guard
        log.exception("agent run failed")
        await view.close_open_steps("failed", describe_failure(exc, lang()))
        await send_top_level(f"⚠️ {describe_failure(exc, lang())}")
    finally:
        agent.memory.tag_turns_since(asked_before, message.id)
        if view.answer is not None and view.answer.id:
            await regenerate_action(message).send(for_id=view.answer.id)
        cl.user_session.set(MEMORY_KEY, agent.memory.dump())
        await persist_thread_state()


AGENT_MODE = catalog_mode(
    "Agent",
    editable=True,
    on_message=on_agent_message,
    on_start=on_agent_start,
    on_resume=on_agent_resume,
    settings=settings_widgets,
    thread_title=lambda question: " ".join(question.split())[:80],
)
