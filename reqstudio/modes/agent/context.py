"""What one Agent-mode run carries besides the graph state (`RunContext`, read by the nodes from
the LangGraph runtime), and the small helpers the nodes share."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

from reqstudio.calls import ROLE_POLICIES, RetryPolicy
from reqstudio.modes.agent.events import Decision, ToolKind, say
from reqstudio.modes.agent.picking import ToolPicker
from reqstudio.modes.agent.state import AgentConfig, ToolResult, Verdict
from reqstudio.tools.web_search import WEB_SEARCH_TOOL_NAME

log = logging.getLogger("reqstudio.agent")

SOURCE_TEXT_CHARS = 4000
TOOL_TEXT_CHARS = 8000
NOTES_CHARS = 2000


@dataclass
class RunContext:
    """Everything one run needs besides the graph state; nodes read it from the runtime."""

    config: AgentConfig
    question: str
    history: list[BaseMessage]
    reasoning_model: Runnable  # the function-call model with the tools bound
    answer_model: Runnable
    function_call_model_name: str
    answer_model_name: str
    tools: dict[str, BaseTool]
    function_call_policy: RetryPolicy = field(
        default_factory=lambda: ROLE_POLICIES["function_call"]
    )
    answer_policy: RetryPolicy = field(default_factory=lambda: ROLE_POLICIES["answer"])
    clock: Callable[[], float] = time.monotonic
    started: float = -1.0
    handed_over_at: float | None = None
    gathered: list[ToolResult] = field(default_factory=list)
    answer_so_far: str = ""
    picker: ToolPicker | None = None  # tool choice by forced calls (agents.react.picking)

    def __post_init__(self) -> None:
        if self.started < 0:
            self.started = self.clock()

    @property
    def language(self) -> Literal["zh", "en"]:
        return self.config.language

    def elapsed(self) -> float:
        return self.clock() - self.started

    def remaining(self) -> float:
        """Seconds left for the reasoning and tool phase."""
        return self.config.tool_phase_seconds - self.elapsed()

    def answer_remaining(self) -> float:
        """Seconds left before the run must be over, answer included."""
        return self.config.run_deadline_seconds - self.elapsed()

    def trace(self, message: str, *args: Any) -> None:
        """AGENT_VERBOSE logs every thought and action at INFO; otherwise at DEBUG."""
        log.log(logging.INFO if self.config.verbose else logging.DEBUG, message, *args)


def tool_kind(tool: BaseTool | None, name: str) -> ToolKind:
    declared = (tool.metadata or {}).get("reqstudio_kind") if tool is not None else None
    if declared in {"search", "mcp", "tool"}:
        return declared
    return "search" if name == WEB_SEARCH_TOOL_NAME else "tool"


def compact_arguments(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True)


def emit_decision(emit: Callable[[Any], None], verdict: Verdict, round_number: int) -> None:
    said = verdict.model_dump(include={"continue_", "reason", "reason_code"})
    emit(Decision(**said, round=round_number))


def stop_verdict(code: str, language: Literal["zh", "en"]) -> Verdict:
    return Verdict(continue_=False, reason_code=code, reason=say(code, language))


class AnswerTimeLimit(Exception):
    """The run's time limit (plus its grace) passed before the answer was finished."""
