"""Agent mode with a model that never calls a tool by itself (the embedded SmolLM2 under
llama.cpp ignores tools under tool_choice "auto"): it names a tool, or none, in a forced
`choose_tool` call, then writes the tool's arguments in a call forced to that tool
(reqstudio/modes/agent/picking.py). Over real HTTP against the scripted server, which plays llama.cpp's
habits: a forced call's name repeated in every streamed chunk, no usage sent."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import tool

from reqstudio.llm import Endpoint, ModelFactory
from reqstudio.modes.agent import (
    AgentConfig,
    AnswerFinished,
    Decision,
    ReactAgent,
    Stats,
    ThinkingFinished,
    ToolCallFinished,
)
from tests.agent_support import ANSWER
from tests.scripted_server import Reply, ToolCallScript

PICK = "Pick the tool the user's question needs"  # reqstudio/prompts/agent/pick_tool.md
NOW = '{"timezone": "UTC", "datetime": "2026-11-28T06:57:31+00:00"}'


@tool
def get_current_time(timezone: str) -> str:
    """Get current time in a specific timezone. Use 'UTC' if the user names none."""
    return NOW if timezone == "UTC" else f"unknown zone {timezone}"


@tool
def web_search(query: str) -> str:
    """Search the web and get numbered results."""
    return "results"


def chose(name: str) -> Reply:
    # llama.cpp sends the function's name in every chunk: the client joins them
    return Reply(
        match=PICK,
        tool_calls=[ToolCallScript("choose_toolchoose_tool", {"tool": name})],
        sends_usage=False,
    )


def writes(tool_name: str, arguments: dict[str, Any]) -> Reply:
    return Reply(tool_calls=[ToolCallScript(tool_name * 2, arguments)], sends_usage=False)


def forced_to(request: dict[str, Any]) -> str | None:
    choice = request.get("tool_choice")
    return choice["function"]["name"] if isinstance(choice, dict) else choice


async def run(agent: ReactAgent, question: str) -> list[Any]:
    return [event async for event in agent.run(question)]


async def test_the_model_names_the_time_tool_then_writes_its_arguments(factory, llm_server):
    llm_server.script(
        chose("get_current_time"),
        writes("get_current_time", {"timezone": "UTC"}),
        chose("none"),
        Reply(match=ANSWER, content="It is 06:57 UTC.", sends_usage=False),
    )
    agent = ReactAgent(
        factory, [web_search, get_current_time], AgentConfig(language="en", tool_choice="pick")
    )
    events = await run(agent, "What time is it now in UTC?")

    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.tool, e.ok, e.result_text) for e in finished] == [("get_current_time", True, NOW)]
    assert [e.text for e in events if isinstance(e, AnswerFinished)] == ["It is 06:57 UTC."]
    thinking = [e.text for e in events if isinstance(e, ThinkingFinished)]
    assert thinking == ["Chose the tool get_current_time.", "Chose no tool."]
    handover = [e for e in events if isinstance(e, Decision)][-1]
    assert handover.reason_code == "model_done"  # it used a tool: not "answered from memory"

    pick, arguments, again, _answer = llm_server.requests
    assert forced_to(pick) == "choose_tool"
    enum = pick["tools"][0]["function"]["parameters"]["properties"]["tool"]["enum"]
    assert enum == ["web_search", "get_current_time", "none"]
    assert forced_to(arguments) == "get_current_time"
    zone = arguments["tools"][0]["function"]["parameters"]["properties"]["timezone"]
    assert zone["maxLength"] == 80  # a grammar-written string ends
    # llama.cpp refuses an assistant message without content and has no tool role: the
    # earlier call and its result reach the model as text
    roles = [m["role"] for m in again["messages"]]
    assert "tool" not in roles and all(m.get("content") for m in again["messages"]), roles
    assert any(NOW in m["content"] for m in again["messages"])

    stats = events[-1]
    assert isinstance(stats, Stats)
    assert stats.per_model["function_call"].calls == 3  # two choices and the arguments
    assert not stats.tokens_known  # the server sent no usage: unknown, not 0


async def test_a_choice_of_none_answers_and_says_it_used_no_tool(factory, llm_server):
    llm_server.script(chose("none"), Reply(match=ANSWER, content="Probably noon."))
    agent = ReactAgent(factory, [get_current_time], AgentConfig(language="zh", tool_choice="pick"))
    events = await run(agent, "现在几点？")

    assert not [e for e in events if isinstance(e, ToolCallFinished)]
    handover = [e for e in events if isinstance(e, Decision)][-1]
    assert handover.reason_code == "picked_none"
    assert handover.reason == "模型选择不调用工具，直接根据自己已知的内容回答。"
    assert len(llm_server.requests) == 2


async def test_the_embedded_model_chooses_by_forced_calls_and_others_by_themselves(
    settings, llm_server
):
    embedded = ModelFactory(
        settings, Endpoint(llm_server.base_url, "none", "smollm2-135m-instruct", embedded=True)
    )
    provider = ModelFactory(settings, Endpoint(llm_server.base_url, "sk-x", "scripted-model"))
    assert ReactAgent(embedded, [get_current_time], AgentConfig()).tool_choice == "pick"
    assert ReactAgent(provider, [get_current_time], AgentConfig()).tool_choice == "auto"

    llm_server.script(chose("get_current_time"), writes("get_current_time", {"timezone": "UTC"}))
    agent = ReactAgent(embedded, [get_current_time], AgentConfig(language="en", max_iterations=1))
    await run(agent, "What time is it?")
    assert [forced_to(r) for r in llm_server.requests[:2]] == ["choose_tool", "get_current_time"]
