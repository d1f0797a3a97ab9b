"""Agent mode's ReAct loop, end to end through the real OpenAI client and a scripted server:
what a user would see in the steps, the answer and the statistics."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import StructuredTool

from reqstudio.llm import Endpoint, ModelFactory
from reqstudio.modes.agent import (
    AgentConfig,
    AgentConfigError,
    AgentEventAdapter,
    AgentMemory,
    AnswerFinished,
    AnswerToken,
    CheckOutcome,
    Decision,
    Failed,
    HandOver,
    LoopDetected,
    ReactAgent,
    Stats,
    ThinkingFinished,
    ThinkingStarted,
    ThinkingToken,
    ToolCallFinished,
    ToolCallStarted,
)
from reqstudio.settings import ModelSpec, SettingsError, load_settings
from reqstudio.tools.web_search import WebSearch
from reqstudio.usage import UsageTracker
from tests.agent_support import ANSWER, REASONING, calls_at_once
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript


class FakeSearchBackend:
    """Stands in for DuckDuckGo: five results per query, or an error when told to."""

    def __init__(self, fail_with: Exception | None = None, results: int = 5):
        self.queries: list[str] = []
        self.fail_with = fail_with
        self.results = results

    def __call__(self, query: str, max_results: int) -> list[dict[str, str]]:
        self.queries.append(query)
        if self.fail_with is not None:
            raise self.fail_with
        slug = query.replace(" ", "-").lower()
        return [
            {
                "title": f"{query} — source {i}",
                "href": f"https://example.org/{slug}/{i}",
                "body": f"Snippet {i} explaining {query} in some detail.",
            }
            for i in range(1, min(self.results, max_results) + 1)
        ]


async def collect(agent: ReactAgent, question: str, **kwargs: Any) -> list[Any]:
    return [event async for event in agent.run(question, **kwargs)]


def of_type(events: list[Any], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def search_call(query: str, call_id: str = "") -> ToolCallScript:
    return ToolCallScript("web_search", {"query": query}, id=call_id)


def answer_reply(text: str, **kwargs: Any) -> Reply:
    return Reply(content=text, match=ANSWER, **kwargs)


def en(**kwargs: Any) -> AgentConfig:
    return AgentConfig(language="en", **kwargs)


def searching_agent(factory: ModelFactory, config: AgentConfig, **kwargs: Any) -> ReactAgent:
    """An agent whose one tool is web search over the fake backend's results."""
    return ReactAgent(factory, [WebSearch(FakeSearchBackend()).as_tool()], config, **kwargs)


# --- the loop ---------------------------------------------------------------------------


async def test_search_then_second_search_then_streamed_answer(llm_server, factory):
    backend = FakeSearchBackend()
    llm_server.script(
        Reply(content="I need the standard's scope.", tool_calls=[search_call("ISO 29148")]),
        Reply(content="Compare with the older one.", tool_calls=[search_call("IEEE 830")]),
        Reply(content="That is enough."),
        # paced as a provider streams (the app gives at most one piece per 50 ms)
        answer_reply(
            "ISO/IEC/IEEE 29148 replaced IEEE 830 [1][6].", chunk_chars=5, chunk_delay=0.06
        ),
    )
    agent = ReactAgent(factory, [WebSearch(backend).as_tool()], en())

    events = await collect(agent, "Which standard replaced IEEE 830?")

    assert [e.round for e in of_type(events, ThinkingStarted)] == [1, 2, 3]
    started = of_type(events, ToolCallStarted)
    assert [(s.tool, s.arguments, s.kind) for s in started] == [
        ("web_search", {"query": "ISO 29148"}, "search"),
        ("web_search", {"query": "IEEE 830"}, "search"),
    ]
    first = of_type(events, ToolCallFinished)[0]
    assert first.ok and first.result_count == 5
    assert [hit.title for hit in first.top_results] == [
        f"ISO 29148 — source {i}" for i in (1, 2, 3)
    ]
    assert "[1] ISO 29148 — source 1" in first.result_text
    assert "URL: https://example.org/iso-29148/1" in first.result_text
    # The model saw the first results before it chose the second search.
    second_request = llm_server.requests[1]["messages"]
    assert any(
        m["role"] == "tool" and "Snippet 1 explaining ISO 29148" in str(m["content"])
        for m in second_request
    )
    hand_over = of_type(events, HandOver)[0]
    assert hand_over.limit is None and hand_over.reason_code == "model_done"
    # The answer streamed in pieces and is whole at the end.
    tokens = of_type(events, AnswerToken)
    assert len(tokens) > 1
    assert "".join(t.text for t in tokens) == of_type(events, AnswerFinished)[0].text
    assert of_type(events, AnswerFinished)[0].text == "ISO/IEC/IEEE 29148 replaced IEEE 830 [1][6]."
    # The answer model got both searches' results, numbered for citation.
    answer_request = str(llm_server.requests[-1]["messages"][0]["content"])
    assert "[1] ISO 29148 — source 1 (https://example.org/iso-29148/1)" in answer_request
    assert "[6] IEEE 830 — source 1" in answer_request
    # ...as the system's context; the last turn is the user's question itself
    last = llm_server.requests[-1]["messages"][-1]
    assert last["role"] == "user" and last["content"] == "Which standard replaced IEEE 830?"
    assert isinstance(events[-1], Stats)
    assert events.index(hand_over) < events.index(tokens[0])


async def test_model_answers_without_tools_when_none_needed(llm_server, factory):
    llm_server.script(
        Reply(content="This is general knowledge; no search needed."),
        answer_reply("A functional requirement states what the system does."),
    )
    agent = searching_agent(factory, en())

    events = await collect(agent, "What is a functional requirement?")

    assert not of_type(events, ToolCallStarted)
    assert of_type(events, ThinkingFinished)[0].tool_calls == []
    assert of_type(events, Decision)[-1].continue_ is False
    assert of_type(events, AnswerFinished)[0].text.startswith("A functional requirement")
    assert "no tool was needed" in str(llm_server.requests[-1]["messages"][0]["content"])


async def test_two_tool_calls_of_one_turn_run_at_the_same_time(llm_server, factory):
    entered = {"alpha": asyncio.Event(), "beta": asyncio.Event()}

    def barrier_tool(name: str, other: str) -> StructuredTool:
        async def call(topic: str) -> str:
            entered[name].set()
            # Only finishes if the other tool has started too: run one after the other,
            # and this times out.
            await asyncio.wait_for(entered[other].wait(), timeout=5)
            return f"{name} facts about {topic}, long enough to count as a real result."

        return StructuredTool.from_function(
            coroutine=call, name=name, description=f"Look up {name} facts."
        )

    calls = [ToolCallScript("alpha", {"topic": "x"}), ToolCallScript("beta", {"topic": "y"})]
    llm_server.script(*calls_at_once("Both at once.", calls, "Done.", "Both found."))
    tools = [barrier_tool("alpha", "beta"), barrier_tool("beta", "alpha")]
    agent = ReactAgent(factory, tools, en())

    events = await collect(agent, "alpha and beta?")

    finished = {e.tool: e for e in of_type(events, ToolCallFinished)}
    assert finished["alpha"].ok and finished["beta"].ok, finished
    assert finished["alpha"].kind == "tool"
    # Both calls started before either finished.
    kinds = [type(e).__name__ for e in events if isinstance(e, ToolCallStarted | ToolCallFinished)]
    assert kinds == ["ToolCallStarted", "ToolCallStarted", "ToolCallFinished", "ToolCallFinished"]


async def test_the_same_call_again_is_a_loop_and_the_answer_uses_what_was_found(
    llm_server, factory
):
    backend = FakeSearchBackend()
    llm_server.script(
        Reply(tool_calls=[search_call("requirements traceability")]),
        Reply(tool_calls=[search_call("  Requirements   TRACEABILITY ")]),
        answer_reply("Traceability links requirements to their sources [1]."),
    )
    agent = ReactAgent(factory, [WebSearch(backend).as_tool()], en())

    events = await collect(agent, "What is traceability?")

    loop = of_type(events, LoopDetected)
    assert len(loop) == 1 and loop[0].tool == "web_search"
    assert "rephrase" in loop[0].message and "switch mode" in loop[0].message
    assert of_type(events, HandOver)[0].limit == "loop"
    assert backend.queries == ["requirements traceability"]  # the repeat never ran
    assert of_type(events, AnswerFinished)[0].text.startswith("Traceability")
    assert "repeating itself" in str(llm_server.requests[-1]["messages"][0]["content"])


async def test_iteration_limit_stops_the_loop_and_says_so(llm_server, factory):
    llm_server.script(
        Reply(tool_calls=[search_call("query one")]),
        Reply(tool_calls=[search_call("query two")]),
        Reply(tool_calls=[search_call("query three")], match=REASONING),
        answer_reply("Here is what I found [1]."),
    )
    agent = searching_agent(factory, en(max_iterations=2))

    events = await collect(agent, "Tell me everything.")

    assert len(of_type(events, ThinkingStarted)) == 2
    assert len(of_type(events, ToolCallStarted)) == 2
    hand_over = of_type(events, HandOver)[0]
    assert hand_over.limit == "iterations"
    assert "tool-call limit (2 calls)" in hand_over.reason
    assert of_type(events, AnswerFinished)[0].text == "Here is what I found [1]."
    assert "tool-call limit" in str(llm_server.requests[-1]["messages"][0]["content"])
    assert of_type(events, Stats)[0].rounds == 2
    assert llm_server.pending == 1  # the third round was never asked for


async def test_time_limit_cancels_a_hanging_tool_and_answers_from_what_was_found(
    llm_server, factory
):
    cancelled = asyncio.Event()

    async def hang(topic: str) -> str:
        try:
            await asyncio.Event().wait()  # never returns
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "unreachable"

    hanging = StructuredTool.from_function(coroutine=hang, name="slow_lookup", description="Slow.")
    llm_server.script(
        Reply(
            tool_calls=[
                search_call("fast query"),
                ToolCallScript("slow_lookup", {"topic": "anything"}),
            ]
        ),
        answer_reply("Partial answer [1]."),
    )
    agent = ReactAgent(
        factory,
        [WebSearch(FakeSearchBackend()).as_tool(), hanging],
        en(max_execution_time=1.0),
    )

    events = await asyncio.wait_for(collect(agent, "Slow question"), timeout=20)

    finished = {e.tool: e for e in of_type(events, ToolCallFinished)}
    assert finished["web_search"].ok
    assert not finished["slow_lookup"].ok and "time limit" in finished["slow_lookup"].result_text
    assert cancelled.is_set()
    hand_over = of_type(events, HandOver)[0]
    assert hand_over.limit == "time" and "time limit (1 s, of which 0.75 s for tools)" in (
        hand_over.reason
    )
    assert of_type(events, AnswerFinished)[0].text == "Partial answer [1]."
    answer_request = str(llm_server.requests[-1]["messages"][0]["content"])
    assert "fast query — source 1" in answer_request and "time limit" in answer_request


async def test_time_limit_while_the_model_is_thinking(llm_server, factory):
    llm_server.script(
        Reply(content="Thinking very slowly", tool_calls=[search_call("x")], delay=5),
        answer_reply("Answer without research."),
    )
    agent = searching_agent(factory, en(max_execution_time=0.5))

    events = await asyncio.wait_for(collect(agent, "Quick?"), timeout=20)

    assert not of_type(events, ToolCallStarted)
    assert of_type(events, HandOver)[0].limit == "time"
    assert of_type(events, AnswerFinished)[0].text == "Answer without research."


async def test_a_failing_tool_is_reported_and_the_agent_goes_on(llm_server, factory):
    async def broken(topic: str) -> str:
        raise RuntimeError("database unavailable")

    failing = StructuredTool.from_function(coroutine=broken, name="catalogue", description="Docs.")
    offline = WebSearch(FakeSearchBackend(fail_with=ConnectionError("no route to host")))
    llm_server.script(
        Reply(tool_calls=[ToolCallScript("catalogue", {"topic": "x"}), search_call("fallback")]),
        Reply(content="Both failed; I will answer from what I know."),
        answer_reply("From general knowledge: ..."),
    )
    agent = ReactAgent(factory, [failing, offline.as_tool()], en())

    events = await collect(agent, "Find x")

    finished = {e.tool: e for e in of_type(events, ToolCallFinished)}
    assert not finished["catalogue"].ok
    assert "database unavailable" in finished["catalogue"].result_text
    assert not finished["web_search"].ok
    assert "could not be reached" in finished["web_search"].result_text
    # Empty-handed round: the check says go on, the model saw the errors and decided.
    assert of_type(events, Decision)[0].continue_ and of_type(events, Decision)[0].reason_code == (
        "results_weak"
    )
    second_request = llm_server.requests[1]["messages"]
    assert any("database unavailable" in str(m.get("content")) for m in second_request)
    assert of_type(events, AnswerFinished)[0].text.startswith("From general knowledge")
    assert not of_type(events, Failed)


async def test_bad_arguments_and_unknown_tools_come_back_as_errors(llm_server, factory):
    llm_server.script(
        Reply(
            tool_calls=[
                ToolCallScript("web_search", "query=requirements"),
                ToolCallScript("teleport", {"to": "moon"}),
            ]
        ),
        Reply(content="Giving up on tools."),
        answer_reply("Sorry."),
    )
    agent = searching_agent(factory, en())

    events = await collect(agent, "Go")

    finished = {e.tool: e for e in of_type(events, ToolCallFinished)}
    assert "not valid JSON" in finished["web_search"].result_text
    assert "no tool named 'teleport'" in finished["teleport"].result_text
    assert of_type(events, AnswerFinished)[0].text == "Sorry."


# --- failures and cancellation ------------------------------------------------------------


def quick_retry_factory(server: ScriptedLLMServer, tmp_path: Path) -> ModelFactory:
    settings = load_settings(
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY="sk-test-not-a-real-key",
        OPENAI_MODEL="scripted-model",
        OPENAI_MAX_RETRIES=1,
        REQSTUDIO_DATA_DIR=str(tmp_path),
    )
    return ModelFactory(
        settings, Endpoint(server.base_url, "sk-test-not-a-real-key", "scripted-model")
    )


async def test_model_server_errors_are_retried_then_reported_in_plain_words(llm_server, tmp_path):
    llm_server.script(
        Reply(tool_calls=[search_call("first")]),
        Reply(fault="500"),
        Reply(fault="500"),
    )
    agent = ReactAgent(
        quick_retry_factory(llm_server, tmp_path),
        [WebSearch(FakeSearchBackend()).as_tool()],
        en(),
    )

    events = await collect(agent, "Anything")

    failed = of_type(events, Failed)
    assert len(failed) == 1
    assert "server error (500)" in failed[0].message and "still after retries" in failed[0].message
    assert "Traceback" not in failed[0].message
    assert [k.arguments for k in failed[0].kept_results] == [{"query": "first"}]
    assert len(llm_server.requests) == 3  # the first round, then one try and one retry
    assert not of_type(events, AnswerFinished)
    assert isinstance(events[-1], Stats)


async def test_an_unexpected_error_keeps_results_and_suggests_chat_mode(llm_server, factory):
    def broken_check(check):
        raise KeyError("bug in a custom check")

    llm_server.script(Reply(tool_calls=[search_call("kept query")]))
    agent = searching_agent(factory, en(result_check=broken_check))

    events = await collect(agent, "Anything")

    failed = of_type(events, Failed)[0]
    assert failed.suggest_chat_mode and "Chat mode" in failed.message
    assert failed.kept_results[0].tool == "web_search"
    assert "kept query — source 1" in failed.kept_results[0].result_text
    assert isinstance(events[-1], Stats)


async def test_stop_button_cancels_running_tools(llm_server, factory):
    tool_started, tool_cancelled = asyncio.Event(), asyncio.Event()

    async def hang(topic: str) -> str:
        tool_started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            tool_cancelled.set()
            raise
        return ""

    tool = StructuredTool.from_function(coroutine=hang, name="slow_lookup", description="Slow.")
    llm_server.script(Reply(tool_calls=[ToolCallScript("slow_lookup", {"topic": "x"})]))
    agent = ReactAgent(factory, [tool], en())
    seen: list[Any] = []

    async def consume() -> None:
        async for event in agent.run("Go"):
            seen.append(event)

    task = asyncio.create_task(consume())
    await asyncio.wait_for(tool_started.wait(), timeout=10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert tool_cancelled.is_set()
    assert not of_type(seen, AnswerFinished) and not of_type(seen, Stats)
    assert agent.memory.turns == []


# --- models and statistics ------------------------------------------------------------


async def test_single_model_mode_uses_one_model_for_both_phases(llm_server, factory):
    llm_server.script(
        Reply(tool_calls=[search_call("q")]), Reply(content="ok"), answer_reply("Done [1].")
    )
    config = en()
    assert config.single_model
    agent = searching_agent(factory, config)

    events = await collect(agent, "Q")

    assert {r["model"] for r in llm_server.requests} == {"scripted-model"}
    assert of_type(events, ThinkingStarted)[0].model == "scripted-model"
    assert of_type(events, HandOver)[0].answer_model == "scripted-model"


async def test_two_model_mode_calls_each_model_in_its_phase(llm_server, factory):
    llm_server.script(
        Reply(tool_calls=[search_call("q")]), Reply(content="ok"), answer_reply("Done [1].")
    )
    config = en(
        function_call_spec=ModelSpec(model="tool-caller-mini", temperature=0.0),
        answer_spec=ModelSpec(model="writer-large", temperature=0.3),
    )
    agent = searching_agent(factory, config)

    events = await collect(agent, "Q")

    models = [r["model"] for r in llm_server.requests]
    assert models == ["tool-caller-mini", "tool-caller-mini", "writer-large"]
    assert "tools" in llm_server.requests[0] and "tools" not in llm_server.requests[-1]
    assert llm_server.requests[-1]["stream"] is True  # the answer is always streamed
    assert llm_server.requests[-1]["temperature"] == 0.3
    assert of_type(events, ThinkingStarted)[0].model == "tool-caller-mini"
    assert of_type(events, HandOver)[0].answer_model == "writer-large"
    stats = of_type(events, Stats)[0]
    assert stats.per_model["function_call"].model == "tool-caller-mini"
    assert stats.per_model["answer"].model == "writer-large"


async def test_statistics_per_model_match_the_providers_usage(llm_server, factory):
    llm_server.script(
        Reply(tool_calls=[search_call("q")], prompt_tokens=120, completion_tokens=15),
        Reply(content="enough", prompt_tokens=300, completion_tokens=7),
        answer_reply("Answer [1].", prompt_tokens=450, completion_tokens=60),
    )
    config = en(
        function_call_spec=ModelSpec(model="fc"),
        answer_spec=ModelSpec(model="writer"),
        prices={"fc": (0.001, 0.002), "writer": (0.01, 0.03)},
    )
    session_tracker = UsageTracker()
    agent = searching_agent(factory, config, tracker=session_tracker)

    events = await collect(agent, "Q")

    stats = events[-1]
    assert isinstance(stats, Stats)
    fc, answer = stats.per_model["function_call"], stats.per_model["answer"]
    assert (fc.calls, fc.input_tokens, fc.output_tokens) == (2, 420, 22)
    assert (answer.calls, answer.input_tokens, answer.output_tokens) == (1, 450, 60)
    assert stats.total_tokens == 420 + 22 + 450 + 60
    expected = 420 / 1000 * 0.001 + 22 / 1000 * 0.002 + 450 / 1000 * 0.01 + 60 / 1000 * 0.03
    assert stats.estimated_cost == pytest.approx(expected)
    assert stats.phase_seconds["tools"] > 0 and stats.phase_seconds["answer"] > 0
    assert stats.phase_seconds["total"] == pytest.approx(
        stats.phase_seconds["tools"] + stats.phase_seconds["answer"], abs=0.01
    )
    assert stats.tool_calls == 1
    # The session's tracker counts the same calls.
    assert session_tracker.total_tokens == stats.total_tokens


async def test_cost_is_unknown_without_prices(llm_server, factory):
    llm_server.script(Reply(content="no tools"), answer_reply("Hi."))
    events = await collect(ReactAgent(factory, [], en()), "Hi")
    assert of_type(events, Stats)[0].estimated_cost is None


# --- memory, cache and the result check ------------------------------------------------------


async def test_memory_carries_turns_and_identical_searches_come_from_the_cache(llm_server, factory):
    backend = FakeSearchBackend()
    search = WebSearch(backend)  # one per chat session
    llm_server.script(
        Reply(tool_calls=[search_call("EARS requirement syntax")]),
        Reply(content="ok"),
        answer_reply("EARS has five patterns [1]."),
    )
    agent = ReactAgent(factory, [search.as_tool()], en())
    await collect(agent, "What is EARS?")

    # The UI stores the memory in the session and restores it for the next message.
    stored = agent.memory.dump()
    restored = AgentMemory.load(stored)
    assert restored.turns[0].answer == "EARS has five patterns [1]."
    assert restored.tool_records[0].arguments == {"query": "EARS requirement syntax"}

    llm_server.script(
        Reply(tool_calls=[search_call("ears requirement syntax")]),
        Reply(content="ok"),
        answer_reply("Ubiquitous, event-driven, ... [1]."),
    )
    next_agent = ReactAgent(factory, [search.as_tool()], en(), memory=restored)
    events = await collect(next_agent, "List them.")

    assert of_type(events, ToolCallFinished)[0].cached is True
    assert backend.queries == ["EARS requirement syntax"]
    first_request = llm_server.requests[3]["messages"]
    assert [m["content"] for m in first_request if m["role"] in ("user", "assistant")][:2] == [
        "What is EARS?",
        "EARS has five patterns [1].",
    ]
    assert [t.question for t in next_agent.memory.turns] == ["What is EARS?", "List them."]


async def test_history_can_be_given_as_plain_turns(llm_server, factory):
    llm_server.script(Reply(content="no tools"), answer_reply("Yes."))
    agent = ReactAgent(factory, [], en())
    history = [
        {"role": "user", "content": "My system is a library catalogue."},
        {"role": "assistant", "content": "Noted."},
    ]
    await collect(agent, "Is it web based?", history=history)
    sent = [m["content"] for m in llm_server.requests[0]["messages"]]
    assert "My system is a library catalogue." in sent and "Noted." in sent


async def test_a_custom_result_check_can_end_the_tool_phase(llm_server, factory):
    seen_rounds = []

    def stop_after_first_hit(check):
        seen_rounds.append((check.round, len(check.round_results)))
        return CheckOutcome(continue_=False, reason="One good source is enough here.")

    llm_server.script(Reply(tool_calls=[search_call("q")]), answer_reply("Done [1]."))
    agent = searching_agent(factory, en(result_check=stop_after_first_hit))

    events = await collect(agent, "Q")

    assert seen_rounds == [(1, 1)]
    assert len(of_type(events, ThinkingStarted)) == 1
    assert of_type(events, HandOver)[0].reason == "One good source is enough here."
    assert of_type(events, AnswerFinished)[0].text == "Done [1]."


async def test_enough_result_text_ends_the_tool_phase_early(llm_server, factory):
    llm_server.script(Reply(tool_calls=[search_call("q")]), answer_reply("Done [1]."))
    agent = searching_agent(factory, en(enough_result_chars=100))

    events = await collect(agent, "Q")

    hand_over = of_type(events, HandOver)[0]
    assert hand_over.reason_code == "enough_results" and hand_over.limit is None
    assert len(llm_server.requests) == 2


async def test_empty_search_results_mean_search_again(llm_server, factory):
    llm_server.script(
        Reply(tool_calls=[search_call("obscure term")]),
        Reply(content="nothing found; stop"),
        answer_reply("I could not find it."),
    )
    agent = ReactAgent(factory, [WebSearch(FakeSearchBackend(results=0)).as_tool()], en())

    events = await collect(agent, "Q")

    finished = of_type(events, ToolCallFinished)[0]
    assert finished.ok and finished.result_count == 0
    decision = of_type(events, Decision)[0]
    assert decision.continue_ and decision.reason_code == "results_weak"
    assert "under 20 characters" in decision.reason


# --- configuration, prompts and events ---------------------------------------------------------


def test_config_from_settings_reads_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENT_FUNCTION_CALL_MODEL", '{"model": "gpt-4o-mini", "temperature": 0}')
    monkeypatch.setenv(
        "AGENT_ANSWER_MODEL",
        '{"model": "deepseek-chat", "base_url": "https://api.deepseek.com/v1", "api_key": "k"}',
    )
    monkeypatch.setenv("AGENT_MAX_ITERATIONS", "3")
    monkeypatch.setenv("AGENT_MAX_EXECUTION_TIME", "30")
    monkeypatch.setenv("AGENT_VERBOSE", "true")
    monkeypatch.setenv("AGENT_PRICES", '{"gpt-4o-mini": [0.00015, 0.0006]}')
    config = AgentConfig.from_settings(load_settings(REQSTUDIO_DATA_DIR=str(tmp_path)))
    assert (config.max_iterations, config.max_execution_time, config.verbose) == (3, 30.0, True)
    assert config.function_call_spec.model == "gpt-4o-mini"
    assert config.answer_spec.base_url == "https://api.deepseek.com/v1"
    assert not config.single_model
    assert config.prices == {"gpt-4o-mini": (0.00015, 0.0006)}


def test_config_defaults_follow_the_spec(monkeypatch, tmp_path):
    for name in (
        "AGENT_FUNCTION_CALL_MODEL",
        "AGENT_ANSWER_MODEL",
        "AGENT_MAX_ITERATIONS",
        "AGENT_MAX_EXECUTION_TIME",
        "AGENT_VERBOSE",
        "AGENT_PRICES",
    ):
        monkeypatch.delenv(name, raising=False)
    config = AgentConfig.from_settings(load_settings(REQSTUDIO_DATA_DIR=str(tmp_path)))
    assert (config.max_iterations, config.max_execution_time) == (5, 60.0)
    assert config.single_model and config.prices == {}


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (AgentConfig(function_call_spec=ModelSpec(model=" ")), "AGENT_FUNCTION_CALL_MODEL"),
        (
            AgentConfig(answer_spec=ModelSpec(model="m", base_url="ftp://x")),
            "AGENT_ANSWER_MODEL",
        ),
        (AgentConfig(max_iterations=0), "max_iterations"),
    ],
)
def test_invalid_config_is_refused_with_a_clear_message(config, message, factory):
    with pytest.raises(AgentConfigError, match=message):
        ReactAgent(factory, [], config)


def test_invalid_prices_are_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENT_PRICES", '{"gpt-4o": "cheap"}')
    with pytest.raises(SettingsError, match="AGENT_PRICES"):
        load_settings(REQSTUDIO_DATA_DIR=str(tmp_path))


def test_prices_come_from_settings(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENT_PRICES", '{"gpt-4o": {"input": 0.0025, "output": 0.01}}')
    config = AgentConfig.from_settings(load_settings(REQSTUDIO_DATA_DIR=str(tmp_path)))
    assert config.prices == {"gpt-4o": (0.0025, 0.01)}


@pytest.mark.parametrize(
    ("model", "template"),
    [
        ("smollm2-135m-instruct", "agent/react_system_small.md"),
        ("qwen2.5-0.5b-instruct", "agent/react_system_small.md"),
        ("gpt-4o-mini", "agent/react_system.md"),
        ("deepseek-chat", "agent/react_system.md"),
    ],
)
def test_prompt_variant_is_chosen_by_model_name(model, template, factory):
    agent = ReactAgent(factory, [], AgentConfig(function_call_spec=ModelSpec(model=model)))
    assert agent.system_prompt_template == template


def glossary_tool() -> StructuredTool:
    """A tool whose name and description appear nowhere in the prompt templates."""

    async def lookup(term: str) -> str:
        return f"{term}: a defined term."

    return StructuredTool.from_function(
        coroutine=lookup,
        name="zeta_glossary_lookup",
        description="Looks up zeta-project glossary entries by their exact term.",
    )


@pytest.mark.parametrize("model", ["scripted-model", "smollm2-135m-instruct"])
async def test_the_react_prompt_lists_every_tool_with_its_description(llm_server, factory, model):
    # Both prompt variants, as sent over the wire: a prompt that stops listing the tools
    # (or their descriptions) fails here; the rules alone mention only web_search.
    llm_server.script(Reply(content="no tools"), answer_reply("Hi."))
    tools = [WebSearch(FakeSearchBackend()).as_tool(), glossary_tool()]
    config = en(max_iterations=4, function_call_spec=ModelSpec(model=model))
    await collect(ReactAgent(factory, tools, config), "Hi")
    system = llm_server.requests[0]["messages"][0]["content"]
    assert "zeta_glossary_lookup" in system
    assert "Looks up zeta-project glossary entries by their exact term." in system
    assert "Search the web (DuckDuckGo)" in system  # web_search's own description
    assert "4 tool calls" in system


async def test_the_react_prompt_states_the_rules(llm_server, factory):
    llm_server.script(Reply(content="no tools"), answer_reply("Hi."))
    agent = searching_agent(factory, en(max_iterations=4))
    await collect(agent, "Hi")
    system = llm_server.requests[0]["messages"][0]["content"]
    assert "at most 4 tool calls in all" in system
    assert "[1], [2]" in system
    answer_system = llm_server.requests[-1]["messages"][0]["content"]
    assert "Cite the results" in answer_system


async def test_without_tools_the_prompt_says_so(llm_server, factory):
    llm_server.script(Reply(content="no tools"), answer_reply("Hi."))
    await collect(ReactAgent(factory, [], en()), "Hi")
    system = llm_server.requests[0]["messages"][0]["content"]
    assert "No tools are available in this session" in system


async def test_events_survive_a_json_round_trip(llm_server, factory):
    llm_server.script(
        Reply(content="look", tool_calls=[search_call("q")]),
        Reply(content="ok"),
        answer_reply("Done [1]."),
    )
    events = await collect(searching_agent(factory, en()), "Q")
    for event in events:
        assert AgentEventAdapter.validate_json(event.model_dump_json()) == event


async def test_a_stream_cut_during_the_answer_keeps_what_arrived(llm_server, tmp_path):
    llm_server.script(
        Reply(content="no tools"),
        answer_reply("The first half arrives, then the line goes dead.", fault="cut"),
        answer_reply("The first half arrives, then the line goes dead.", fault="cut"),
    )
    agent = ReactAgent(quick_retry_factory(llm_server, tmp_path), [], en())

    events = await collect(agent, "Q")

    failed = of_type(events, Failed)[0]
    assert "connection to the model provider broke" in failed.message
    assert len(llm_server.requests) == 3  # one reasoning call, the answer tried twice
    assert failed.partial_answer  # what arrived of the last try is kept
    assert "The first half arrives, then the line goes dead.".startswith(failed.partial_answer)
    assert agent.memory.turns == []  # an unfinished answer is not remembered as one


async def test_notices_are_in_chinese_by_default(llm_server, factory):
    llm_server.script(Reply(tool_calls=[search_call("q")]), answer_reply("好的 [1]。"))
    agent = searching_agent(factory, AgentConfig(max_iterations=1))
    events = await collect(agent, "问题")
    hand_over = of_type(events, HandOver)[0]
    assert hand_over.limit == "iterations"
    assert "已达到最大工具调用次数（1 次）" in hand_over.reason


async def test_verbose_mode_logs_every_thought_and_action(llm_server, factory, caplog):
    llm_server.script(
        Reply(content="Search the glossary.", tool_calls=[search_call("glossary term")]),
        Reply(content="done"),
        answer_reply("Answer [1]."),
    )
    tools = [WebSearch(FakeSearchBackend()).as_tool()]
    with caplog.at_level(logging.INFO, logger="reqstudio.agent"):
        await collect(ReactAgent(factory, tools, en(verbose=True)), "Q")
    logged = caplog.text
    assert "Search the glossary." in logged
    assert 'tool call web_search {"query": "glossary term"}' in logged
    assert "Snippet 1 explaining glossary term" in logged
    assert "Answer [1]." in logged

    caplog.clear()
    llm_server.script(Reply(content="quiet"), answer_reply("Quiet answer."))
    with caplog.at_level(logging.INFO, logger="reqstudio.agent"):
        await collect(ReactAgent(factory, tools, en(verbose=False)), "Q")
    assert "Quiet answer." not in caplog.text


async def test_a_huge_tool_result_is_cut_to_keep_the_context(llm_server, factory):
    async def dump(topic: str) -> str:
        return "x" * 20_000

    tool = StructuredTool.from_function(coroutine=dump, name="dump", description="Big output.")
    llm_server.script(
        Reply(tool_calls=[ToolCallScript("dump", {"topic": "all"})]),
        Reply(content="ok"),
        answer_reply("Done."),
    )
    events = await collect(ReactAgent(factory, [tool], en()), "Q")
    finished = of_type(events, ToolCallFinished)[0]
    assert finished.ok and len(finished.result_text) < 8100
    assert finished.result_text.endswith("[… 12000 more characters cut]")


# --- reasoning models, providers and the models' defaults -----------------------------------


def deepseek_spec(server: ScriptedLLMServer, model: str = "deepseek-reasoner") -> ModelSpec:
    return ModelSpec(
        provider="deepseek", model=model, base_url=server.base_url, api_key="sk-test-deepseek"
    )


async def test_a_reasoning_models_thinking_is_shown_in_the_thinking_step(llm_server, factory):
    thinking = "用户问的是 EARS。我不确定细节，应该先搜索。"
    llm_server.script(
        Reply(reasoning=thinking, content="Searching.", tool_calls=[search_call("EARS")],
              chunk_chars=4, chunk_delay=0.06),  # paced: pieces 60 ms apart
        Reply(reasoning="Results are enough.", content="Done."),
        answer_reply("EARS has five patterns [1].", reasoning="private musing of the writer"),
    )  # fmt: skip
    config = en(function_call_spec=deepseek_spec(llm_server))
    agent = searching_agent(factory, config)

    events = await collect(agent, "What is EARS?")

    first_round = [e for e in of_type(events, ThinkingToken) if e.round == 1]
    assert "".join(e.text for e in first_round if e.reasoning) == thinking
    assert len([e for e in first_round if e.reasoning]) > 1  # streamed, as it arrived
    finished = of_type(events, ThinkingFinished)[0]
    assert finished.reasoning == thinking
    assert finished.text == f"{thinking}\n\nSearching."  # what the step shows, in order
    assert of_type(events, ThinkingFinished)[1].reasoning == "Results are enough."
    # the answer is the answer model's content only, never its reasoning
    assert of_type(events, AnswerFinished)[0].text == "EARS has five patterns [1]."
    assert "private musing" not in "".join(e.text for e in of_type(events, AnswerToken))
    assert of_type(events, ThinkingStarted)[0].model == "deepseek-reasoner"


def test_the_factory_builds_each_supported_provider_with_one_retry_policy(factory, llm_server):
    from langchain_deepseek import ChatDeepSeek
    from langchain_openai import ChatOpenAI

    openai_model = factory.for_role("function_call", spec=ModelSpec(model="gpt-4o-mini"))
    deepseek_model = factory.for_role("answer", spec=deepseek_spec(llm_server))
    # (each the provider's LangChain class, its stream coalesced: reqstudio/coalesce.py)
    assert isinstance(openai_model, ChatOpenAI) and isinstance(deepseek_model, ChatDeepSeek)
    for model in (openai_model, deepseek_model):
        assert model.max_retries == 0  # the call path's policy is the only retry
        assert model.stream_usage is True and model.streaming is True
    assert deepseek_model.api_base == llm_server.base_url


def test_an_unsupported_provider_is_refused_before_any_call():
    with pytest.raises(ValueError, match="provider 'anthropic' is not supported"):
        ModelSpec(provider="anthropic", model="claude-x")


async def test_the_answer_model_defaults_to_the_given_function_call_model(llm_server, factory):
    only = factory.for_role("function_call", spec=ModelSpec(model="only-model"))
    llm_server.script(Reply(content="no tools"), answer_reply("One model did both."))
    agent = ReactAgent(factory, [], en(), function_call_llm=only)

    events = await collect(agent, "Q")

    assert [r["model"] for r in llm_server.requests] == ["only-model", "only-model"]
    assert of_type(events, HandOver)[0].answer_model == "only-model"
    assert of_type(events, AnswerFinished)[0].text == "One model did both."
    stats = of_type(events, Stats)[0]
    assert stats.per_model["answer"].model == "only-model"
    assert stats.per_model["answer"].calls == 1


# --- the tool-call limit and the time limit -------------------------------------------------


async def test_the_tool_call_limit_counts_calls_not_rounds(llm_server, factory):
    backend = FakeSearchBackend()
    llm_server.script(
        Reply(tool_calls=[search_call("one"), search_call("two"), search_call("three")]),
        Reply(tool_calls=[search_call("four")], match=REASONING),
        answer_reply("From two searches [1]."),
    )
    agent = ReactAgent(factory, [WebSearch(backend).as_tool()], en(max_iterations=2))

    events = await collect(agent, "Q")

    assert backend.queries == ["one", "two"]  # the third planned call was not run
    hand_over = of_type(events, HandOver)[0]
    assert hand_over.limit == "iterations"
    assert "tool-call limit (2 calls); 1 more planned call(s) were not run" in hand_over.reason
    assert of_type(events, Stats)[0].tool_calls == 2
    assert len(of_type(events, ThinkingStarted)) == 1
    assert llm_server.pending == 1  # no second round was asked for


def test_the_default_tool_call_limit_is_five_calls():
    assert AgentConfig().max_iterations == 5


class FakeClock:
    """A monotonic clock the test moves forward (the run's time checks read it)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_no_new_round_starts_once_the_time_is_up(llm_server, factory):
    clock = FakeClock()

    def slow_check(check):  # a check that (on the run's clock) takes longer than the limit
        clock.now += 50  # past the tool phase (45 s), within the run (60 s)
        return CheckOutcome(continue_=True, reason="look further")

    llm_server.script(
        Reply(tool_calls=[search_call("q")]),
        Reply(tool_calls=[search_call("later")], match=REASONING),
        answer_reply("Answer from the first round [1]."),
    )
    agent = ReactAgent(
        factory,
        [WebSearch(FakeSearchBackend()).as_tool()],
        en(max_execution_time=60, result_check=slow_check),
        clock=clock,
    )

    events = await collect(agent, "Q")

    assert len(of_type(events, ThinkingStarted)) == 1  # the time check between rounds held
    assert of_type(events, HandOver)[0].limit == "time"
    assert of_type(events, AnswerFinished)[0].text == "Answer from the first round [1]."
    assert llm_server.pending == 1


async def test_the_result_check_stops_a_round_that_ended_past_the_time_limit(llm_server, factory):
    clock = FakeClock()

    async def lookup(topic: str) -> str:
        clock.now += 50  # this call ends after the tool phase (45 of 60 s)
        return f"{topic}: a long enough result to count as usable."

    tool = StructuredTool.from_function(coroutine=lookup, name="lookup", description="Facts.")
    llm_server.script(
        Reply(tool_calls=[ToolCallScript("lookup", {"topic": "x"})]),
        answer_reply("Answer [1]."),
    )
    agent = ReactAgent(factory, [tool], en(max_execution_time=60), clock=clock)

    events = await collect(agent, "Q")

    decisions = of_type(events, Decision)
    assert [(d.reason_code, d.continue_, d.round) for d in decisions] == [("time", False, 1)]
    assert of_type(events, HandOver)[0].limit == "time"


async def test_a_result_check_that_runs_past_the_limit_hands_over_to_the_answer(
    llm_server, factory
):
    async def never_decides(check):
        await asyncio.Event().wait()

    llm_server.script(Reply(tool_calls=[search_call("q")]), answer_reply("Answer [1]."))
    agent = searching_agent(factory, en(max_execution_time=1.0, result_check=never_decides))

    events = await asyncio.wait_for(collect(agent, "Q"), timeout=20)

    assert not of_type(events, Failed)
    assert of_type(events, HandOver)[0].limit == "time"
    assert of_type(events, AnswerFinished)[0].text == "Answer [1]."


async def test_the_time_limit_bounds_the_answer_too_and_keeps_what_was_written(llm_server, factory):
    full = "The answer starts well, and then the provider slows to a crawl for ever."
    llm_server.script(
        Reply(tool_calls=[search_call("q")]),
        # matched, so that a loaded machine's run that goes straight to the answer once the
        # tools' share of the time is up does not hand this reply to the answer model
        Reply(content="enough", match=REASONING),
        answer_reply(full, chunk_chars=6, chunk_delay=0.4),
    )
    config = en(max_execution_time=1.0, answer_grace=0.5)
    agent = searching_agent(factory, config)

    # The run must end by the limit plus its grace; the guard fails the test if it does not.
    events = await asyncio.wait_for(collect(agent, "Q"), timeout=10)

    assert not of_type(events, AnswerFinished)  # an unfinished answer is not passed off as one
    failed = of_type(events, Failed)[0]
    assert "Reached the time limit (1 s) before the answer was finished" in failed.message
    assert failed.partial_answer and full.startswith(failed.partial_answer)
    assert failed.partial_answer != full
    assert [k.arguments for k in failed.kept_results] == [{"query": "q"}]
    assert isinstance(events[-1], Stats)
    assert agent.memory.turns == []


async def test_a_hanging_answer_provider_ends_with_a_clear_message(llm_server, factory):
    llm_server.script(Reply(content="no tools"), answer_reply("never sent", delay=15))
    agent = ReactAgent(factory, [], en(max_execution_time=1.0, answer_grace=0.5))

    events = await asyncio.wait_for(collect(agent, "Q"), timeout=10)

    failed = of_type(events, Failed)[0]
    assert "time limit" in failed.message and not failed.suggest_chat_mode
    assert isinstance(events[-1], Stats)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AGENT_PRICES", "{oops"),
        ("AGENT_FUNCTION_CALL_MODEL", '{"model": "m", "api_key": "sk-hidden"'),
        ("AGENT_ANSWER_MODEL", "[1, 2"),
    ],
)
def test_invalid_json_in_an_agent_setting_is_one_line(monkeypatch, tmp_path, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as caught:
        load_settings(REQSTUDIO_DATA_DIR=str(tmp_path))
    message = str(caught.value)
    assert message.startswith(f"Invalid setting {name}: not valid JSON (")
    assert "\n" not in message and "sk-hidden" not in message


def test_a_model_spec_with_a_bad_key_type_never_shows_the_whole_value(monkeypatch, tmp_path):
    monkeypatch.setenv("AGENT_ANSWER_MODEL", '{"model": 5, "api_key": "sk-hidden"}')
    with pytest.raises(SettingsError) as caught:
        load_settings(REQSTUDIO_DATA_DIR=str(tmp_path))
    assert "AGENT_ANSWER_MODEL" in str(caught.value) and "sk-hidden" not in str(caught.value)
