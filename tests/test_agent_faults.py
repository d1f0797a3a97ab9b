"""Fault injection for Agent mode, through the scripted server over real HTTP.

For each fault in each phase (the function-call model's round, the answer model's answer) a
run ends either complete or with a clear message, and never silently shorter: an answer that
is shown as finished is the whole scripted answer; a failure keeps what was written and what
was gathered. Every run also ends within the documented bound (the guard below)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from reqstudio.modes.agent import (
    AgentConfig,
    AnswerFinished,
    Failed,
    HandOver,
    ReactAgent,
    Stats,
    ToolCallFinished,
)
from reqstudio.modes.agent.events import AnswerRestarted, AnswerToken
from reqstudio.settings import ModelSpec
from reqstudio.tools.web_search import WebSearch
from tests.agent_support import ANSWER, REASONING
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript

FULL_ANSWER = "ISO/IEC/IEEE 29148 replaced IEEE 830 in 2011 and covers the SRS contents [1]."
LIMIT = 20.0  # AGENT_MAX_EXECUTION_TIME of these runs
BOUND = LIMIT + 5.0 + 10.0  # the limit, the answer's grace, and slack for a loaded machine


def backend(query: str, max_results: int) -> list[dict[str, str]]:
    return [
        {"title": f"{query} source", "href": "https://example.org/s", "body": f"About {query}."}
    ]


def search(query: str) -> ToolCallScript:
    return ToolCallScript("web_search", {"query": query})


def good_round() -> Reply:
    return Reply(match=REASONING, content="Search first.", tool_calls=[search("IEEE 830")])


def done_round() -> Reply:
    return Reply(match=REASONING, content="Enough.")


def good_answer(**kwargs: Any) -> Reply:
    return Reply(match=ANSWER, content=FULL_ANSWER, **kwargs)


async def run(factory, *, spec: ModelSpec | None = None) -> list[Any]:
    config = AgentConfig(language="en", max_execution_time=LIMIT, function_call_spec=spec)
    agent = ReactAgent(factory, [WebSearch(backend).as_tool()], config)

    async def collect() -> list[Any]:
        return [event async for event in agent.run("Which standard replaced IEEE 830?")]

    return await asyncio.wait_for(collect(), timeout=BOUND)


def check_ending(events: list[Any]) -> AnswerFinished | Failed:
    """Complete or a clear message; never a shorter answer passed off as whole."""
    assert isinstance(events[-1], Stats)
    finished = [e for e in events if isinstance(e, AnswerFinished)]
    failed = [e for e in events if isinstance(e, Failed)]
    assert len(finished) + len(failed) == 1, events
    if finished:
        assert finished[0].text == FULL_ANSWER
        return finished[0]
    message = failed[0]
    assert message.message and "Traceback" not in message.message
    assert FULL_ANSWER.startswith(message.partial_answer)
    return message


# --- faults that retrying fixes --------------------------------------------------------------

RECOVERABLE = {
    "stream closed before the finish reason": {"fault": "truncated"},
    "connection dropped mid-stream": {"fault": "cut"},
    "429": {"fault": "429"},
    "500": {"fault": "500"},
    "broken SSE chunk": {"fault": "malformed"},
    "content_filter finish": {"finish_reason": "content_filter"},
    "empty answer": {"content": "", "tool_calls": []},
}


@pytest.mark.parametrize("fault", RECOVERABLE.values(), ids=RECOVERABLE.keys())
async def test_a_fault_in_the_answer_is_retried_and_the_answer_is_whole(
    llm_server: ScriptedLLMServer, factory, fault, caplog
):
    broken = Reply(**{"match": ANSWER, "content": FULL_ANSWER, "chunk_chars": 10, **fault})
    llm_server.script(good_round(), done_round(), broken, good_answer())

    with caplog.at_level(logging.WARNING, logger="reqstudio.calls"):
        events = await run(factory)

    assert isinstance(check_ending(events), AnswerFinished)
    assert "Agent answer model: try 1 of 3 failed" in caplog.text  # the retry is named
    assert len(llm_server.requests) == 4  # one retry, counted once (no SDK retries)
    # the broken try is withdrawn: after the restart, the tokens are the whole answer, once
    restarts = [i for i, e in enumerate(events) if isinstance(e, AnswerRestarted)]
    assert len(restarts) == 1 and events[restarts[0]].attempt == 2
    after = "".join(e.text for e in events[restarts[0] :] if isinstance(e, AnswerToken))
    assert after == FULL_ANSWER


@pytest.mark.parametrize("fault", RECOVERABLE.values(), ids=RECOVERABLE.keys())
async def test_a_fault_in_a_reasoning_round_is_retried_and_the_run_goes_on(
    llm_server: ScriptedLLMServer, factory, fault, caplog
):
    broken = Reply(
        **{"match": REASONING, "content": "Search first.", "tool_calls": [search("IEEE 830")]}
        | fault
    )
    llm_server.script(broken, good_round(), done_round(), good_answer())

    with caplog.at_level(logging.WARNING, logger="reqstudio.calls"):
        events = await run(factory)

    assert isinstance(check_ending(events), AnswerFinished)
    assert "Agent function-call model: try 1 of 3 failed" in caplog.text
    assert len([e for e in events if isinstance(e, ToolCallFinished)]) == 1
    assert len(llm_server.requests) == 4


# --- faults that outlast the retries ---------------------------------------------------------

PERSISTENT = {
    "stream closed before the finish reason": (
        {"fault": "truncated"},
        "broke off before it finished, still after retries",
    ),
    "500 burst": ({"fault": "500"}, "server error (500), still after retries"),
    "429 burst": ({"fault": "429"}, "rate-limiting (429), still after retries"),
    "content_filter every time": (
        {"finish_reason": "content_filter"},
        "content filter stopped the answer (`finish_reason: content_filter`), still after retries",
    ),
    "empty every time": ({"content": ""}, "empty answer (no text, no tool call), still after"),
}


@pytest.mark.parametrize(("fault", "words"), PERSISTENT.values(), ids=PERSISTENT.keys())
async def test_an_answer_fault_that_outlasts_the_retries_is_a_clear_message(
    llm_server: ScriptedLLMServer, factory, fault, words
):
    llm_server.script(
        good_round(),
        done_round(),
        *[
            Reply(**{"match": ANSWER, "content": FULL_ANSWER, "chunk_chars": 10, **fault})
            for _ in range(3)
        ],
    )

    events = await run(factory)

    failed = check_ending(events)
    assert isinstance(failed, Failed)
    assert words in failed.message and "intermediate results are kept" in failed.message
    assert [k.arguments for k in failed.kept_results] == [{"query": "IEEE 830"}]
    assert len(llm_server.requests) == 2 + 3  # the policy's three tries, no more
    if fault.get("fault") == "truncated" or "finish_reason" in fault:
        assert failed.partial_answer  # what the last try wrote is kept
    if fault.get("content") == "":
        assert failed.partial_answer == ""


@pytest.mark.parametrize("provider", ["openai", "deepseek"])
async def test_sdk_retries_are_off_for_every_provider(
    llm_server: ScriptedLLMServer, factory, provider
):
    spec = ModelSpec(
        provider=provider, model="fc-model", base_url=llm_server.base_url, api_key="sk-test"
    )
    llm_server.script(*[Reply(match=REASONING, fault="500") for _ in range(3)])

    events = await run(factory, spec=spec)

    failed = check_ending(events)
    assert isinstance(failed, Failed) and "server error (500)" in failed.message
    assert len(llm_server.requests) == 3  # exactly the policy's tries


# --- length finishes -------------------------------------------------------------------------


async def test_an_answer_cut_at_the_length_limit_is_continued_not_taken_as_whole(
    llm_server: ScriptedLLMServer, factory
):
    half = len(FULL_ANSWER) // 2
    llm_server.script(
        good_round(),
        done_round(),
        Reply(match=ANSWER, content=FULL_ANSWER[:half], finish_reason="length"),
        Reply(match="Continue exactly where it stopped", content=FULL_ANSWER[half:]),
    )

    events = await run(factory)

    assert isinstance(check_ending(events), AnswerFinished)
    continuation = llm_server.requests[-1]["messages"]
    assert continuation[-2] == {"role": "assistant", "content": FULL_ANSWER[:half]}


async def test_an_answer_that_keeps_hitting_the_length_limit_is_a_clear_message(
    llm_server: ScriptedLLMServer, factory
):
    third = len(FULL_ANSWER) // 4
    pieces = [FULL_ANSWER[i * third : (i + 1) * third] for i in range(3)]
    llm_server.script(
        good_round(),
        done_round(),
        *[Reply(match=ANSWER, content=piece, finish_reason="length") for piece in pieces],
    )

    events = await run(factory)

    failed = check_ending(events)
    assert isinstance(failed, Failed)
    assert "hit its length limit" in failed.message
    assert failed.partial_answer == "".join(pieces)


async def test_a_reasoning_round_cut_at_the_length_limit_hands_over_with_what_was_found(
    llm_server: ScriptedLLMServer, factory
):
    llm_server.script(
        good_round(),
        Reply(match=REASONING, content="I will now call", finish_reason="length",
              tool_calls=[ToolCallScript("web_search", '{"query": "IEEE')]),
        good_answer(),
    )  # fmt: skip

    events = await run(factory)

    assert isinstance(check_ending(events), AnswerFinished)
    hand_over = next(e for e in events if isinstance(e, HandOver))
    assert hand_over.reason_code == "fc_length" and "length limit" in hand_over.reason
    assert len([e for e in events if isinstance(e, ToolCallFinished)]) == 1  # no half call


# --- malformed tool calls and a hanging provider ------------------------------------------------


async def test_malformed_tool_call_json_is_an_observation_and_the_run_completes(
    llm_server: ScriptedLLMServer, factory
):
    llm_server.script(
        Reply(match=REASONING, tool_calls=[ToolCallScript("web_search", '{"query": IEEE 830}')]),
        good_round(),
        done_round(),
        good_answer(),
    )

    events = await run(factory)

    assert isinstance(check_ending(events), AnswerFinished)
    first = next(e for e in events if isinstance(e, ToolCallFinished))
    assert not first.ok and "not valid JSON" in first.result_text


@pytest.mark.parametrize("phase", ["reasoning", "answer"])
async def test_a_hanging_provider_ends_within_the_bound(
    llm_server: ScriptedLLMServer, factory, phase
):
    config = AgentConfig(language="en", max_execution_time=1.0, answer_grace=0.5)
    agent = ReactAgent(factory, [WebSearch(backend).as_tool()], config)
    if phase == "reasoning":
        llm_server.script(Reply(match=REASONING, content="...", delay=15), good_answer())
    else:
        llm_server.script(done_round(), Reply(match=ANSWER, content=FULL_ANSWER, delay=15))

    async def collect() -> list[Any]:
        return [event async for event in agent.run("Q")]

    events = await asyncio.wait_for(collect(), timeout=1.0 + 0.5 + 5.0)

    ending = check_ending(events)
    if phase == "reasoning":  # the tool phase's time ran out: the answer is still written
        assert isinstance(ending, AnswerFinished)
        assert next(e for e in events if isinstance(e, HandOver)).limit == "time"
    else:
        assert isinstance(ending, Failed) and "time limit" in ending.message
