"""Everything ReqStudio changes inside Chainlit (and uvicorn, which serves it), in one place.

Chainlit has no public hook for most of what the app needs: its routes answer before any
callback runs, its socket handlers and emitter are module globals, its configuration is read at
import. So the app replaces a few of its functions and classes, sets a few of its settings at
run time, and puts routes of its own in front of Chainlit's (the first route that matches a
request answers it). Each of these is written for the Chainlit version pinned in
`pyproject.toml` (`WRITTEN_FOR`); an upgrade means reading this module against the new
Chainlit's source, so on another version the app refuses to start unless
`REQSTUDIO_CHAINLIT_ANY_VERSION` says to try. What each change does stays in its own module;
this one only puts it in place. A test (`tests/test_chainlit_seam.py`) fails when a module
outside this one assigns to Chainlit's or uvicorn's attributes or inserts a route.
"""

from __future__ import annotations

import importlib.metadata
import logging
import sys
from pathlib import Path
from typing import Any

from starlette.routing import BaseRoute

from reqstudio.loop_monitor import LoopLagMonitor
from reqstudio.settings import Settings
from reqstudio.web.sign_in import SignIn
from reqstudio.web.storage import CheckedStorage

log = logging.getLogger("reqstudio")

# The Chainlit versions these changes were written and tested for (the pin in pyproject.toml).
WRITTEN_FOR = ("2.12.0",)
ANY_VERSION_SETTING = "REQSTUDIO_CHAINLIT_ANY_VERSION"

_INSTALLED: dict[str, bool] = {}  # the changes made in this process, by name


def installed_chainlit_version() -> str:
    return importlib.metadata.version("chainlit")


def check_chainlit_version(any_version: bool) -> None:
    """Refuse to start (exit 2, one line) on a Chainlit this module was not written for,
    unless `any_version`: then say so and go on."""
    installed = installed_chainlit_version()
    if installed in WRITTEN_FOR:
        return
    pinned = WRITTEN_FOR[-1]
    if any_version:
        log.warning(
            "Chainlit %s is installed; ReqStudio's changes to it were written for %s "
            "(%s is set): trying anyway",
            installed,
            ", ".join(WRITTEN_FOR),
            ANY_VERSION_SETTING,
        )
        return
    print(
        f"ReqStudio cannot start. Chainlit {installed} is installed, but ReqStudio was written "
        f"for Chainlit {', '.join(WRITTEN_FOR)}: install chainlit=={pinned}, or set "
        f"{ANY_VERSION_SETTING}=1 to try this version anyway.",
        file=sys.stderr,
    )
    raise SystemExit(2)


def _once(name: str) -> bool:
    """True the first time `name` is asked for: each change is made once per process."""
    if _INSTALLED.get(name):
        return False
    _INSTALLED[name] = True
    return True


# --- Chainlit's functions, classes and settings --------------------------------------------


def keep_uploads_in(folder: Path) -> None:
    """Chainlit keeps uploads under `<app root>/.files` and deletes that whole folder when an
    app stops, so two apps started from one checkout (two ports, or tests running side by
    side) deleted each other's uploads mid-run ("file not found"). Each app keeps its uploads
    in its own data directory instead."""
    import chainlit.config
    import chainlit.server

    folder.mkdir(parents=True, exist_ok=True)
    chainlit.config.FILES_DIRECTORY = folder  # read by each session when it stores a file
    chainlit.server.FILES_DIRECTORY = folder  # deleted at shutdown


def raise_upload_gate(max_mb: int) -> None:
    """Chainlit refuses a file above `[features.spontaneous_file_upload] max_size_mb` with an
    English-only toast; its gate is set well above the app's own limit
    (REQSTUDIO_REFERENCE_MAX_MB), so that a file too big is refused by the app, in the user's
    language."""
    from chainlit.config import config

    config.features.spontaneous_file_upload.max_size_mb = max_mb


def silence_chainlit_stop_line() -> None:
    """Chainlit's stop handler posts "Task manually stopped." (English) before cancelling the
    task, through the `Message` class its socket module imported; each mode already says it
    stopped, in the user's language, beside what it kept (reqstudio/web/session.py)."""
    import chainlit.socket

    from reqstudio.web.session import StopLineMessage

    chainlit.socket.Message = StopLineMessage


def show_the_session_again_on_reconnect() -> None:
    """A browser that reconnects to its session sees what the session showed it, keeps its
    stop button while a run goes on, and can answer the question the run waits for.

    The browser reconnects when it starts a chat or opens a thread and restores the thread's
    mode (Chainlit's page connects twice and drops what its first socket still receives), and
    after a network blip. Chainlit restores the session on the new socket but sends nothing
    again, and its `connection_successful` handler tells the browser "task ended" and to drop
    its pending question. After Chainlit's handler, a restored session sends again what it
    showed (reqstudio/web/reconnect.py), a session whose run is still going is told that it
    runs, and the question the run waits for is asked again."""
    import chainlit.socket

    from reqstudio.web.session import showing_the_session_again_on_reconnect

    handlers = chainlit.socket.sio.handlers["/"]
    chainlit_handler = handlers["connection_successful"]
    if getattr(chainlit_handler, "shows_the_session_again", False):
        return
    handlers["connection_successful"] = showing_the_session_again_on_reconnect(chainlit_handler)


def show_uploaded_pdfs_as_files() -> None:
    """Chainlit's `Element.infer_type_from_mime` makes an uploaded PDF an inline pdf.js
    preview. A PDF that cannot be read then shows "Failed to load PDF file." (English, not in
    Chainlit's translations) beside the app's own refusal, and an encrypted one opens the
    browser's English password prompt, again each time it is dismissed. A PDF is shown as a
    file chip, as every other attachment is; the app reads it and says what it found."""
    from chainlit.element import Element

    from reqstudio.web.session import inferring_pdfs_as_files

    infer = Element.infer_type_from_mime
    if getattr(infer, "shows_pdfs_as_files", False):
        return
    Element.infer_type_from_mime = staticmethod(inferring_pdfs_as_files(infer))


def send_message_files_in_order() -> None:
    """Chainlit's `Message.send` and `update` send a message's files all at once
    (`asyncio.gather`), so the browser showed them in the order their writes finished and a
    reopened thread in the order their rows landed; they are sent one after another, in the
    message's order, with ids made in that order (reqstudio/web/element_order.py)."""
    import chainlit as cl

    from reqstudio.web.element_order import message_sending_files_in_order

    if getattr(cl.Message.send, "sends_files_in_order", False):
        return
    for name, member in message_sending_files_in_order().items():
        setattr(cl.Message, name, member)


def share_threads(enabled: bool) -> None:
    """Chainlit's `[features] allow_thread_sharing`, from REQSTUDIO_THREAD_SHARING instead of
    config.toml; Chainlit refuses shared views without a callback deciding who may view."""
    import chainlit as cl
    from chainlit.config import config

    from reqstudio.web.sharing import may_view_shared_thread

    config.features.allow_thread_sharing = enabled
    if enabled:
        cl.on_shared_thread_view(may_view_shared_thread)


def serve_page_without_other_sites() -> None:
    """Chainlit's `get_html_template` (looked up by its page route at each request) links a
    web font and KaTeX's stylesheet from other sites: offline both fail, online they tell
    those sites who opened the app. The page is served without them
    (reqstudio/web/offline_page.py)."""
    from chainlit import server

    from reqstudio.web.offline_page import page_without_other_sites

    if getattr(server.get_html_template, "reqstudio_offline", False):
        return
    server.get_html_template = page_without_other_sites(server.get_html_template)


def batch_streamed_tokens() -> None:
    """Chainlit's `ChainlitEmitter` sends every streamed token as its own socket message; with
    many tabs streaming, the event loop spent its time on them. Its `emit`, `emit_call` and
    `send_token` go through each session's batcher, which sends at most every 30 ms per tab,
    in order (reqstudio/web/token_stream.py)."""
    from chainlit.emitter import ChainlitEmitter

    from reqstudio.web.token_stream import batched_emitter_members

    if getattr(ChainlitEmitter, "_reqstudio_batched", False):
        return
    for name, member in batched_emitter_members().items():
        setattr(ChainlitEmitter, name, member)


def note_peer_addresses() -> None:
    """Uvicorn's proxy-header middleware (`uvicorn.config.ProxyHeadersMiddleware`, set up
    when the server starts, after the app is imported) replaces the client address with the
    `X-Forwarded-For` a loopback peer sends. The checked `/auth/header` must see the
    connection's own address, so it is noted in the scope first (reqstudio/web/proxy_sign_in.py)."""
    import uvicorn.config

    from reqstudio.web.proxy_sign_in import noting_peer_addresses

    if getattr(uvicorn.config.ProxyHeadersMiddleware, "notes_peer", False):
        return
    uvicorn.config.ProxyHeadersMiddleware = noting_peer_addresses(
        uvicorn.config.ProxyHeadersMiddleware
    )


# --- Routes in front of Chainlit's ---------------------------------------------------------


def _api_routes(router: Any) -> list[BaseRoute]:
    from fastapi.routing import APIRoute

    return [route for route in router.routes if isinstance(route, APIRoute)]


def routes_in_front(
    settings: Settings,
    sign_in: SignIn,
    file_store: CheckedStorage,
    loop_monitor: LoopLagMonitor | None,
) -> list[BaseRoute]:
    """The app's routes, first to answer first. Chainlit's app ends in a catch-all route that
    serves its page for any path, and has routes of its own for the paths the app checks
    more strictly; the first matching route answers, so these go before all of Chainlit's."""
    from starlette.routing import Route

    from reqstudio.web import (
        admin,
        awaiting_approval,
        login_guard,
        mcp_limits,
        outage,
        ownership,
        proxy_sign_in,
        thread_export,
    )
    from reqstudio.web.health_route import health_route
    from reqstudio.web.lag_route import loop_lag_route
    from reqstudio.web.local_login import local_user_route
    from reqstudio.web.session_cookie import set_session_cookie
    from reqstudio.web.sign_in import the_local_user
    from reqstudio.web.storage import stored_files_route

    routes: list[BaseRoute] = []
    if loop_monitor is not None:  # /reqstudio/loop-lag, for the load benchmark
        routes.append(loop_lag_route(loop_monitor))
    # /reqstudio/health, for health checks (Chainlit's catch-all would answer 200 with its page)
    routes.append(health_route(settings.resolved_database_url))
    routes += _api_routes(thread_export.router)  # /reqstudio/export/{thread}: Markdown download
    # Chainlit's /set-session-cookie sets a cookie without `Secure`, also over https
    routes.append(Route("/set-session-cookie", set_session_cookie, methods=["POST"]))
    routes += _api_routes(mcp_limits.router)  # Chainlit's POST /mcp has no per-user cap
    # Chainlit's POST /project/threads answers a database outage with a bare 500
    routes += _api_routes(outage.router)
    # Chainlit's feedback, element, action, MCP and share routes write to any thread whose id
    # the caller knows: these check that the thread is the caller's first
    routes += _api_routes(ownership.router)
    if (stored := stored_files_route(file_store)) is not None:  # /reqstudio/files/<key>
        routes.append(stored)
    routes += _api_routes(admin.router)  # /reqstudio/admin/...: accounts and usage
    if not sign_in.configured:
        # Chainlit's GET /user answers 401 until the page has logged in (a console error
        # on every page load): here it answers the local user at once
        routes.append(local_user_route(the_local_user))
    if sign_in.proxy:
        # Chainlit's POST /auth/header signs in whoever the header names, from any address
        routes += _api_routes(proxy_sign_in.router)
    if sign_in.sso:
        # Chainlit's OAuth callback says "sign-in failed" to an identity waiting for approval
        routes += _api_routes(awaiting_approval.router)
    if sign_in.passwords:
        routes += _api_routes(login_guard.router)  # Chainlit's POST /login has no rate limit
    return routes


def put_routes_in_front(routes: list[BaseRoute]) -> None:
    from chainlit.server import app

    app.router.routes[0:0] = routes


def add_middleware(settings: Settings, sign_in: SignIn, bind_check: Any) -> None:
    """ASGI middleware around Chainlit's app, which has no hook to refuse a request before its
    routes (and its socket handshake) see it. The last added is the outermost."""
    from chainlit.server import app

    from reqstudio.web.local_only import LocalOnlyWithoutSignIn
    from reqstudio.web.origins import ForeignOriginGuard
    from reqstudio.web.revocation import RevokedTokenGuard
    from reqstudio.web.session_cookie import SecureCookiesOverHttps
    from reqstudio.web.sign_in import DisabledAccountGuard

    app.add_middleware(RevokedTokenGuard)  # a signed-out token no longer signs anyone in
    if sign_in.configured:
        app.add_middleware(DisabledAccountGuard, store=sign_in.store)
    app.add_middleware(SecureCookiesOverHttps)
    app.add_middleware(ForeignOriginGuard, allowed=settings.allowed_origin_list)
    app.add_middleware(LocalOnlyWithoutSignIn, check=bind_check)  # outermost: added last


def install(
    settings: Settings,
    *,
    sign_in: SignIn,
    file_store: CheckedStorage,
    bind_check: Any,
    upload_gate_mb: int,
    loop_monitor: LoopLagMonitor | None = None,
) -> None:
    """Check the Chainlit version, then make every change to Chainlit (once per process)."""
    check_chainlit_version(settings.chainlit_any_version)
    if not _once("install"):
        return
    keep_uploads_in(settings.data_dir / "uploads")
    raise_upload_gate(upload_gate_mb)
    silence_chainlit_stop_line()
    show_the_session_again_on_reconnect()
    show_uploaded_pdfs_as_files()
    send_message_files_in_order()
    share_threads(settings.thread_sharing)
    serve_page_without_other_sites()
    batch_streamed_tokens()
    if sign_in.proxy:
        note_peer_addresses()
    put_routes_in_front(routes_in_front(settings, sign_in, file_store, loop_monitor))
    add_middleware(settings, sign_in, bind_check)
