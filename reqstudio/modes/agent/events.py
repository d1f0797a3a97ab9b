"""What an Agent-mode run reports while it works, in the order it happens.

The UI (Chainlit Steps), the CLI and the tests all consume the same events. Each event is a member of
the one event union (`reqstudio.events`, its `type`) and has a `name` so a list of them can be
stored as JSON and read back whole (`AgentEventAdapter`).
User-facing sentences (`reason`, `message`) are written in the run's language; the matching
machine-readable codes (`reason_code`, `limit`) let a UI word them its own way.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from reqstudio import events as core
from reqstudio.messages import text
from reqstudio.tools.web_search import SearchHit

ToolKind = Literal["search", "mcp", "tool"]
# "iterations": the tool-call limit (AGENT_MAX_ITERATIONS counts calls, as seed 002 does);
# "time": the tool phase's share of AGENT_MAX_EXECUTION_TIME; "loop": a repeated call.
Limit = Literal["iterations", "time", "loop"]
Language = Literal["zh", "en"]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)


class _NamedStep(_Event):
    """A step named after its tool (the events are frozen: `step` is filled on the way in)."""

    @model_validator(mode="before")
    @classmethod
    def _step_from_tool(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("step") and data.get("tool"):
            data = {**data, "step": data["tool"]}
        if isinstance(data, dict) and data.get("ok") is False and "outcome" not in data:
            data = {**data, "outcome": "failed"}
        return data


class ThinkingStarted(core.StepStarted, _Event):
    """The function-call model starts a reasoning round (round 1 is the first)."""

    name: Literal["thinking_started"] = "thinking_started"
    step: str = "thinking"
    model: str
    round: int


class ThinkingToken(core.Token, _Event):
    """A piece of the function-call model's visible reasoning, as it streams. `reasoning` is
    True for a reasoning model's separate thinking (`reasoning_content`, e.g. DeepSeek-R1)."""

    name: Literal["thinking_token"] = "thinking_token"
    text: str
    round: int = 0
    reasoning: bool = False


class PlannedCall(BaseModel):
    call_id: str
    tool: str
    arguments: dict[str, Any]


class ThinkingFinished(core.StepFinished, _Event):
    """The reasoning round ended: its whole text and the tool calls it decided on (maybe none).

    `text` is everything the thinking step showed: a reasoning model's separate thinking
    (also alone in `reasoning`) followed by the model's visible reply."""

    name: Literal["thinking_finished"] = "thinking_finished"
    step: str = "thinking"
    text: str
    reasoning: str = ""
    tool_calls: list[PlannedCall] = Field(default_factory=list)
    round: int = 0


class ToolCallStarted(core.StepStarted, _NamedStep):
    name: Literal["tool_call_started"] = "tool_call_started"
    call_id: str
    tool: str
    arguments: dict[str, Any]
    kind: ToolKind = "tool"
    round: int = 0


class ToolCallFinished(core.StepFinished, _NamedStep):
    """A tool call ended. `ok` is False for errors, timeouts and cancellations; `result_text`
    is what the model was shown. For searches `result_count` and `top_results` (first 3)."""

    name: Literal["tool_call_finished"] = "tool_call_finished"
    call_id: str
    tool: str
    ok: bool
    result_text: str
    result_count: int | None = None
    top_results: list[SearchHit] = Field(default_factory=list)
    kind: ToolKind = "tool"
    cached: bool = False
    seconds: float = 0.0
    round: int = 0
    # a failed search's reason ("timeout", "rate_limit", "unreachable", "empty_query"), so a
    # reader is told in their own language; `result_text` is the model's English
    error_kind: str | None = None


class Decision(core.Notice, _Event):
    """The result check's verdict after a round: go on with tools, or move to the answer."""

    name: Literal["decision"] = "decision"
    continue_: bool
    reason: str
    reason_code: str = ""
    round: int = 0


class LoopDetected(core.Notice, _Event):
    """The model asked for the same tool with the same arguments again: the loop stops."""

    name: Literal["loop_detected"] = "loop_detected"
    code: str = "loop"
    tool: str
    arguments: dict[str, Any]
    message: str


class HandOver(core.Notice, _Event):
    """The tool phase is over; the answer model takes over. `limit` names the limit that
    ended the tool phase, or None when the model (or the result check) found enough."""

    name: Literal["hand_over"] = "hand_over"
    reason: str
    limit: Limit | None = None
    answer_model: str
    reason_code: str = ""


class AnswerToken(core.Token, _Event):
    name: Literal["answer_token"] = "answer_token"
    text: str


class AnswerRestarted(core.StepReset, _Event):
    """A try of the answer broke off and the answer starts again: what was shown of the broken
    try is dropped, and the answer so far is `kept` (the parts written before a length-limit
    continuation, else nothing)."""

    name: Literal["answer_restarted"] = "answer_restarted"
    step: str = "answer"
    attempt: int
    kept: str = ""


class AnswerFinished(core.StepFinished, _Event):
    name: Literal["answer_finished"] = "answer_finished"
    step: str = "answer"
    text: str


class KeptResult(BaseModel):
    """A tool result gathered before a failure, kept so the user still sees it."""

    tool: str
    arguments: dict[str, Any]
    ok: bool
    result_text: str


class Failed(core.Failed, _Event):
    """The run could not finish. `message` is plain words for the user; `kept_results` are
    the tool results gathered before the failure. `limit` is "time" when the time limit ended
    the answer (the run finished without a pass), None for a failure."""

    name: Literal["failed"] = "failed"
    message: str
    kept_results: list[KeptResult] = Field(default_factory=list)
    partial_answer: str = ""
    suggest_chat_mode: bool = False
    limit: Limit | None = None


class ModelUsage(BaseModel):
    model: str
    calls: int  # answered calls
    input_tokens: int
    output_tokens: int
    seconds: float
    # calls stopped before their answer ended (the time limit, a broken stream): not in
    # `calls`, their time is in `seconds`, their tokens are unknown
    unfinished: int = 0
    tokens_known: bool = True  # every call reported its tokens


class Stats(core.Notice, _Event):
    """Always the last event of a run (also after a failure).

    per_model is keyed by role ("function_call", "answer"); phase_seconds has "tools" (the
    reasoning and tool phase), "answer" and "total". estimated_cost is None when no price is
    known for a model that was used.
    """

    name: Literal["stats"] = "stats"
    per_model: dict[str, ModelUsage]
    phase_seconds: dict[str, float]
    total_tokens: int
    estimated_cost: float | None = None
    tool_calls: int = 0
    rounds: int = 0
    tokens_known: bool = True  # False: total_tokens is only what some calls reported


AgentEvent = Annotated[
    ThinkingStarted
    | ThinkingToken
    | ThinkingFinished
    | ToolCallStarted
    | ToolCallFinished
    | Decision
    | LoopDetected
    | HandOver
    | AnswerToken
    | AnswerRestarted
    | AnswerFinished
    | Failed
    | Stats,
    Field(discriminator="name"),
]

AgentEventAdapter: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent)


# --- the words users read -------------------------------------------------------------


def say(code: str, language: Language, **values: Any) -> str:
    """An Agent progress line (`agent.progress.<code>` in the catalogue) in the run's language."""
    return text(f"agent.progress.{code}", language, **values)
