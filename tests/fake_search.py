"""A deterministic stand-in for DuckDuckGo, for the app and the CLI in tests
(REQSTUDIO_SEARCH_BACKEND=tests.fake_search:five_results). No network."""

from __future__ import annotations


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
