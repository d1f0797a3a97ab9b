"""Shared helpers for the Agent tests (no tests here): the text that routes a scripted answer to
each of Agent mode's prompts, and scripted turns more than one test plays."""

from __future__ import annotations

from tests.scripted_server import Reply, ToolCallScript

ANSWER = "Write the final answer now"  # reqstudio/prompts/agent/answer_context.md
REASONING = "research agent"  # reqstudio/prompts/agent/react_system.md


def calls_at_once(
    thinking: str, calls: list[ToolCallScript], decision: str, answer: str
) -> list[Reply]:
    """A turn that asks for several tools at once, the round that decides to stop, and the
    answer."""
    return [
        Reply(content=thinking, tool_calls=calls),
        Reply(content=decision),
        Reply(content=answer, match=ANSWER),
    ]


UTC_NOW = ToolCallScript("get_current_time", {"timezone": "UTC"})  # the MCP time server's tool


def one_call_then_answer(
    thinking: str, decision: str, answer: str, call: ToolCallScript = UTC_NOW, **streaming
) -> list[Reply]:
    """A round that asks for one tool (the time in UTC unless told), the round that decides to
    stop, and the answer, each routed to its prompt; `streaming` (chunk_chars, chunk_delay)
    goes to the first round."""
    return [
        Reply(match=REASONING, content=thinking, tool_calls=[call], **streaming),
        Reply(match=REASONING, content=decision),
        Reply(match=ANSWER, content=answer),
    ]
