"""The `web_search` tool: numbered results, the session cache, failures as text. No network:
the search backend is a fake function."""

from __future__ import annotations

import asyncio
import threading

import pytest
from ddgs.exceptions import DDGSException
from langchain_core.messages import ToolMessage

from reqstudio.tools.web_search import WEB_SEARCH_TOOL_NAME, WebSearch, web_search_tool
from tests.fake_search import FAILURES

ROWS = [
    {
        "title": "EARS - Easy Approach",
        "href": "https://example.org/ears",
        "body": "Five  patterns\n for requirements.",
    },
    {"title": "Mavin 2009", "href": "https://example.org/mavin", "body": "The original paper."},
]


def backend_returning(rows, calls: list[str] | None = None):
    def backend(query: str, max_results: int):
        if calls is not None:
            calls.append(query)
        return rows[:max_results]

    return backend


async def call_tool(search: WebSearch, query: str) -> ToolMessage:
    return await search.as_tool().ainvoke(
        {
            "type": "tool_call",
            "id": "call_1",
            "name": WEB_SEARCH_TOOL_NAME,
            "args": {"query": query},
        }
    )


async def test_results_are_numbered_with_title_url_and_snippet():
    message = await call_tool(WebSearch(backend_returning(ROWS)), "EARS syntax")
    assert message.content == (
        'Search results for "EARS syntax" (2):\n\n'
        "[1] EARS - Easy Approach\nURL: https://example.org/ears\nFive patterns for requirements.\n\n"
        "[2] Mavin 2009\nURL: https://example.org/mavin\nThe original paper."
    )
    assert message.artifact["ok"] is True
    assert [hit["url"] for hit in message.artifact["hits"]] == [
        "https://example.org/ears",
        "https://example.org/mavin",
    ]


def test_the_tool_is_named_and_described_for_the_model():
    tool = web_search_tool(WebSearch(backend_returning(ROWS)))
    assert tool.name == "web_search"
    assert "Search the web" in tool.description
    schema = tool.tool_call_schema.model_json_schema()
    assert schema["required"] == ["query"]
    assert "keyword" in schema["properties"]["query"]["description"]


async def test_identical_queries_in_a_session_come_from_the_cache():
    calls: list[str] = []
    search = WebSearch(backend_returning(ROWS, calls))
    first = await search.search("EARS syntax")
    again = await search.search("  ears   SYNTAX ")
    other = await search.search("EARS examples")
    assert calls == ["EARS syntax", "EARS examples"]
    assert not first.cached and again.cached and not other.cached
    assert again.hits == first.hits
    assert (search.backend_calls, search.cache_hits) == (2, 1)
    search.clear()
    await search.search("EARS syntax")
    assert len(calls) == 3


async def test_the_same_query_twice_at_once_searches_once():
    calls: list[str] = []
    release = threading.Event()

    def slow_backend(query: str, max_results: int):
        calls.append(query)
        release.wait(5)
        return ROWS

    search = WebSearch(slow_backend)
    both = asyncio.gather(search.search("EARS"), search.search("ears"))
    await asyncio.sleep(0.05)
    release.set()
    first, second = await both
    assert calls == ["EARS"]
    assert first.hits == second.hits and second.cached


# what the text for the model says of each kind of failure
SAID = {
    "unreachable": "could not be reached",
    "rate_limit": "rate-limiting",
    "timeout": "timed out",
}


@pytest.mark.parametrize(("error", "kind"), FAILURES)
async def test_failures_come_back_as_text_not_exceptions(error, kind):
    def failing(query: str, max_results: int):
        raise error

    search = WebSearch(failing)
    message = await call_tool(search, "anything")
    assert isinstance(message, ToolMessage)
    assert message.content.startswith('web_search failed for "anything"')
    assert SAID[kind] in message.content
    assert "answer from what you already know" in message.content
    assert message.artifact["ok"] is False


async def test_a_backend_that_hangs_times_out_as_text():
    never = threading.Event()

    def hanging(query: str, max_results: int):
        never.wait(3)
        return []

    search = WebSearch(hanging, timeout=0.2)
    outcome = await search.search("slow")
    never.set()
    assert not outcome.ok and "timed out" in outcome.error


async def test_failed_searches_are_not_cached():
    attempts: list[str] = []

    def flaky(query: str, max_results: int):
        attempts.append(query)
        if len(attempts) == 1:
            raise DDGSException("temporary")
        return ROWS

    search = WebSearch(flaky)
    assert not (await search.search("q")).ok
    assert (await search.search("q")).ok
    assert len(attempts) == 2


async def test_no_results_and_empty_queries_are_explained():
    search = WebSearch(backend_returning([]))
    assert "No results" in (await search.search("zzzz")).as_text()
    empty = await search.search("   ")
    assert not empty.ok and "empty" in empty.error


async def test_ddgs_no_results_is_reported_as_no_results_not_as_unreachable():
    def nothing_found(query: str, max_results: int):
        raise DDGSException("No results found.")  # what ddgs raises when engines found nothing

    message = await call_tool(WebSearch(nothing_found), "zzqx unknown term")
    assert message.content == 'No results for "zzqx unknown term". Try different or fewer keywords.'
    assert "could not be reached" not in message.content
    assert message.artifact["ok"] is True and message.artifact["hits"] == []


def test_the_search_backend_can_be_chosen_by_name():
    from reqstudio.tools.web_search import ddgs_backend, load_backend
    from tests.fake_search import five_results

    assert load_backend(None) is ddgs_backend
    assert load_backend("tests.fake_search:five_results") is five_results
