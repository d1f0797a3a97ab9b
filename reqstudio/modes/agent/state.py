"""Agent mode's types: its configuration, the graph state, tool results and the memory of a
conversation (turns and tool-call records, JSON-serialisable for the UI session)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel, Field

from reqstudio.modes.agent.events import Language, Limit, ToolKind
from reqstudio.rewind import first_turn_of
from reqstudio.settings import ModelSpec, Settings, SettingsError
from reqstudio.tools.web_search import SearchHit

# --- custom result checks (the rules that use them live in agents.react.checks) ----------


@dataclass(frozen=True)
class CheckInput:
    """What a custom result check sees."""

    question: str
    round: int
    max_iterations: int
    """The tool-call limit (calls in all)."""
    elapsed_seconds: float
    max_execution_time: float
    round_results: Sequence[ToolResult]
    all_results: Sequence[ToolResult]
    min_result_chars: int


@dataclass(frozen=True)
class CheckOutcome:
    """A custom check's verdict: `continue_` False hands over to the answer model."""

    continue_: bool
    reason: str


# A custom result check may return a CheckOutcome, a bool (go on?), or None (use the default
# rules); it may be a coroutine function.
ResultCheck = Callable[
    [CheckInput], "CheckOutcome | bool | Awaitable[CheckOutcome | bool | None] | None"
]


class AgentConfigError(SettingsError):
    """The Agent-mode configuration cannot work; the message says what to fix."""


@dataclass
class AgentConfig:
    """How an agent run behaves. `AgentConfig.from_settings(settings)` reads the environment
    (AGENT_MAX_ITERATIONS, AGENT_MAX_EXECUTION_TIME, AGENT_VERBOSE, AGENT_FUNCTION_CALL_MODEL,
    AGENT_ANSWER_MODEL, AGENT_PRICES); code can build one directly (limits are not range-checked
    here so tests can use small ones; Settings enforces 1-10 and 10-300 for users)."""

    max_iterations: int = 5
    """Tool calls in all (AGENT_MAX_ITERATIONS; seed 002 counts calls, several in one round
    count one each); then the answer is written from what was found."""
    max_execution_time: float = 60.0
    """Seconds for the whole run, answer included (AGENT_MAX_EXECUTION_TIME). The reasoning
    and tool phase ends after `tool_phase_seconds`; the answer must be done by this limit plus
    `answer_grace`, else it stops and what was written is kept, with a notice."""
    answer_share: float = 0.25
    """The part of `max_execution_time` kept for the answer when tools use all their time."""
    answer_grace: float = 5.0
    """Seconds past `max_execution_time` the answer may still take (the documented bound)."""
    min_result_chars: int = 20
    """A tool result with less text than this counts as too short (the loop goes on)."""
    enough_result_chars: int | None = None
    """If set, stop calling tools once a round brings this much usable text (None: the
    function-call model decides when it has enough)."""
    verbose: bool = False
    """Log every thought, action, tool input and output (AGENT_VERBOSE)."""
    function_call_spec: ModelSpec | None = None
    """The function-call model; None means the app's default model (OPENAI_MODEL)."""
    answer_spec: ModelSpec | None = None
    """The answer model; None means the function-call model answers too (single-model mode)."""
    result_check: ResultCheck | None = None
    """Optional custom check of each round's tool results (see agents.react.checks)."""
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Model name -> (price per 1k input tokens, price per 1k output tokens)."""
    language: Language = "zh"
    """Language of the sentences in events (reasons, notices, errors)."""
    system_prompt: str | None = None
    """Override the ReAct prompt template (a name under reqstudio/prompts/, e.g. agent/react_system.md)."""
    tool_timeout: float | None = None
    """Seconds one tool call may take (None: only the run's time limit bounds it)."""
    tool_choice: Literal["auto", "pick"] | None = None
    """How the function-call model chooses tools: "auto" (it calls them itself), "pick" (it
    names one, or none, in a forced call, then writes its arguments: agents.react.picking).
    None: "pick" for the embedded offline model, which never calls a tool by itself."""

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> AgentConfig:
        config = cls(
            max_iterations=settings.agent_max_iterations,
            max_execution_time=float(settings.agent_max_execution_time),
            verbose=settings.agent_verbose,
            function_call_spec=settings.agent_function_call_model,
            answer_spec=settings.agent_answer_model,
            prices=dict(settings.agent_prices),
        )
        for name, value in overrides.items():
            if not hasattr(config, name):
                raise TypeError(f"AgentConfig has no field {name!r}")
            setattr(config, name, value)
        config.validate()
        return config

    @property
    def single_model(self) -> bool:
        return self.answer_spec is None

    @property
    def tool_phase_seconds(self) -> float:
        """When the reasoning and tool phase must end (seconds from the start of the run)."""
        return self.max_execution_time * (1.0 - self.answer_share)

    @property
    def run_deadline_seconds(self) -> float:
        """When the run must be over, answer included (seconds from the start of the run)."""
        return self.max_execution_time + self.answer_grace

    def validate(self) -> None:
        """Raise AgentConfigError with a clear message if this cannot work."""
        if self.max_iterations < 1:
            raise AgentConfigError("Agent max_iterations must be at least 1")
        if self.max_execution_time <= 0:
            raise AgentConfigError("Agent max_execution_time must be more than 0 seconds")
        if not 0.0 <= self.answer_share < 1.0 or self.answer_grace < 0:
            raise AgentConfigError("Agent answer_share must be in [0, 1) and answer_grace >= 0")
        if self.min_result_chars < 0:
            raise AgentConfigError("Agent min_result_chars cannot be negative")
        for env_name, spec in (
            ("AGENT_FUNCTION_CALL_MODEL", self.function_call_spec),
            ("AGENT_ANSWER_MODEL", self.answer_spec),
        ):
            if spec is None:
                continue
            if not spec.model.strip():
                raise AgentConfigError(f'{env_name}: "model" must name a model')
            if spec.base_url and not spec.base_url.startswith(("http://", "https://")):
                raise AgentConfigError(
                    f'{env_name}: "base_url" must start with http:// or https:// '
                    f"(got {spec.base_url!r})"
                )
        if self.result_check is not None and not callable(self.result_check):
            raise AgentConfigError("Agent result_check must be a function")


# --- tool results ------------------------------------------------------------------------


class ToolResult(BaseModel):
    """One tool call and what came back, as the agent and the answer model see it."""

    call_id: str
    tool: str
    kind: ToolKind = "tool"
    arguments: dict[str, Any] = Field(default_factory=dict)
    ok: bool
    text: str
    hits: list[SearchHit] = Field(default_factory=list)
    error_kind: str | None = None  # a failed search's reason (reqstudio/tools/web_search.py)
    cached: bool = False
    round: int = 0
    seconds: float = 0.0

    @property
    def substance_chars(self) -> int:
        """How much usable text the result carries (a search: its titles and snippets)."""
        if not self.ok:
            return 0
        if self.kind == "search":
            return sum(len(hit.title) + len(hit.snippet) for hit in self.hits)
        return len(self.text.strip())


class Verdict(BaseModel):
    """Where the run goes next; `limit` is set when a limit (not the model) stopped it."""

    continue_: bool
    reason_code: str
    reason: str
    limit: Limit | None = None


class AgentState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    round: int
    results: Annotated[list[ToolResult], lambda old, new: [*old, *new]]
    verdict: Verdict | None
    timed_out: bool  # the time limit cut the last round of tools short
    skipped_calls: int  # planned calls of the last round not run (the tool-call limit)
    answer: str


# --- memory of a conversation --------------------------------------------------------------


class AgentTurn(BaseModel):
    question: str
    answer: str
    # The browser's message that asked it: an edited or regenerated question rewinds to it.
    message_id: str | None = None


class ToolRecord(BaseModel):
    turn: int
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    ok: bool
    result_preview: str = ""


class AgentMemory(BaseModel):
    """Prior turns and tool-call records of one thread. The UI keeps `dump()` in the session
    and rebuilds it with `AgentMemory.load(...)`; only the last `window` turns reach the model."""

    turns: list[AgentTurn] = Field(default_factory=list)
    tool_records: list[ToolRecord] = Field(default_factory=list)
    window: int = 10
    preview_chars: int = 300

    def record(self, question: str, answer: str, results: Sequence[ToolResult]) -> None:
        turn = len(self.turns) + 1
        self.turns.append(AgentTurn(question=question, answer=answer))
        self.tool_records.extend(
            ToolRecord(
                turn=turn,
                tool=r.tool,
                arguments=r.arguments,
                ok=r.ok,
                result_preview=r.text[: self.preview_chars],
            )
            for r in results
        )

    def as_messages(self) -> list[BaseMessage]:
        messages: list[BaseMessage] = []
        for turn in self.turns[-self.window :]:
            messages.append(HumanMessage(turn.question))
            messages.append(AIMessage(turn.answer))
        return messages

    def clear(self) -> None:
        self.turns.clear()
        self.tool_records.clear()

    def tag_turns_since(self, count: int, message_id: str | None) -> None:
        """Mark the turns recorded after the first `count` as asked by `message_id`."""
        for turn in self.turns[count:]:
            turn.message_id = message_id

    def rewind_to(self, message_id: str | None) -> int:
        """Forget the turn asked by `message_id` and every later one, tool records included
        (the user edited or regenerated that question); how many turns went."""
        index = first_turn_of(self.turns, message_id)
        if index is None:
            return 0
        dropped = len(self.turns) - index
        del self.turns[index:]
        self.tool_records = [r for r in self.tool_records if r.turn <= index]
        return dropped

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    @classmethod
    def load(cls, data: dict[str, Any] | None) -> AgentMemory:
        return cls.model_validate(data) if data else cls()


def history_messages(history: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    """Prior turns given as [{"role": "user"|"assistant", "content": ...}] (or AgentTurn dicts)."""
    messages: list[BaseMessage] = []
    for item in history:
        if "question" in item:
            messages.append(HumanMessage(str(item["question"])))
            messages.append(AIMessage(str(item.get("answer", ""))))
        elif item.get("role") == "user":
            messages.append(HumanMessage(str(item.get("content", ""))))
        elif item.get("role") == "assistant":
            messages.append(AIMessage(str(item.get("content", ""))))
    return messages
