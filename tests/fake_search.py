"""A deterministic stand-in for DuckDuckGo, for the app and the CLI in tests
(REQSTUDIO_SEARCH_BACKEND=tests.fake_search:five_results). No network."""

from __future__ import annotations

from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

# How a search backend fails (what ddgs raises, and a network error), each with the kind of
# failure the tool names it: the tool's own tests and the user's-language tests take them all.
FAILURES = [
    (DDGSException("offline"), "unreachable"),
    (DDGSException("https://html.duckduckgo.com/html 202 Ratelimit: offline"), "unreachable"),
    (RatelimitException("202 Ratelimit"), "rate_limit"),
    (TimeoutException("timed out"), "timeout"),
    (ConnectionError("no route"), "unreachable"),
    (ConnectionError("no route to host"), "unreachable"),
]


def five_results(query: str, max_results: int) -> list[dict[str, str]]:
    slug = "-".join(query.lower().split())
    return [
        {
            "title": f"{query} — source {number}",
            "href": f"https://example.org/{slug}/{number}",
            "body": f"Snippet {number} about {query}, long enough to count as a result.",
        }
        for number in range(1, min(5, max_results) + 1)
    ]
