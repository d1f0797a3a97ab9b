"""What an Agent-mode run reports while it works, in the order it happens.

The UI (Chainlit Steps), the CLI and the tests all consume the same events. Each event has a
`type` so a list of them can be stored as JSON and read back (`AgentEventAdapter`).
User-facing sentences (`reason`, `message`) are written in the run's language; the matching
machine-readable codes (`reason_code`, `limit`) let a UI word them its own way.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from tools.web_search import SearchHit

ToolKind = Literal["search", "mcp", "tool"]
# "iterations": the tool-call limit (AGENT_MAX_ITERATIONS counts calls, as seed 002 does);
# "time": the tool phase's share of AGENT_MAX_EXECUTION_TIME; "loop": a repeated call.
Limit = Literal["iterations", "time", "loop"]
Language = Literal["zh", "en"]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)


class ThinkingStarted(_Event):
    """The function-call model starts a reasoning round (round 1 is the first)."""

    type: Literal["thinking_started"] = "thinking_started"
    model: str
    round: int


class ThinkingToken(_Event):
    """A piece of the function-call model's visible reasoning, as it streams. `reasoning` is
    True for a reasoning model's separate thinking (`reasoning_content`, e.g. DeepSeek-R1)."""

    type: Literal["thinking_token"] = "thinking_token"
    text: str
    round: int = 0
    reasoning: bool = False


class PlannedCall(BaseModel):
    call_id: str
    tool: str
    arguments: dict[str, Any]


class ThinkingFinished(_Event):
    """The reasoning round ended: its whole text and the tool calls it decided on (maybe none).

    `text` is everything the thinking step showed: a reasoning model's separate thinking
    (also alone in `reasoning`) followed by the model's visible reply."""

    type: Literal["thinking_finished"] = "thinking_finished"
    text: str
    reasoning: str = ""
    tool_calls: list[PlannedCall] = Field(default_factory=list)
    round: int = 0


class ToolCallStarted(_Event):
    type: Literal["tool_call_started"] = "tool_call_started"
    call_id: str
    tool: str
    arguments: dict[str, Any]
    kind: ToolKind = "tool"
    round: int = 0


class ToolCallFinished(_Event):
    """A tool call ended. `ok` is False for errors, timeouts and cancellations; `result_text`
    is what the model was shown. For searches `result_count` and `top_results` (first 3)."""

    type: Literal["tool_call_finished"] = "tool_call_finished"
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


class Decision(_Event):
    """The result check's verdict after a round: go on with tools, or move to the answer."""

    type: Literal["decision"] = "decision"
    continue_: bool
    reason: str
    reason_code: str = ""
    round: int = 0


class LoopDetected(_Event):
    """The model asked for the same tool with the same arguments again: the loop stops."""

    type: Literal["loop_detected"] = "loop_detected"
    tool: str
    arguments: dict[str, Any]
    message: str


class HandOver(_Event):
    """The tool phase is over; the answer model takes over. `limit` names the limit that
    ended the tool phase, or None when the model (or the result check) found enough."""

    type: Literal["hand_over"] = "hand_over"
    reason: str
    limit: Limit | None = None
    answer_model: str
    reason_code: str = ""


class AnswerToken(_Event):
    type: Literal["answer_token"] = "answer_token"
    text: str


class AnswerRestarted(_Event):
    """A try of the answer broke off and the answer starts again: what was shown of the broken
    try is dropped, and the answer so far is `kept` (the parts written before a length-limit
    continuation, else nothing)."""

    type: Literal["answer_restarted"] = "answer_restarted"
    attempt: int
    kept: str = ""


class AnswerFinished(_Event):
    type: Literal["answer_finished"] = "answer_finished"
    text: str


class KeptResult(BaseModel):
    """A tool result gathered before a failure, kept so the user still sees it."""

    tool: str
    arguments: dict[str, Any]
    ok: bool
    result_text: str


class Failed(_Event):
    """The run could not finish. `message` is plain words for the user; `kept_results` are
    the tool results gathered before the failure."""

    type: Literal["failed"] = "failed"
    message: str
    kept_results: list[KeptResult] = Field(default_factory=list)
    partial_answer: str = ""
    suggest_chat_mode: bool = False


class ModelUsage(BaseModel):
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    seconds: float


class Stats(_Event):
    """Always the last event of a run (also after a failure).

    per_model is keyed by role ("function_call", "answer"); phase_seconds has "tools" (the
    reasoning and tool phase), "answer" and "total". estimated_cost is None when no price is
    known for a model that was used.
    """

    type: Literal["stats"] = "stats"
    per_model: dict[str, ModelUsage]
    phase_seconds: dict[str, float]
    total_tokens: int
    estimated_cost: float | None = None
    tool_calls: int = 0
    rounds: int = 0


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
    Field(discriminator="type"),
]

AgentEventAdapter: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent)


# --- the words users read -------------------------------------------------------------

MESSAGES: dict[str, dict[Language, str]] = {
    "model_done": {
        "zh": "模型认为已有信息足以回答，切换到回答生成阶段。",
        "en": "The model has enough information; moving on to the answer.",
    },
    "enough_results": {
        "zh": "工具结果已足够回答问题，提前结束工具调用，切换到回答生成阶段。",
        "en": "The tool results are enough to answer; stopping the tool calls early.",
    },
    "results_weak": {
        "zh": "本轮工具结果为空、失败或过短（少于 {min_chars} 个字符），继续调用工具。",
        "en": "This round's results were empty, failed or too short (under {min_chars} "
        "characters); calling tools again.",
    },
    "results_usable": {
        "zh": "已获得可用结果，由模型判断是否还需要更多信息。",
        "en": "Usable results arrived; the model decides whether it needs more.",
    },
    "iterations": {
        "zh": "已达到最大工具调用次数（{limit} 次），基于已有信息生成回答。",
        "en": "Reached the tool-call limit ({limit} calls); answering from what was gathered.",
    },
    "iterations_skipped": {
        "zh": "已达到最大工具调用次数（{limit} 次），另有 {skipped} 个计划中的调用未执行；"
        "基于已有信息生成回答。",
        "en": "Reached the tool-call limit ({limit} calls); {skipped} more planned call(s) "
        "were not run; answering from what was gathered.",
    },
    "time": {
        "zh": "已达到最大执行时间（{limit} 秒，其中工具阶段 {tools} 秒），执行超时，"
        "基于已有信息生成回答。",
        "en": "Reached the time limit ({limit} s, of which {tools} s for tools); answering "
        "from what was gathered.",
    },
    "answer_time": {
        "zh": "已达到最大执行时间（{limit} 秒），回答未能在时限内写完；已保留已写出的部分和"
        "收集到的结果。",
        "en": "Reached the time limit ({limit} s) before the answer was finished; what was "
        "written and the results gathered are kept.",
    },
    "fc_length": {
        "zh": "工具调用模型的回复达到长度上限，未完整给出，不采用其计划；基于已有信息生成回答。",
        "en": "The function-call model's reply hit its length limit and is incomplete; its "
        "plan is not used; answering from what was gathered.",
    },
    "loop": {
        "zh": "检测到重复操作：再次以相同参数调用 {tool}。已停止工具调用，基于已有信息回答；"
        "可以换个说法重新提问，或切换到其他模式。",
        "en": "Loop detected: {tool} was called again with the same arguments. The tool calls "
        "stopped and the answer uses what was gathered; rephrase the question or switch mode.",
    },
    "custom_check": {"zh": "{reason}", "en": "{reason}"},
    "unexpected": {
        "zh": "Agent 执行中出现意外错误（{error}）。已保留收到的中间结果；可以重新提问，"
        "或切换到 Chat 模式。",
        "en": "The agent hit an unexpected error ({error}). The intermediate results are "
        "kept; ask again, or switch to Chat mode.",
    },
    "model_failed": {
        "zh": "{detail} Agent 已停止；已保留收到的中间结果。",
        "en": "{detail} The agent stopped; the intermediate results are kept.",
    },
    "tool_cancelled_time": {
        "zh": "已取消：达到最大执行时间。",
        "en": "Cancelled: the time limit was reached.",
    },
}


def say(code: str, language: Language, **values: Any) -> str:
    return MESSAGES[code][language].format(**values)
