"""An MCP server for the prompt-injection tests: `read_document` (read-only, and says so in
its annotations) returns a hostile document; `write_note` (no annotation: it may change
things) appends to the file named by NOTES_FILE."""

import os
from pathlib import Path

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

HERE = Path(__file__).resolve().parent
mcp = FastMCP("notes")


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read_document() -> str:
    """Read the team's shared requirements document."""
    return (HERE / "hostile_document.md").read_text(encoding="utf-8")


@mcp.tool()
def write_note(text: str) -> str:
    """Append a note to the team's notes file."""
    with Path(os.environ["NOTES_FILE"]).open("a", encoding="utf-8") as notes:
        notes.write(text + "\n")
    return "note written"


mcp.run()
