"""Tools the agent can call: web search and MCP servers' tools.
Names are imported on first use (`reqstudio.lazy`): web search does not start MCP's imports."""

from reqstudio.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "reqstudio.tools.mcp_tools": (
            "McpServerStatus",
            "McpToolbox",
            "content_to_text",
            "tools_from_session",
        ),
        "reqstudio.tools.web_search": (
            "SearchHit",
            "SearchOutcome",
            "WebSearch",
            "web_search_tool",
        ),
    },
)
