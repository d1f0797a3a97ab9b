"""The `web_search` tool: DuckDuckGo through `ddgs`, with a per-session cache.

Results come back to the agent as numbered text (title, URL, snippet). Any failure (no network,
rate limit, timeout) comes back as text too, never as an exception, so the agent can decide
what to do next. The search backend is a plain function, so tests can pass a fake one.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

from reqstudio.answers import describe_problems, tool_arguments

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

log = logging.getLogger("reqstudio.agent.search")

WEB_SEARCH_TOOL_NAME = "web_search"

# (query, max_results) -> ddgs-style rows: [{"title", "href", "body"}]. Synchronous.
SearchBackend = Callable[[str, int], list[dict[str, Any]]]


def ddgs_backend(query: str, max_results: int) -> list[dict[str, Any]]:
    from ddgs import DDGS

    return DDGS(timeout=5).text(query, max_results=max_results)


def load_backend(spec: str | None) -> SearchBackend:
    """The search backend named by REQSTUDIO_SEARCH_BACKEND ("package.module:function"), or
    DuckDuckGo. Tests and offline demos use it to put a deterministic search in the app."""
    if not spec:
        return ddgs_backend
    module_name, _, attribute = spec.partition(":")
    backend = getattr(importlib.import_module(module_name), attribute or "search")
    if not callable(backend):
        raise TypeError(f"REQSTUDIO_SEARCH_BACKEND={spec!r} is not a function")
    return backend


class SearchHit(BaseModel):
    title: str
    url: str
    snippet: str


class SearchOutcome(BaseModel):
    """One search as the agent saw it."""

    query: str
    ok: bool
    hits: list[SearchHit] = Field(default_factory=list)
    error: str | None = None
    # Why it failed, for a reader's own language: "timeout", "rate_limit", "unreachable",
    # "empty_query" (`error` is the English sentence the model is shown)
    error_kind: str | None = None
    cached: bool = False
    seconds: float = 0.0

    def as_text(self) -> str:
        if not self.ok:
            return (
                f'web_search failed for "{self.query}": {self.error}. '
                "Try other keywords, use another tool, or answer from what you already know."
            )
        if not self.hits:
            return f'No results for "{self.query}". Try different or fewer keywords.'
        lines = [f'Search results for "{self.query}" ({len(self.hits)}):']
        for number, hit in enumerate(self.hits, start=1):
            lines.append(f"[{number}] {hit.title}\nURL: {hit.url}\n{hit.snippet}")
        return "\n\n".join(lines)

    def artifact(self) -> dict[str, Any]:
        """What travels with the tool message, for the UI and the answer's citations."""
        return {
            "ok": self.ok,
            "query": self.query,
            "hits": [hit.model_dump() for hit in self.hits],
            "cached": self.cached,
            "error": self.error,
            "error_kind": self.error_kind,
        }


@tool_arguments(WEB_SEARCH_TOOL_NAME)
class WebSearchInput(BaseModel):
    query: str = Field(
        description="A short keyword query (3-8 words), in the language most sources use; "
        "name the exact product, standard, version or year when it matters."
    )


def refuse_arguments(error: ValidationError) -> str:
    """What the model reads when its call's arguments are not a query: the call is not run."""
    return (
        f"The {WEB_SEARCH_TOOL_NAME} call was not run: its arguments are not valid "
        f"({describe_problems(error, whole='arguments')}). Call {WEB_SEARCH_TOOL_NAME} again "
        'with a JSON object like {"query": "IEEE 830 SRS template"}.'
    )


def normalise_query(query: str) -> str:
    return " ".join(query.split()).casefold()


def means_no_results(error: BaseException) -> bool:
    """ddgs raises `DDGSException("No results found.")` when the engines answered with
    nothing (and no engine failed): that is an empty result, not an unreachable service."""
    return type(error).__name__ == "DDGSException" and str(error).strip().lower().startswith(
        "no results found"
    )


def search_error_kind(error: BaseException) -> str:
    name = type(error).__name__
    if isinstance(error, TimeoutError) or "Timeout" in name:
        return "timeout"
    if "Ratelimit" in name:
        return "rate_limit"
    return "unreachable"


def describe_search_error(error: BaseException) -> str:
    kind = search_error_kind(error)
    if kind == "timeout":
        return "the search timed out"
    if kind == "rate_limit":
        return "the search service is rate-limiting, wait a little"
    return f"the search service could not be reached ({type(error).__name__}: {str(error)[:160]})"


class WebSearch:
    """Searches the web; identical queries within one session come from the cache.

    Keep one instance per chat session (the cache lives as long as it does). Only
    successful searches are cached, so a failed one can be tried again.
    """

    def __init__(
        self,
        backend: SearchBackend = ddgs_backend,
        *,
        max_results: int = 5,
        timeout: float = 15.0,
    ):
        self.backend = backend
        self.max_results = max_results
        self.timeout = timeout
        self.backend_calls = 0
        self.cache_hits = 0
        self._cache: dict[str, SearchOutcome] = {}
        self._in_flight: dict[str, asyncio.Future[SearchOutcome]] = {}

    async def search(self, query: str) -> SearchOutcome:
        query = " ".join(query.split())
        key = normalise_query(query)
        if not key:
            return SearchOutcome(
                query=query, ok=False, error="the query was empty", error_kind="empty_query"
            )
        if key in self._cache:
            self.cache_hits += 1
            return self._cache[key].model_copy(update={"cached": True, "seconds": 0.0})
        pending = self._in_flight.get(key)
        if pending is not None:  # the same query is already running (e.g. twice in one turn)
            try:
                outcome = await asyncio.shield(pending)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
                # the first search was cancelled, not this one: search afresh below
            else:
                self.cache_hits += 1
                return outcome.model_copy(update={"cached": True})
        future: asyncio.Future[SearchOutcome] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            outcome = await self._search_backend(query)
        except BaseException:
            future.cancel()
            raise
        finally:
            self._in_flight.pop(key, None)
        future.set_result(outcome)
        if outcome.ok:
            self._cache[key] = outcome
        return outcome

    async def _search_backend(self, query: str) -> SearchOutcome:
        started = time.perf_counter()
        self.backend_calls += 1
        try:
            rows = await asyncio.wait_for(
                asyncio.to_thread(self.backend, query, self.max_results), self.timeout
            )
        except Exception as exc:  # offline, rate limit, timeout, a broken backend
            if means_no_results(exc):
                rows = []
            else:
                log.info("web_search failed for %r: %s", query, type(exc).__name__)
                return SearchOutcome(
                    query=query,
                    ok=False,
                    error=describe_search_error(exc),
                    error_kind=search_error_kind(exc),
                    seconds=time.perf_counter() - started,
                )
        hits = [
            SearchHit(
                title=str(row.get("title") or "").strip() or "(untitled)",
                url=str(row.get("href") or row.get("url") or "").strip(),
                snippet=" ".join(str(row.get("body") or row.get("snippet") or "").split()),
            )
            for row in (rows or [])[: self.max_results]
        ]
        return SearchOutcome(query=query, ok=True, hits=hits, seconds=time.perf_counter() - started)

    def clear(self) -> None:
        """Forget cached results (end of session)."""
        self._cache.clear()

    def as_tool(self) -> BaseTool:
        # LangChain only here: the search result types (SearchHit) are imported by events
        # modules that a command's start-up loads.
        from langchain_core.tools import StructuredTool

        async def web_search(query: str) -> tuple[str, dict[str, Any]]:
            outcome = await self.search(query)
            return outcome.as_text(), outcome.artifact()

        return StructuredTool.from_function(
            coroutine=web_search,
            name=WEB_SEARCH_TOOL_NAME,
            description=(
                "Search the web (DuckDuckGo) and get up to "
                f"{self.max_results} numbered results with title, URL and snippet. Use it for "
                "facts you are not sure of, recent events, standards, regulations, products, "
                "libraries and their versions. One topic per query; search again with other "
                "keywords if the results miss the point."
            ),
            args_schema=WebSearchInput,
            handle_validation_error=refuse_arguments,
            response_format="content_and_artifact",
            metadata={"reqstudio_kind": "search"},
        )


def web_search_tool(search: WebSearch | None = None) -> BaseTool:
    """The `web_search` LangChain tool (a new cache unless a session's `WebSearch` is given)."""
    return (search or WebSearch()).as_tool()
