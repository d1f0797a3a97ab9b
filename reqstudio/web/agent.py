"""Agent mode in the browser: every step of the ReAct loop live, the answer streamed in its
own message, and token / call / time statistics under it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import chainlit as cl
from chainlit.utils import utc_now
from mcp import ClientSession

from reqstudio.errors import describe_failure
from reqstudio.events import BaseEvent
from reqstudio.modes.agent import events
from reqstudio.modes.agent.checks import could_become_instructions, echoes_instructions
from reqstudio.modes.agent.engine import ReactAgent
from reqstudio.modes.agent.outcome import AgentEnding, agent_outcome, ending_of
from reqstudio.modes.agent.state import AgentConfig, AgentMemory
from reqstudio.settings import ModelSpec, SettingsError
from reqstudio.tools.confirmation import guard_side_effects
from reqstudio.tools.mcp_tools import (
    McpConfigError,
    McpToolbox,
    SharedMcpServers,
    resolve_mcp_config,
)
from reqstudio.tools.web_search import WebSearch, load_backend
from reqstudio.web.agent_tools import (
    arguments_block,
    full_result,
    plain_arguments,
    readable_result,
    shortened,
)
from reqstudio.web.edits import (
    ANSWERED,
    drop_discarded_steps,
    note_answer,
    regenerate_action,
    was_answered,
)
from reqstudio.web.endings import ending_mark
from reqstudio.web.live import LiveRun, Look, Views
from reqstudio.web.modes import catalog_mode
from reqstudio.web.session import (
    finish_step,
    open_top_level_step,
    runtime,
    send_finished_step,
    send_notice,
    send_top_level,
    top_level_message,
)
from reqstudio.web.settings_panel import (
    choices,
    chosen_settings,
    model_select,
    thread_factory,
    thread_model,
)
from reqstudio.web.texts import Catalog, counted, lang, token_figure
from reqstudio.web.thread_state import persist_thread_state, refresh_thread_state
from reqstudio.web.tool_confirmation import ask_in_chat
from reqstudio.web.waits import WaitLines

log = logging.getLogger("reqstudio.agent")

MEMORY_KEY = "agent_memory"


tr = Catalog("agent")


def closing_mark(ending: AgentEnding) -> str:
    """The mark of how a run ended, read from its outcome (`reqstudio.modes.agent.outcome`) as
    `reqstudio agent`'s exit code is. A whole answer is shown as it is (it is the pass); every
    other ending's notice starts with its mark."""
    return ending_mark(agent_outcome(ending))


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
    """What a tool step shows of the result, in words (`reqstudio.web.agent_tools`); for a
    failed search, why, in the user's language (the model's text carries the search
    library's English exception)."""
    if event.kind == "search" and not event.ok and event.error_kind:
        return tr(f"search_error_{event.error_kind}")
    if event.kind == "search" and event.ok:  # the hits follow in their own step, in words
        return tr("found", count=counted(event.result_count or 0, "result"))
    return readable_result(event.result_text)[0]


def worth_folding(event: events.ToolCallFinished) -> bool:
    """Whether the step's words leave out or reshape some of what the model read."""
    return event.kind != "search" and readable_result(event.result_text)[1]


async def fold_full_result(step: cl.Step, text: str) -> None:
    """The whole result inside the tool's step, folded: there for whoever wants it."""
    child = cl.Step(
        name=tr("full_result"), type="tool", parent_id=step.id, default_open=False,
        show_input=False,
    )  # fmt: skip
    child.start = child.end = utc_now()
    child.output = full_result(text)
    await child.send()


class AgentViews(Views):
    """One run's events as Chainlit steps and messages: the function-call model's reasoning in
    the run's open step (`LiveRun.step`), each tool call in a step of its own, the answer in
    its message."""

    def __init__(self):
        self.tool_steps: dict[str, cl.Step] = {}
        self.tool_arguments: dict[str, dict[str, Any]] = {}  # by call id
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
        text = tr("no_answer_small" if embedded else "no_answer")
        self.answer.content = f"{closing_mark('no_answer')} {text}"
        await self.answer.send()

    @property
    def thinking(self) -> cl.Step | None:
        return self.live.step

    def look(self, event: BaseEvent) -> Look | None:
        if isinstance(event, events.ThinkingStarted):
            return Look(tr("thinking", round=event.round, model=event.model), "llm")
        return None

    def into_step(self, event: BaseEvent) -> bool:
        return isinstance(event, events.ThinkingToken)

    async def show(self, event: Any) -> None:
        if isinstance(event, events.ThinkingStarted) and self.thinking is not None:
            self.thinking.metadata = {"model": event.model, "round": event.round}
        elif isinstance(event, events.ThinkingFinished) and self.thinking is not None:
            model = (self.thinking.metadata or {}).get("model", "")
            plans = [
                tr("plan", tool=c.tool, args=plain_arguments(c.arguments)) for c in event.tool_calls
            ] or [tr("no_tools")]
            await self.live.close_step(
                name=tr("thought", round=event.round, model=model),
                output="\n\n".join([event.text.strip(), *plans]).strip(),
            )
        elif isinstance(event, events.ToolCallStarted):
            name = (
                tr("search") if event.kind == "search" else f"{event.kind.upper()} · {event.tool}"
            )
            icon = "globe" if event.kind == "search" else "wrench"
            step = await open_top_level_step(name, "tool", icon=icon, show_input=False)
            step.output = f"{arguments_block(event.arguments)}\n\n{tr('running')}"
            await step.update()
            self.tool_steps[event.call_id] = step
            self.tool_arguments[event.call_id] = event.arguments
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
        arguments = self.tool_arguments.pop(event.call_id, {})
        status = tr("done") if event.ok else tr("failed_status")
        if event.cached:
            status += " " + tr("cached")
        if step is not None:
            result = tool_result_text(event)
            if worth_folding(event):  # the whole result, as the model read it, one click away
                await fold_full_result(step, event.result_text)
            await finish_step(
                step,
                "done" if event.ok else "failed",
                output=f"{arguments_block(arguments)}\n\n**{status}** · {event.seconds:.1f} s"
                f"\n\n**{tr('result')}**\n\n{result}",
            )
        if event.kind == "search" and event.ok:
            name = tr("search_results")
            lines = [tr("found", count=counted(event.result_count or 0, "result"))]
            for number, hit in enumerate(event.top_results[:3], 1):
                lines.append(f"{number}. **{hit.title}** — {hit.snippet}\n   {hit.url}")
            await send_finished_step(name, "tool", "\n\n".join(lines), icon="globe")

    async def failed(self, event: events.Failed) -> None:
        """The failure in one message: the partial answer already streamed is completed
        with the notice in place, never shown a second time in a new message."""
        # ⚠️ for the time limit during the answer (exit code 4), ❌ for a failure (1)
        parts = [f"{closing_mark(ending_of(event))} {event.message}"]
        if event.partial_answer and not echoes_instructions(event.partial_answer):
            parts.insert(0, event.partial_answer)
        if event.kept_results:
            parts.append(tr("kept"))
            parts += [f"- `{r.tool}` ({plain_arguments(r.arguments)}): "
                      f"{shortened(readable_result(r.result_text)[0], 300)}"
                      for r in event.kept_results]  # fmt: skip
        content = "\n\n".join(parts)
        if self.answer is not None and not self.echoed:
            self.answer.content = content
            await self.answer.send()
            return
        await send_top_level(content)

    async def close_open_steps(self, outcome: str, note: str) -> None:
        """Every ending (answer, failure, stop) leaves no step running."""
        await self.live.close_step(outcome, note=note)
        for step in self.tool_steps.values():
            await finish_step(step, outcome, note=note)
        self.tool_steps.clear()


def stats_markdown(stats: events.Stats) -> str:
    """The run's numbers. A count the provider did not send reads "unknown", as in every
    mode (`token_figure`), never 0; a call the time limit cut off is counted with the calls."""
    # A run of calls that all reported nothing: a server that sends no usage (llama.cpp)
    silent = stats.total_tokens == 0 and any(u.calls for u in stats.per_model.values())
    total_known = stats.tokens_known and not silent
    rows = [f"**{tr('stats_title')}**", "", tr("stats_header"), "|---|---|---|---|---|---|"]
    for role, usage in stats.per_model.items():
        role_name = tr(f"role_{role}") if role in ("function_call", "answer") else role
        known = usage.tokens_known and not silent
        calls = str(usage.calls + usage.unfinished)
        if usage.unfinished:
            calls += tr("calls_unfinished", count=usage.unfinished)
        rows.append(
            f"| {usage.model} | {role_name} | {calls} | "
            f"{token_figure(usage.input_tokens, known)} | "
            f"{token_figure(usage.output_tokens, known)} | {usage.seconds:.1f} |"
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
            tokens=token_figure(stats.total_tokens, total_known),
            tool_calls=counted(stats.tool_calls, "tool_call"),
            rounds=counted(stats.rounds, "round"),
            cost=cost,
        ),
    ]
    if not total_known:
        rows.append(tr("no_usage"))
    return "\n".join(rows)


async def on_agent_message(message: cl.Message) -> None:
    question = (message.content or "").strip()
    if not question:
        return
    await open_toolbox()
    await refresh_thread_state()  # the turns another tab took meanwhile reach the model too
    try:
        agent = build_agent()
    except (SettingsError, ValueError) as error:
        await cl.Message(content=tr("config_error", error=error)).send()
        return
    # an edited or regenerated question: what followed goes, from the memory and the page
    if agent.memory.rewind_to(message.id) or was_answered(message.id):
        await drop_discarded_steps(message.id)
    asked_before = len(agent.memory.turns)
    view = AgentViews()
    live = LiveRun(view)
    try:
        # the function-call model's waits in its round's step; the answer model's at the top
        async with WaitLines(where=lambda: live.step):
            async for event in agent.run(question):
                await live.show(event)
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
        await send_top_level(f"{closing_mark('failed')} {describe_failure(exc, lang())}")
    finally:
        agent.memory.tag_turns_since(asked_before, message.id)
        merging = {MEMORY_KEY: turns_added_again(agent.memory, asked_before, message.id)}
        if view.answer is not None and view.answer.id:
            await regenerate_action(message.id).send(for_id=view.answer.id)
            merging[ANSWERED] = note_answer(view.answer.id, message.id)
        cl.user_session.set(MEMORY_KEY, agent.memory.dump())
        await persist_thread_state(merging)


def turns_added_again(
    memory: AgentMemory, asked_before: int, message_id: str | None
) -> Callable[[dict | None], dict]:
    """How to add the turns `memory` recorded after its first `asked_before` (this message's)
    to another memory of the thread (another tab's, saved meanwhile): the memory rewound to
    the message as this one was, then these turns with their tool records numbered anew."""
    turns = [turn.model_copy() for turn in memory.turns[asked_before:]]
    records = [record for record in memory.tool_records if record.turn > asked_before]

    def add_to(stored: dict | None) -> dict:
        other = AgentMemory.load(stored)
        other.rewind_to(message_id)
        shift = len(other.turns) - asked_before
        other.turns += [turn.model_copy() for turn in turns]
        other.tool_records += [r.model_copy(update={"turn": r.turn + shift}) for r in records]
        return other.dump()

    return add_to


AGENT_MODE = catalog_mode(
    "Agent",
    editable=True,
    uses_mcp=True,
    on_message=on_agent_message,
    on_start=on_agent_start,
    on_resume=on_agent_resume,
    settings=settings_widgets,
    thread_title=lambda question: " ".join(question.split())[:80],
)
