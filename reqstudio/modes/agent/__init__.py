"""Agent mode: a ReAct loop (LangGraph) with a function-call model, tools and an answer model.

Names are imported on first use (`reqstudio.lazy`)."""

from reqstudio.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "reqstudio.modes.agent.checks": ("CheckInput", "CheckOutcome"),
        "reqstudio.modes.agent.engine": ("ReactAgent", "choose_system_prompt"),
        "reqstudio.modes.agent.events": (
            "AgentEvent",
            "AgentEventAdapter",
            "AnswerFinished",
            "AnswerToken",
            "Decision",
            "Failed",
            "HandOver",
            "KeptResult",
            "LoopDetected",
            "ModelUsage",
            "PlannedCall",
            "Stats",
            "ThinkingFinished",
            "ThinkingStarted",
            "ThinkingToken",
            "ToolCallFinished",
            "ToolCallStarted",
        ),
        "reqstudio.modes.agent.state": (
            "AgentConfig",
            "AgentConfigError",
            "AgentMemory",
            "ToolResult",
        ),
    },
)
