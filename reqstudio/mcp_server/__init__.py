"""ReqStudio as an MCP server (`reqstudio mcp`): the checker, ReqIF in and out, the diff and,
with a model provider, the SRS, Review and Rewrite engines, as tools for MCP clients over
stdio or streamable HTTP. The command's module (`cli`) imports only the standard library; the
server (`server`), its tools (`documents`, `runs`) and the SDK load when it runs."""
