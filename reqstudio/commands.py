"""The mode registry: every `reqstudio` command, each mode's among them, with the module that
registers its parser. Adding a mode is one line here (or `register_command` at run time).

The command line (`reqstudio.cli`) builds its parser from it, importing only the chosen
command's module, and the core reads each mode's role declarations from it: the `roles`
module beside a command's module (`reqstudio.model_roles`). Standard library only: `--help`
and the settings import it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """One `reqstudio` command: its name, its line in `reqstudio --help`, and the module whose
    `register(subparsers)` adds its parser (imported only when the command is used)."""

    name: str
    summary: str
    module: str


COMMANDS: list[Command] = [
    Command("chat", "ask one question in Chat mode", "reqstudio.modes.chat.cli"),
    Command(
        "srs",
        "generate, evaluate and compare SRS documents (multi-agent pipeline)",
        "reqstudio.modes.srs.cli",
    ),
    Command(
        "agent",
        "ask one question in Agent mode (reasoning with web search and MCP tools)",
        "reqstudio.modes.agent.cli",
    ),
    Command("team", "give a requirements task to a team of agents", "reqstudio.modes.team.cli"),
    Command(
        "rewrite",
        "rewrite a document with clarifications: outline, sections in order, review",
        "reqstudio.modes.rewrite.cli",
    ),
    Command(
        "review",
        "review a requirements document round after round and fix what the reviewers find",
        "reqstudio.modes.review.cli",
    ),
    Command(
        "check",
        "check a requirements document with deterministic rules (no model needed)",
        "reqstudio.check.cli",
    ),
    # not modes: requirement items (no model needed)
    Command(
        "import",
        "read a ReqIF file or a document into requirement items (stores nothing)",
        "reqstudio.workspace.import_cli",
    ),
    Command(
        "export",
        "write a document's or a ReqIF file's requirements as ReqIF 1.2 (.reqif, .reqifz)",
        "reqstudio.workspace.export_cli",
    ),
    Command(
        "diff",
        "compare two versions of requirements: added, removed, changed (meaning or wording), moved",
        "reqstudio.workspace.diff_cli",
    ),
    Command(
        "items", "list the requirement items stored in a project", "reqstudio.workspace.items_cli"
    ),
    Command(
        "baseline",
        "freeze a project's items as a named baseline, or list its baselines",
        "reqstudio.workspace.baseline_cli",
    ),
    Command(
        "mcp",
        "serve ReqStudio's tools to MCP clients (stdio, or HTTP with per-user tokens)",
        "reqstudio.mcp_server.cli",
    ),
    Command(
        "tests",
        "acceptance tests traced to requirements: generate (model), list, export, matrix, confirm",
        "reqstudio.workspace.acceptance_cli",
    ),
    # the sign-in accounts, without any mode's engine, and the web app
    Command("users", "manage sign-in accounts (passwords hashed)", "reqstudio.users_cli"),
    Command("serve", "serve the web app (the browser UI of every mode)", "reqstudio.serve"),
]


def register_command(command: Command) -> None:
    """Add a mode's command (a mode registered at run time, e.g. by a test or a plugin)."""
    COMMANDS[:] = [c for c in COMMANDS if c.name != command.name] + [command]
