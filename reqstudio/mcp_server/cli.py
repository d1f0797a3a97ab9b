"""`reqstudio mcp`: serve ReqStudio's tools to MCP clients; `reqstudio mcp token ...`: the HTTP
credentials.

`reqstudio mcp` (stdio, the default) is started by an MCP client as its child process and acts
as the local user. `reqstudio mcp --transport http` serves streamable HTTP at /mcp; every
request needs a token the app issued to an account (`reqstudio mcp token create --user NAME`,
shown once, stored hashed; `reqstudio mcp token revoke ID` refuses it from the next request
on). Like the app, it listens on loopback unless `--allow-network` says otherwise: plain HTTP
beyond this machine carries the tokens in clear, so put a TLS proxy in front.
This module imports only the standard library and the harness: `--help` stays fast.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import TYPE_CHECKING

from reqstudio import cli as harness

if TYPE_CHECKING:
    from reqstudio.mcp_tokens import McpTokenStore
    from reqstudio.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = harness.add_command(
        subparsers,
        "mcp",
        description="Serve ReqStudio's tools over the Model Context Protocol: "
        "check_requirements, import_requirements, export_reqif, diff_requirements, "
        "list_projects, list_items, read_item (your stored projects), and with a "
        "model provider configured generate_srs, review_document, rewrite_document. Over "
        "stdio (the default) it acts as the local user; over HTTP every request needs a token "
        "from `reqstudio mcp token create --user NAME`.",
    )
    parser.add_argument(
        "--transport", choices=("stdio", "http"), default="stdio", help="stdio (default) or http"
    )
    parser.add_argument("--host", default="127.0.0.1", help="HTTP: address to listen on")
    parser.add_argument("--port", type=int, default=8001, help="HTTP: port to listen on (8001)")
    parser.add_argument(
        "--allow-network",
        action="store_true",
        help="HTTP: listen on an address beyond loopback (put TLS in front of it)",
    )
    parser.set_defaults(handler=serve_command)
    actions = parser.add_subparsers(dest="mcp_command", metavar="ACTION")
    token = actions.add_parser("token", help="issue, list and revoke HTTP credentials")
    token_actions = token.add_subparsers(dest="token_command", metavar="ACTION", required=True)
    create = token_actions.add_parser(
        "create", help="issue a token to a user (printed once on stdout)"
    )
    create.add_argument("--user", required=True, help="the account the token speaks for")
    create.add_argument("--label", default="", help="what the token is for (an editor, a CI)")
    listing = token_actions.add_parser("list", help="list tokens: id, user, label, state, use")
    listing.add_argument("--user", help="only this user's tokens")
    revoke = token_actions.add_parser("revoke", help="refuse a token from its next request on")
    revoke.add_argument("id", help="the token's id (from `create` or `list`)")
    token.set_defaults(handler=token_command)


# --- serving ------------------------------------------------------------------------------


def serve_command(args: argparse.Namespace) -> int:
    from reqstudio.bind_check import is_loopback_host

    if args.transport == "http":
        if not 0 < args.port < 65536:
            raise harness.UsageError(f"--port: {args.port} is not a port number (1-65535)")
        if not is_loopback_host(args.host) and not args.allow_network:
            raise harness.UsageError(
                f"--host: {args.host} reaches beyond this machine; plain HTTP would carry the "
                "tokens in clear. Serve on 127.0.0.1 behind a TLS proxy, or pass "
                "--allow-network to accept it."
            )
    settings = harness.load_mode_settings()
    os.umask(0o077)  # the database the server may create is the owner's alone
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    if settings.uses_embedded_model:
        harness.say(
            "reqstudio mcp: no model provider configured (OPENAI_API_KEY, OPENAI_BASE_URL): "
            "generate_srs, review_document and rewrite_document are not offered"
        )
        asyncio.run(_serve(args, settings, None))
        return harness.EXIT_OK
    from reqstudio.runtime import AppRuntime

    with AppRuntime(settings) as runtime:
        asyncio.run(_serve(args, settings, runtime))
    return harness.EXIT_OK


async def _serve(args: argparse.Namespace, settings: Settings, runtime) -> None:
    from reqstudio.mcp_server.server import MCP_PATH, build_server
    from reqstudio.workspace.store import WorkspaceStore

    workspace = WorkspaceStore(settings.resolved_database_url)  # connects on a tool's first use
    if args.transport == "stdio":
        try:
            server = build_server(settings, "stdio", runtime=runtime, workspace=workspace)
            await server.run_stdio_async()
        finally:
            await workspace.aclose()
        return
    import uvicorn

    tokens = await _open_tokens(settings)
    try:
        server = build_server(
            settings, "http", runtime=runtime, tokens=tokens, workspace=workspace,
            host=args.host, port=args.port,
        )  # fmt: skip
        config = uvicorn.Config(
            server.streamable_http_app(), host=args.host, port=args.port, log_level="warning"
        )
        harness.say(
            f"reqstudio mcp: serving http://{args.host}:{args.port}{MCP_PATH} "
            "(each request needs a token: reqstudio mcp token create --user NAME)"
        )
        await uvicorn.Server(config).serve()
    finally:
        await tokens.aclose()
        await workspace.aclose()


async def _open_tokens(settings: Settings) -> McpTokenStore:
    from reqstudio.mcp_tokens import McpTokenStore

    tokens = McpTokenStore(settings.resolved_database_url)
    await tokens.create_table()  # every table: a token names an account
    return tokens


# --- tokens -------------------------------------------------------------------------------


def token_command(args: argparse.Namespace) -> int:
    from reqstudio.accounts import AccountError

    settings = harness.load_mode_settings()
    os.umask(0o077)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    try:
        return asyncio.run(_token_action(args, settings))
    except AccountError as error:
        raise harness.UsageError(str(error)) from None


async def _token_action(args: argparse.Namespace, settings: Settings) -> int:
    tokens = await _open_tokens(settings)
    try:
        action = args.token_command
        if action == "create":
            record, token = await tokens.create(args.user, args.label)
            print(token)
            harness.say(
                f"token {record.id} issued to {record.user}: it is shown only now; "
                f"revoke it with `reqstudio mcp token revoke {record.id}`"
            )
        elif action == "revoke":
            record = await tokens.revoke(args.id)
            harness.say(f"token {record.id} of {record.user} revoked")
        else:
            print("id\tuser\tlabel\tstate\tcreated\tlast used")
            for t in await tokens.list(args.user):
                print(
                    f"{t.id}\t{t.user}\t{t.label or '-'}\t{t.state}\t{t.created_at}\t"
                    f"{t.last_used or '-'}"
                )
        sys.stdout.flush()
        return harness.EXIT_OK
    finally:
        await tokens.aclose()
