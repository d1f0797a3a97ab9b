"""Agent mode: a ReAct loop (LangGraph) with a function-call model, tools and an answer model."""

from agents.react.checks import CheckInput, CheckOutcome
from agents.react.engine import ReactAgent, choose_system_prompt
from agents.react.events import (
    AgentEvent,
    AgentEventAdapter,
    AnswerFinished,
    AnswerToken,
    Decision,
    Failed,
    HandOver,
    KeptResult,
    LoopDetected,
    ModelUsage,
    PlannedCall,
    Stats,
    ThinkingFinished,
    ThinkingStarted,
    ThinkingToken,
    ToolCallFinished,
    ToolCallStarted,
)
from agents.react.state import AgentConfig, AgentConfigError, AgentMemory, ToolResult

__all__ = [
    "AgentConfig",
    "AgentConfigError",
    "AgentEvent",
    "AgentEventAdapter",
    "AgentMemory",
    "AnswerFinished",
    "AnswerToken",
    "CheckInput",
    "CheckOutcome",
    "Decision",
    "Failed",
    "HandOver",
    "KeptResult",
    "LoopDetected",
    "ModelUsage",
    "PlannedCall",
    "ReactAgent",
    "Stats",
    "ThinkingFinished",
    "ThinkingStarted",
    "ThinkingToken",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolResult",
    "choose_system_prompt",
]
