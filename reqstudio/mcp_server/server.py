"""ReqStudio's MCP server: the tools (`documents`, `runs`) on the official SDK's FastMCP, served
over stdio or streamable HTTP.

Who is calling:
- Over stdio the server is a child process of the client, started by the local user, who
  could run `reqstudio` themselves: it acts as that user, with no credential, and reads the
  paths it is given on this machine.
- Over HTTP every request carries `Authorization: Bearer <token>`, a token the app issued to
  one account (`reqstudio mcp token create --user NAME`, `reqstudio.mcp_tokens`). The SDK's
  bearer middleware asks `AccountTokenVerifier` about it on every request, so a revoked token,
  or one whose account was disabled or removed, is refused at its next request even inside
  an open session. A tool reads its caller with `current_user()`. Paths are refused over HTTP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.fastmcp import FastMCP

from reqstudio.mcp_server.documents import ToolLimits, register_document_tools

if TYPE_CHECKING:
    from reqstudio.mcp_tokens import McpTokenStore
    from reqstudio.runtime import AppRuntime
    from reqstudio.settings import Settings
    from reqstudio.workspace.store import WorkspaceStore

Transport = Literal["stdio", "http"]
MCP_PATH = "/mcp"
INSTRUCTIONS = (
    "ReqStudio: requirements engineering tools. check_requirements finds ambiguous wording, "
    "structure problems and EARS templates (no model); import_requirements and export_reqif "
    "move requirements between documents and ReqIF 1.2; diff_requirements compares two "
    "versions by meaning. With a model provider configured: generate_srs, review_document, "
    "rewrite_document (long runs: ask for progress notifications)."
)


class AccountTokenVerifier:
    """The SDK's `TokenVerifier` over the app's token table: a token is good while it is not
    revoked and its account may sign in."""

    def __init__(self, store: McpTokenStore):
        self.store = store

    async def verify_token(self, token: str) -> AccessToken | None:
        user = await self.store.user_for(token)
        if user is None:
            return None
        return AccessToken(token=token, client_id=user, subject=user, scopes=[])


def current_user() -> str:
    """The account the current call speaks for: the token's over HTTP; over stdio `local`, the
    user the commands act as without `--user` (and the browser without sign-in). Tools on a
    user's own data, such as a project's items, filter by it."""
    from reqstudio.workspace.store_cli import LOCAL_USER

    token = get_access_token()
    if token is not None:
        return token.subject or token.client_id
    return LOCAL_USER


def build_server(
    settings: Settings,
    transport: Transport,
    *,
    runtime: AppRuntime | None = None,
    tokens: McpTokenStore | None = None,
    workspace: WorkspaceStore | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
) -> FastMCP:
    """The server with its tools; `runtime` (a started model runtime) adds the model tools,
    `workspace` (the store of the app's database) the tools on the caller's projects.
    Over HTTP `tokens` is required: there is no HTTP server without credentials."""
    options: dict = {}
    if transport == "http":
        if tokens is None:
            raise ValueError("an HTTP MCP server needs the token store")
        base = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
        options = {
            "token_verifier": AccountTokenVerifier(tokens),
            # The SDK turns its bearer check on through AuthSettings. ReqStudio issues its
            # tokens itself (no OAuth server), so no metadata route is published: the issuer
            # named here is this server, and nothing is served at it.
            "auth": AuthSettings(issuer_url=base, resource_server_url=None, required_scopes=[]),
        }
    server = FastMCP(
        "ReqStudio",
        instructions=INSTRUCTIONS,
        host=host,
        port=port,
        streamable_http_path=MCP_PATH,
        log_level="WARNING",
        **options,
    )
    limits = ToolLimits(allow_paths=transport == "stdio", max_mb=settings.reference_max_mb)
    register_document_tools(server, limits)
    if workspace is not None:
        from reqstudio.mcp_server.projects import register_project_tools

        register_project_tools(server, workspace, current_user)
    if runtime is not None:
        from reqstudio.mcp_server.runs import register_model_tools

        register_model_tools(server, limits, runtime)
    return server
