"""Agent mode's engine: `ReactAgent.run(question)` yields events while the ReAct loop works.

    search = WebSearch()                                  # one per chat session (its cache)
    async with McpToolbox.open("mcp.json") as mcp:
        agent = ReactAgent(factory, [search.as_tool(), *mcp.tools], AgentConfig.from_settings(s))
        async for event in agent.run("question"):
            ...

The engine knows nothing of Chainlit; the UI turns events into Steps and messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import httpx
import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

from reqstudio.calls import ROLE_POLICIES, IncompleteAnswerError
from reqstudio.errors import describe_failure
from reqstudio.llm import ModelFactory
from reqstudio.modes.agent.events import (
    AgentEvent,
    Failed,
    KeptResult,
    Limit,
    ModelUsage,
    Stats,
    say,
)
from reqstudio.modes.agent.graph import (
    AnswerTimeLimit,
    RunContext,
    bind_tools,
    build_agent_graph,
    react_system_prompt,
)
from reqstudio.modes.agent.picking import ToolPicker
from reqstudio.modes.agent.state import AgentConfig, AgentMemory, history_messages
from reqstudio.structured import StructuredOutputError
from reqstudio.usage import RoleUsage, UsageTracker, estimate_cost

log = logging.getLogger("reqstudio.agent")

DEFAULT_SYSTEM_PROMPT = "agent/react_system.md"
# Small local models follow a short, plain prompt better than the full one.
PROMPT_VARIANTS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"smollm|tinyllama|qwen2?\.?5?-0\.5b|-(135|360)m\b|gemma-?3?-1b", re.I),
        "agent/react_system_small.md",
    ),
]

MODEL_FAILURES = (
    openai.APIError,
    httpx.HTTPError,
    json.JSONDecodeError,
    StructuredOutputError,
    IncompleteAnswerError,
    asyncio.TimeoutError,
)


TRACE_FORMAT = "[trace] %(message)s"


def show_trace_on_stderr() -> None:
    """AGENT_VERBOSE=true in the CLI: the agent's trace (every thought, tool input and output)
    goes to stderr. (The app's log has it already: Chainlit logs INFO.) Safe to call twice."""
    logger = logging.getLogger("reqstudio.agent")
    logger.setLevel(logging.INFO)
    if any(getattr(h, "reqstudio_trace", False) for h in logger.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(TRACE_FORMAT))
    handler.reqstudio_trace = True  # type: ignore[attr-defined]
    logger.addHandler(handler)


def choose_system_prompt(model_name: str) -> str:
    """The ReAct prompt template for a function-call model, chosen by its name."""
    for pattern, template in PROMPT_VARIANTS:
        if pattern.search(model_name):
            return template
    return DEFAULT_SYSTEM_PROMPT


def model_name_of(model: Any) -> str:
    for attribute in ("model_name", "model", "model_id"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def picks_no_tools(factory: ModelFactory | None, config: AgentConfig, given_model: bool) -> bool:
    """Whether the function-call model is the embedded offline model, whose server ignores
    tools under tool_choice "auto" (agents.react.picking)."""
    if factory is None or given_model or config.function_call_spec is not None:
        return False
    return factory.endpoint_for("function_call").embedded


def as_role(model: BaseChatModel, role: str) -> BaseChatModel:
    """The same model, counted under another role (its own metadata names the role)."""
    if isinstance(model, BaseChatModel) and model.metadata:
        return model.model_copy(update={"metadata": {**model.metadata, "reqstudio_role": role}})
    return model


class ReactAgent:
    """Agent mode: a ReAct loop with a function-call model and an answer model.

    Models come from the factory by role ("function_call", "answer") and the config's specs;
    `function_call_llm` / `answer_llm` pass ready-made chat models instead. With no answer
    model given or configured, the function-call model answers too (single-model mode):
    `ReactAgent(factory, function_call_llm=m)` answers with `m`.

    `tracker` accumulates usage across runs (a session's totals); each run's own usage is in
    its closing `Stats` event. `memory` keeps the thread's turns and tool-call records.
    """

    def __init__(
        self,
        factory: ModelFactory | None,
        tools: Sequence[BaseTool] = (),
        config: AgentConfig | None = None,
        tracker: UsageTracker | None = None,
        *,
        memory: AgentMemory | None = None,
        function_call_llm: BaseChatModel | None = None,
        answer_llm: BaseChatModel | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.config = config or AgentConfig()
        self.config.validate()
        self.tracker = tracker if tracker is not None else UsageTracker()
        self.memory = memory if memory is not None else AgentMemory()
        self.tools = list(tools)
        self.function_call_policy = (
            factory.policy("function_call") if factory else ROLE_POLICIES["function_call"]
        )
        self.answer_policy = factory.policy("answer") if factory else ROLE_POLICIES["answer"]
        callbacks = [self.tracker]
        given_function_call_llm = function_call_llm is not None
        built_answer = False  # models the factory built carry the tracker already
        if function_call_llm is None:
            if factory is None:
                raise ValueError("ReactAgent needs a model factory or a function_call_llm")
            function_call_llm = factory.for_role(
                "function_call", callbacks=callbacks, spec=self.config.function_call_spec
            )
        if answer_llm is None:
            if factory is not None and (
                self.config.answer_spec is not None or not given_function_call_llm
            ):
                answer_llm = factory.for_role(
                    "answer",
                    callbacks=callbacks,
                    spec=self.config.answer_spec or self.config.function_call_spec,
                )
                built_answer = True
            else:
                answer_llm = as_role(function_call_llm, "answer")
        self.function_call_model_name = model_name_of(function_call_llm)
        self.answer_model_name = model_name_of(answer_llm)
        self._reasoning_model = self._with_role(
            bind_tools(function_call_llm, self.tools),
            "function_call",
            self.function_call_model_name,
            callbacks if given_function_call_llm else [],
        )
        self._answer_model = self._with_role(
            answer_llm, "answer", self.answer_model_name, [] if built_answer else callbacks
        )
        self.system_prompt_template = self.config.system_prompt or choose_system_prompt(
            self.function_call_model_name
        )
        self.tool_choice = self.config.tool_choice or (
            "pick" if picks_no_tools(factory, self.config, given_function_call_llm) else "auto"
        )
        self._picker: ToolPicker | None = None
        if (
            self.tool_choice == "pick"
            and self.tools
            and isinstance(function_call_llm, BaseChatModel)
        ):
            self._picker = ToolPicker.for_model(
                function_call_llm,
                self.tools,
                lambda bound: self._with_role(
                    bound,
                    "function_call",
                    self.function_call_model_name,
                    callbacks if given_function_call_llm else [],
                ),
            )
        self._graph = build_agent_graph()
        self.clock = clock

    @staticmethod
    def _with_role(model: Runnable, role: str, name: str, callbacks: list[Any]) -> Runnable:
        # Models from the factory carry their role and the tracker already; ready-made ones
        # get them here. On the model itself (not `with_config(callbacks=...)`, which would
        # hide the run's own tracker), so both the session and the run count the calls.
        bound = model
        if callbacks:
            bound = getattr(model, "bound", model)
            if isinstance(bound, BaseChatModel):
                tracked = bound.model_copy(
                    update={"callbacks": [*(bound.callbacks or []), *callbacks]}
                )
                model = (
                    model.model_copy(update={"bound": tracked}) if bound is not model else tracked
                )
                callbacks = []
        return model.with_config(
            metadata={"reqstudio_role": role, "reqstudio_model": name},
            callbacks=callbacks or None,
        )

    @property
    def single_model(self) -> bool:
        return self.config.single_model

    def system_prompt(self) -> str:
        return react_system_prompt(
            self.system_prompt_template, self.tools, self.config.max_iterations
        )

    async def run(
        self,
        question: str,
        history: AgentMemory | Sequence[dict[str, Any]] | None = None,
        *,
        started: float | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Answer one question, yielding events; the last one is always `Stats`.

        `history`: the prior turns ([{"role": "user"|"assistant", "content": ...}]) or an
        `AgentMemory`; by default `self.memory`. The turn and its tool calls are recorded in
        that memory (or in `self.memory` when plain dicts were given). Cancelling the task
        cancels running tools and propagates.

        `started`: when the time limit starts counting, on `clock`'s scale (default: now). The
        CLI passes its process start, so the limit holds from launch, start-up included.
        """
        memory = history if isinstance(history, AgentMemory) else self.memory
        prior: list[BaseMessage] = (
            memory.as_messages()
            if history is None or history is memory
            else history_messages(history)  # type: ignore[arg-type]
        )
        run_usage = UsageTracker()
        ctx = RunContext(
            config=self.config,
            question=question,
            history=prior,
            reasoning_model=self._reasoning_model,
            answer_model=self._answer_model,
            function_call_model_name=self.function_call_model_name,
            answer_model_name=self.answer_model_name,
            tools={tool.name: tool for tool in self.tools},
            function_call_policy=self.function_call_policy,
            answer_policy=self.answer_policy,
            clock=self.clock,
            started=-1.0 if started is None else started,
            picker=self._picker,
        )
        initial = {
            "messages": [SystemMessage(self.system_prompt()), *prior, HumanMessage(question)],
            "round": 0,
            "results": [],
            "verdict": None,
        }
        graph_config = {
            "callbacks": [run_usage],
            "recursion_limit": 3 * self.config.max_iterations + 6,
        }
        answer: str | None = None
        rounds = 0
        stream = self._graph.astream(
            initial, graph_config, context=ctx, stream_mode=["custom", "updates"]
        )
        try:
            async with contextlib.aclosing(stream):
                async for mode, payload in stream:
                    if mode == "custom":
                        yield payload
                    elif isinstance(payload, dict):
                        for update in payload.values():
                            if isinstance(update, dict):
                                rounds = update.get("round", rounds)
                                answer = update.get("answer", answer)
        except asyncio.CancelledError:
            log.info("agent run cancelled after %.1f s", ctx.elapsed())
            raise
        except Exception as exc:
            yield self._failure(exc, ctx)
        if answer is not None:
            memory.record(question, answer, ctx.gathered)
        yield self._stats(ctx, run_usage, rounds)

    def _failure(self, error: Exception, ctx: RunContext) -> Failed:
        language = self.config.language
        kept = [
            KeptResult(tool=r.tool, arguments=r.arguments, ok=r.ok, result_text=r.text)
            for r in ctx.gathered
        ]
        reached: Limit | None = None
        if isinstance(error, AnswerTimeLimit):
            log.warning("agent stopped: time limit during the answer")
            limit = f"{self.config.max_execution_time:g}"
            message = say("answer_time", language, limit=limit)
            suggest_chat = False
            reached = "time"
        elif isinstance(error, MODEL_FAILURES):
            log.warning("agent stopped, model failure: %s", type(error).__name__)
            message = say("model_failed", language, detail=describe_failure(error, language))
            suggest_chat = False
        else:
            log.exception("agent run failed", exc_info=error)
            message = say("unexpected", language, error=type(error).__name__)
            suggest_chat = True
        return Failed(
            message=message,
            kept_results=kept,
            partial_answer=ctx.answer_so_far,
            suggest_chat_mode=suggest_chat,
            limit=reached,
        )

    def _stats(self, ctx: RunContext, usage: UsageTracker, rounds: int) -> Stats:
        ended = self.clock()
        handed_over = ctx.handed_over_at or ended
        per_model = {
            role: ModelUsage(
                model=u.model or self._model_for_role(role),
                calls=u.calls,
                input_tokens=u.input_tokens,
                output_tokens=u.output_tokens,
                seconds=round(u.seconds, 3),
                unfinished=u.unfinished,
                tokens_known=u.unreported == 0 and u.unfinished == 0,
            )
            for role, u in usage.roles.items()
            if isinstance(u, RoleUsage)
        }
        return Stats(
            per_model=per_model,
            phase_seconds={
                "tools": round(handed_over - ctx.started, 3),
                "answer": round(ended - handed_over, 3),
                "total": round(ended - ctx.started, 3),
            },
            total_tokens=usage.total_tokens,
            estimated_cost=estimate_cost(per_model, self.config.prices),
            tool_calls=len(ctx.gathered),
            rounds=rounds,
            tokens_known=usage.tokens_known,
        )

    def _model_for_role(self, role: str) -> str:
        return self.answer_model_name if role == "answer" else self.function_call_model_name
