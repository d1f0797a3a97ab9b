"""Tools the agent can call: web search and MCP servers' tools."""

from tools.mcp_tools import McpServerStatus, McpToolbox, content_to_text, tools_from_session
from tools.web_search import SearchHit, SearchOutcome, WebSearch, web_search_tool

__all__ = [
    "McpServerStatus",
    "McpToolbox",
    "SearchHit",
    "SearchOutcome",
    "WebSearch",
    "content_to_text",
    "tools_from_session",
    "web_search_tool",
]
