"""A team run: the scheduler and the agents that think.

Each agent is a chat model with the society's tools bound, run as a small LangGraph loop per
turn (think → act → think … until it calls no tool). Agents with waiting messages run
concurrently; the run ends when root sends its answer to the user, or at a limit (messages,
time, tokens, a loop), or when nobody has anything left to do, and says which. Every event is
recorded to the store as it happens."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing
from dataclasses import dataclass, field, fields
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime

from reqstudio.calls import RetryPolicy, policy_for
from reqstudio.edges import on_the_loop
from reqstudio.errors import describe_failure, failure_of
from reqstudio.llm import ModelFactory
from reqstudio.modes.team.calling import agent_answer
from reqstudio.modes.team.context import delivered, system_prompt
from reqstudio.modes.team.events import (
    STOP_NOTICES,
    AgentFailed,
    AnswerToken,
    RunFinished,
    TeamEvent,
    TurnFinished,
    TurnStarted,
    record_of,
)
from reqstudio.modes.team.protocol import ROOT_ID, USER_ID, Message
from reqstudio.modes.team.society import AgentSociety, SocietyLimits
from reqstudio.modes.team.store import EventStore
from reqstudio.modes.team.tools import society_tools
from reqstudio.settings import Settings

log = logging.getLogger("reqstudio.team")


def _setting(limit: str) -> Any:
    """The default of the setting `team_<limit>` (TEAM_<LIMIT>): one place says it."""
    return Settings.model_fields[f"team_{limit}"].default


@dataclass
class TeamConfig:
    """A team run's limits; each is the setting `team_<name>` (`from_settings`)."""

    max_agents: int = _setting("max_agents")
    max_depth: int = _setting("max_depth")
    max_messages: int = _setting("max_messages")
    max_execution_time: float = float(_setting("max_execution_time"))
    max_tokens: int = _setting("max_tokens")
    max_steps_per_turn: int = _setting("max_steps_per_turn")

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> TeamConfig:
        values = {f.name: getattr(settings, f"team_{f.name}") for f in fields(cls)}
        values["max_execution_time"] = float(values["max_execution_time"])
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


@dataclass
class Mind:
    """An agent's model, tools and conversation so far (without the system prompt, which is
    rebuilt each turn so the contact list is current)."""

    model: Runnable
    tools: dict[str, BaseTool]
    history: list[BaseMessage] = field(default_factory=list)


class TurnState(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]
    steps: int


@dataclass
class TurnContext:
    run: TeamRun
    agent_id: str


# --- the turn graph ------------------------------------------------------------------------


async def think(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    run, agent_id = runtime.context.run, runtime.context.agent_id
    message = await run.call_model(agent_id, state["messages"])
    return {"messages": [message], "steps": state["steps"] + 1}


async def act(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    """Run the tool calls in order (a role is created before it is spawned); a malformed call
    gets a readable error as its result, never an exception."""
    run, agent_id = runtime.context.run, runtime.context.agent_id
    message = state["messages"][-1]
    assert isinstance(message, AIMessage)
    with run.acting(agent_id):
        return await _act(run, agent_id, message)


async def _act(run: TeamRun, agent_id: str, message: AIMessage) -> dict[str, Any]:
    mind = run.minds[agent_id]
    results: list[BaseMessage] = []
    stats = run.society.agents[agent_id].stats
    for call in message.tool_calls:
        if stats:
            stats.tool_calls += 1
        tool = mind.tools.get(call["name"])
        if tool is None:
            text = run.society.refuse(
                agent_id,
                call["name"],
                "unknown_tool",
                f"there is no tool '{call['name']}'; tools: {', '.join(mind.tools)}",
            ).text()
            results.append(ToolMessage(text, tool_call_id=call["id"], status="error"))
            continue
        result = await tool.ainvoke(call)
        if getattr(result, "status", "") == "error":
            run.society.refuse(agent_id, call["name"], "invalid_arguments", str(result.content))
        results.append(result)
    for bad in message.invalid_tool_calls:
        if stats:
            stats.tool_calls += 1
        name = bad.get("name") or "?"
        text = run.society.refuse(
            agent_id,
            name,
            "malformed_tool_call",
            f"the arguments of your {name} call are not valid JSON ({bad.get('error') or 'parse error'}): "
            f"{(bad.get('args') or '')[:300]!r}. Call {name} again with a JSON object.",
        ).text()
        results.append(ToolMessage(text, tool_call_id=bad.get("id") or "", status="error"))
    return {"messages": results}


def after_think(state: TurnState, runtime: Runtime[TurnContext]) -> Literal["act", "__end__"]:
    last = state["messages"][-1]
    if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls):
        return "act"
    return END


def after_act(state: TurnState, runtime: Runtime[TurnContext]) -> Literal["think", "__end__"]:
    run = runtime.context.run
    if run.ending() or state["steps"] >= run.config.max_steps_per_turn:
        return END
    return "think"


def build_turn_graph():
    graph = StateGraph(TurnState, context_schema=TurnContext)
    graph.add_node("think", think)
    graph.add_node("act", act)
    graph.add_edge(START, "think")
    graph.add_conditional_edges("think", on_the_loop(after_think))
    graph.add_conditional_edges("act", on_the_loop(after_act))
    return graph.compile()


TURN_GRAPH = build_turn_graph()


# --- the run -------------------------------------------------------------------------------


class TeamRun:
    def __init__(
        self,
        factory: ModelFactory,
        config: TeamConfig | None = None,
        store: EventStore | None = None,
        run_id: str | None = None,
    ):
        self.factory = factory
        self.config = config or TeamConfig()
        self.store = store
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.policy: RetryPolicy = policy_for("team", factory.settings)
        self.society = AgentSociety(
            SocietyLimits(
                max_agents=self.config.max_agents,
                max_depth=self.config.max_depth,
                max_messages=self.config.max_messages,
            ),
            on_delivery=self._on_delivery,
        )
        self.society.subscribe(self._record)
        self.minds: dict[str, Mind] = {}
        # (agent id, start, end) of every model call, monotonic seconds: the benchmark's
        # critical path (calls of agents in parallel count once)
        self.model_calls: list[tuple[str, float, float]] = []
        self.finished: RunFinished | None = None
        self._queue: asyncio.Queue[TeamEvent | None] = asyncio.Queue()
        self._wake = asyncio.Event()
        self._stop_requested = False
        self._stop_reason: str | None = None
        self._stop_detail = ""
        self._started = time.monotonic()
        # children whose last turn ended in plain text and delivered nothing: their words
        self._unheard: dict[str, str] = {}
        self._root_note = ""
        self._task = ""
        self._early: list[TeamEvent] = list(self.society.events)  # root's creation
        self._acting: set[str] = set()  # agents carrying out a reply's tool calls

    # --- events and the record ----------------------------------------------------------

    def _record(self, event: TeamEvent) -> None:
        if self.store is not None:
            self.store.append(self.run_id, record_of(event))
        self._queue.put_nowait(event)

    def _on_delivery(self, message: Message) -> None:
        if message.to == USER_ID:  # what the user hears is what was delivered, once
            self._queue.put_nowait(AnswerToken(text=message.content, message_id=message.id))
        if message.sender in self._unheard:
            del self._unheard[message.sender]
        self._wake.set()

    def ending(self) -> bool:
        return (
            self._stop_reason is not None
            or self._stop_requested
            or self.society.answer is not None
            or self.society.halt is not None
        )

    @contextlib.contextmanager
    def acting(self, agent_id: str) -> Iterator[None]:
        """While `agent_id` carries out the tool calls of one reply: a reply's calls are one
        unit, which the end of the run waits for (`_schedule`)."""
        self._acting.add(agent_id)
        try:
            yield
        finally:
            self._acting.discard(agent_id)

    def stop(self) -> None:
        """Stop every agent now (the stop button); the record so far is kept."""
        self._stop_requested = True
        self._wake.set()

    # --- the model ------------------------------------------------------------------------

    def mind(self, agent_id: str) -> Mind:
        if agent_id not in self.minds:
            tools = society_tools(self.society, agent_id)
            # Root streams (a slow first token is not a hang); the others' whole answers come
            # faster in one piece (streamed tool-call arguments cost a re-parse per chunk).
            streaming = agent_id == ROOT_ID
            model = self.factory.for_role("team", streaming=streaming).bind_tools(tools)
            self.minds[agent_id] = Mind(model, {t.name: t for t in tools})
        return self.minds[agent_id]

    async def call_model(self, agent_id: str, messages: list[BaseMessage]) -> AIMessage:
        mind = self.mind(agent_id)
        context = [SystemMessage(system_prompt(self.society, agent_id)), *messages]
        started = time.monotonic()
        stats = self.society.agents[agent_id].stats
        try:
            reply = await agent_answer(
                mind.model, context, policy=self.policy, label=f"team {agent_id}"
            )
        finally:
            ended = time.monotonic()
            self.model_calls.append((agent_id, started, ended))
            if stats:
                stats.seconds += ended - started
        for index, call in enumerate([*reply.tool_calls, *reply.invalid_tool_calls]):
            if not call.get("id"):  # some providers send none; results must refer to the call
                call["id"] = f"call_{agent_id}_{len(messages)}_{index}"
        usage = reply.usage_metadata or {}
        if stats:
            stats.model_calls += 1
            stats.input_tokens += int(usage.get("input_tokens", 0))
            stats.output_tokens += int(usage.get("output_tokens", 0))
        used = sum(s.input_tokens + s.output_tokens for s in self.society.stats())
        if used > self.config.max_tokens and self._stop_reason is None:
            self._halt("tokens", f"{used} tokens used, limit {self.config.max_tokens}")
        return reply

    def _halt(self, reason: str, detail: str) -> None:
        if reason in ("tokens", "time"):
            self.society._limit(reason, detail)
        self._stop_reason = reason
        self._stop_detail = detail
        self._wake.set()

    # --- turns and scheduling -----------------------------------------------------------------

    async def _turn(self, agent_id: str) -> None:
        """One turn. The messages it reads stay in the inbox until the turn ends, and then,
        whatever the ending (done, failed, cancelled), they are in the agent's memory with
        all the turn did before it ended, so a later turn still has them."""
        mind = self.mind(agent_id)
        inbox = self.society.read_inbox(agent_id)
        self._unheard.pop(agent_id, None)  # words of an earlier turn are overtaken by this one
        self.society.emit(TurnStarted(agent_id=agent_id, inbox=len(inbox)))
        stats = self.society.agents[agent_id].stats
        calls_before = (stats.model_calls, stats.tool_calls) if stats else (0, 0)
        sent_before = self._sent_by(agent_id)
        seen: list[BaseMessage] = [*mind.history, *delivered(inbox)]
        try:
            stream = TURN_GRAPH.astream(
                {"messages": seen, "steps": 0},
                context=TurnContext(self, agent_id),
                config={"recursion_limit": 2 * self.config.max_steps_per_turn + 4},
                stream_mode="values",
            )
            async with aclosing(stream):  # closed in this task, however the loop ends
                async for state in stream:
                    seen = state["messages"]
        finally:
            mind.history = answered_calls_only(seen)
            self.society.done_reading(agent_id, inbox)
        last = mind.history[-1]
        note = str(last.content) if isinstance(last, AIMessage) and not last.tool_calls else ""
        if agent_id == ROOT_ID and note.strip():
            self._root_note = note.strip()
        elif note.strip() and self._sent_by(agent_id) == sent_before:
            self._unheard[agent_id] = note.strip()
        self.society.emit(
            TurnFinished(
                agent_id=agent_id,
                model_calls=(stats.model_calls - calls_before[0]) if stats else 0,
                tool_calls=(stats.tool_calls - calls_before[1]) if stats else 0,
                note=note[:2000],
            )
        )

    async def _schedule(self, task: str) -> None:
        self.society.submit_task(task)
        deadline = self._started + self.config.max_execution_time
        running: dict[str, asyncio.Task] = {}
        try:
            while True:
                if self._stop_requested:
                    self._stop_reason = "stopped"
                if self.society.answer is not None and self._stop_reason is None:
                    self._stop_reason = "answered"
                if self.society.halt is not None and self._stop_reason is None:
                    self._stop_reason = self.society.halt.reason
                    self._stop_detail = self.society.halt.detail
                if self._stop_reason is not None:
                    break
                for agent_id in self.society.with_inbox():
                    if agent_id not in running:
                        running[agent_id] = asyncio.create_task(
                            self._turn(agent_id), name=f"team-{agent_id}"
                        )
                if not running and self._forward_unheard():
                    continue
                if not running:
                    self._stop_reason = "idle"
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._halt("time", f"{self.config.max_execution_time:g} s")
                    break
                self._wake.clear()
                waiter = asyncio.create_task(self._wake.wait())
                done, _ = await asyncio.wait(
                    [*running.values(), waiter],
                    timeout=remaining,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                waiter.cancel()
                if not done:
                    self._halt("time", f"{self.config.max_execution_time:g} s")
                    break
                for agent_id, turn in list(running.items()):
                    if turn.done():
                        running.pop(agent_id)
                        self._turn_ended(agent_id, turn)
        finally:
            if self._stop_reason == "answered":
                # The rest of the reply that answered is carried out before the run ends (a
                # second answer is delivered, a copy refused, both shown); a turn waiting for
                # its model is not waited for. The stop button and the time limit cut at once.
                acting = [running[a] for a in self._acting if a in running]
                if acting:
                    await asyncio.wait(acting, timeout=max(0.0, deadline - time.monotonic()))
            for turn in running.values():
                turn.cancel()
            await asyncio.gather(*running.values(), return_exceptions=True)

    def _sent_by(self, agent_id: str) -> int:
        return sum(1 for m in self.society.messages if m.sender == agent_id)

    def _forward_unheard(self) -> bool:
        """When nothing else is going on, children's plain-text last words reach their
        parents (marked as forwarded) instead of no one; True if any was delivered."""
        forwarded = False
        for agent_id, words in list(self._unheard.items()):
            del self._unheard[agent_id]
            forwarded = self.society.forward_unsent_words(agent_id, words) or forwarded
        return forwarded

    def _turn_ended(self, agent_id: str, turn: asyncio.Task) -> None:
        error = turn.exception() if not turn.cancelled() else None
        if error is None:
            return
        # one line, no traceback: the failure is an event the user reads in plain words
        log.info("team agent %s failed: %s", agent_id, describe_failure(error, "en"))
        log.debug("team agent %s failure", agent_id, exc_info=error)
        reason = describe_failure(error, "en")
        self.society.emit(
            AgentFailed(agent_id=agent_id, error=reason, failure=failure_of(error).as_dict())
        )
        if agent_id == ROOT_ID and self._stop_reason is None:
            self._stop_reason = "failed"
            self._stop_detail = reason
        elif agent_id != ROOT_ID:
            self.society.report_failure(agent_id, reason)

    async def events(self, task: str) -> AsyncIterator[TeamEvent]:
        """Run the team on `task`, yielding every event as it happens; the last one is
        `RunFinished`."""
        if not task.strip():
            raise ValueError("the task is empty")
        self._task = task
        if self.store is not None:
            self.store.start_run(self.run_id, task)
            for event in self._early:
                self.store.append(self.run_id, record_of(event))
        for event in self._early:
            yield event
        scheduler = asyncio.create_task(self._schedule(task))
        scheduler.add_done_callback(lambda _: self._queue.put_nowait(None))
        try:
            while True:
                event = await self._queue.get()
                if event is None:
                    break
                yield event
            await scheduler
        except Exception as exc:  # a bug in the scheduler: the run still ends, recorded
            log.info("team run %s failed: %s", self.run_id, exc)  # the [end] line says so
            log.debug("team run failure", exc_info=exc)
            self._stop_reason = "failed"
            self._stop_detail = describe_failure(exc, "en")
        finally:
            if not scheduler.done():
                self.stop()
                scheduler.cancel()
                await asyncio.gather(scheduler, return_exceptions=True)
            finished = self._finish()
        yield finished

    async def run(self, task: str) -> RunFinished:
        async for event in self.events(task):
            if isinstance(event, RunFinished):
                return event
        raise AssertionError("a run always ends with RunFinished")

    def _finish(self) -> RunFinished:
        if self.finished is not None:
            return self.finished
        reason = self._stop_reason or "stopped"
        answer = self.society.answer.content if self.society.answer is not None else ""
        answers = [m.content for m in self.society.answers]
        detail = self._stop_detail or STOP_NOTICES[reason]
        finished = RunFinished(
            reason=reason,  # type: ignore[arg-type]
            detail=detail,
            answer=answer,
            answers=answers,
            root_note=self._root_note[:4000] if reason == "idle" else "",
            agents=[s.model_copy() for s in self.society.stats()],
            limits_hit=list(self.society.limits_hit),
            seconds=round(time.monotonic() - self._started, 3),
        )
        self.society.emit(finished)
        # emit() also queued it; the generator yields it itself after the queue closed
        if self.store is not None:
            self.store.finish_run(self.run_id, reason)
        self.finished = finished
        return finished

    async def export(self) -> dict[str, Any]:
        """The whole record as saved (JSON-ready); without a store, the events in memory."""
        if self.store is not None:
            await self.store.flush()
            return await asyncio.to_thread(self.store.export, self.run_id)
        return {
            "run_id": self.run_id,
            "task": self._task,
            "reason": self.finished.reason if self.finished else None,
            "events": [record_of(e) for e in self.society.events],
        }


def answered_calls_only(messages: list[BaseMessage]) -> list[BaseMessage]:
    """`messages` without a last model answer whose tool calls got no results (a turn that
    ended between thinking and acting): a provider refuses a history with such a call."""
    last = messages[-1] if messages else None
    if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls):
        return messages[:-1]
    return messages
