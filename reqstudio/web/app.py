"""ReqStudio's Chainlit entry point: configuration, history, login and routing to the modes.

Run it with `reqstudio serve`, or `chainlit run app.py` from a checkout (see README). Everything a mode does lives in its engine
under `reqstudio/modes/` and its browser adapter under `reqstudio/web/`.
"""

from __future__ import annotations

import asyncio
import logging
import sys

import chainlit as cl
from chainlit.data import get_data_layer

import reqstudio.web.acceptance_generate
import reqstudio.web.acceptance_view
import reqstudio.web.edits
import reqstudio.web.reqif_actions  # noqa: F401  (registers: check, store, freeze a ReqIF import)
from reqstudio.bind_check import AnonymousNetworkCheck
from reqstudio.local_model import EmbeddedModelUnavailable
from reqstudio.loop_monitor import LoopLagMonitor
from reqstudio.loop_timers import keep_timer_heap_clean
from reqstudio.persistence import open_pools, prepare_checkpoints
from reqstudio.pools import close_pools, configure_pools
from reqstudio.runtime import (
    AppRuntime,
    ensure_auth_secret,
    keep_data_private,
    tune_garbage_collector,
)
from reqstudio.schema import create_schema
from reqstudio.settings import SettingsError, get_settings
from reqstudio.usage import UsageTracker
from reqstudio.usage_ledger import TURN_USAGE
from reqstudio.web import chainlit_seam
from reqstudio.web.admin import configure_admin_page, record_usage
from reqstudio.web.agent import (
    AGENT_MODE,
    SHARED_MCP_SERVERS,
    close_agent_session,
    on_mcp_connect,
    on_mcp_disconnect,
)
from reqstudio.web.chat import CHAT_MODE
from reqstudio.web.edits import restore_regenerate_buttons
from reqstudio.web.history import HistoryDataLayer
from reqstudio.web.mcp_limits import cap_user_mcp_servers
from reqstudio.web.modes import chat_profiles, current_mode, mode_title, register_mode, thread_name
from reqstudio.web.review import REVIEW_MODE
from reqstudio.web.revocation import revoke_on_logout
from reqstudio.web.rewrite import REWRITE_MODE
from reqstudio.web.session import (
    end_run_unless_reconnected,
    history_failures,
    name_thread,
    persist_thread_state,
    runtime,
    send_notice,
    set_runtime,
    set_startup_problem,
    show_base_names,
    startup_problem,
    upload_ceiling_mb,
    warn_if_history_failed,
)
from reqstudio.web.settings_panel import check_settings_update, send_settings
from reqstudio.web.sign_in import configure_sign_in
from reqstudio.web.srs import SRS_MODE
from reqstudio.web.storage import make_storage, prepare_storage
from reqstudio.web.team import TEAM_MODE
from reqstudio.web.texts import lang, t

try:
    settings = get_settings()
except SettingsError as error:
    print(f"ReqStudio cannot start. {error}", file=sys.stderr)
    raise SystemExit(2) from None

sign_in = configure_sign_in(settings)
# Decided from the sockets the server really listens on, once bound (start_app), and per
# request from the address it arrived on, whatever launched the server.
bind_check = AnonymousNetworkCheck(sign_in.configured, settings.allow_anonymous_network)
keep_data_private(settings.data_dir)
configure_pools(settings)  # one data-layer pool and one checkpoint pool per process
ensure_auth_secret(settings.data_dir)
configure_admin_page(sign_in, dict(settings.agent_prices))
set_runtime(AppRuntime(settings))
# Thread files (downloads, references, charts) in the configured store: local, database, s3.
try:
    file_store = make_storage(settings)
except SettingsError as error:
    print(f"ReqStudio cannot start. {error}", file=sys.stderr)
    raise SystemExit(2) from None
cap_user_mcp_servers(settings.mcp_user_servers)
# Opt-in (REQSTUDIO_LOOP_MONITOR=1): how long the event loop was ever blocked, for the load
# benchmark; served at /reqstudio/loop-lag.
loop_monitor = LoopLagMonitor()
# Every change to Chainlit's internals and every route in front of Chainlit's, after checking
# that the installed Chainlit is the one they were written for.
chainlit_seam.install(
    settings,
    sign_in=sign_in,
    file_store=file_store,
    bind_check=bind_check,
    upload_gate_mb=upload_ceiling_mb(),
    loop_monitor=loop_monitor if settings.loop_monitor != "0" else None,
)
register_mode(CHAT_MODE)
register_mode(AGENT_MODE)
register_mode(SRS_MODE)
register_mode(TEAM_MODE)
register_mode(REWRITE_MODE)
register_mode(REVIEW_MODE)


_background: set[asyncio.Task] = set()


@cl.on_app_startup
async def start_app() -> None:
    _background.add(asyncio.create_task(keep_timer_heap_clean(), name="timer-heap"))
    if settings.loop_monitor != "0":
        loop_monitor.start(trace=settings.loop_monitor == "trace")
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    await create_schema(settings.resolved_database_url)
    await prepare_checkpoints(settings)
    await open_pools(settings)
    await prepare_storage(file_store)
    logging.getLogger("reqstudio").info("thread files stored in: %s", file_store.kind)
    try:
        await asyncio.to_thread(runtime().start)
    except EmbeddedModelUnavailable as error:
        # Keep serving: every chat explains what is missing instead of a dead page.
        logging.getLogger("reqstudio").error("offline model unavailable: %s", error)
        set_startup_problem(str(error))
    tune_garbage_collector()
    # ASGI servers bind after this hook: the check waits for the sockets.
    _background.add(asyncio.create_task(bind_check.check_once_listening(), name="bind-check"))


@cl.on_app_shutdown
async def stop_app() -> None:
    layer = get_data_layer()
    if isinstance(layer, HistoryDataLayer):
        await layer.flush()  # history writes still in flight are saved, not dropped
    await SHARED_MCP_SERVERS.aclose()
    await close_pools()
    runtime().stop()
    bind_check.exit_if_refused()


@cl.on_logout
async def sign_out(request, response) -> dict:
    await revoke_on_logout(request)  # a copied cookie no longer signs anyone in
    return {"success": True}


@cl.data_layer
def history_layer() -> HistoryDataLayer:
    return HistoryDataLayer(settings.resolved_database_url, storage_provider=file_store)


@cl.set_chat_profiles
async def modes(user: cl.User | None, language: str | None = None) -> list[cl.ChatProfile]:
    return chat_profiles(language)


@cl.on_chat_start
async def start_chat() -> None:
    mode = current_mode()
    # Notices, not assistant messages: the mode's starters stay visible on a new chat.
    await send_notice(t("mode_on", mode=mode_title(mode), description=mode.description[lang()]))
    if startup_problem():  # no model: no model to choose either
        await send_notice(t("no_model", problem=startup_problem()))
        return
    await send_settings(mode)
    if runtime().endpoint.embedded:
        await send_notice(t("embedded_notice"))
    if mode.on_start is not None:
        await mode.on_start()


@cl.on_chat_resume
async def resume_chat(thread: cl.types.ThreadDict) -> None:
    # Chainlit restores the session (mode, settings, memory) from the thread's metadata, and
    # after this adds the thread's messages to the session's list, on every resume of the
    # session: a thread restored on two connections had each message twice, and an edit or a
    # regeneration (which remove the messages after one) removed the copies of earlier ones.
    cl.chat_context.clear()
    mode = current_mode()
    if not startup_problem():
        await send_settings(mode)  # with the thread's model, temperature and mode settings
    if mode.on_resume is not None:
        await mode.on_resume(thread)
    if mode.editable:
        await restore_regenerate_buttons(thread)


@cl.on_settings_update
async def settings_changed(update: dict) -> None:
    await check_settings_update(update)


@cl.on_chat_end
async def end_chat() -> None:
    # A closed tab ends its run: cancelling the task closes the model's HTTP stream, which
    # is what makes a model server (the embedded one included) stop generating. A socket
    # that drops and reconnects (the same session on a new socket) is not a closed tab.
    end_run_unless_reconnected(cl.context.session)
    await close_agent_session()


# MCP servers the user connects from the UI (the plug button) join Agent mode's tools.
cl.on_mcp_connect(on_mcp_connect)
cl.on_mcp_disconnect(on_mcp_disconnect)


@cl.on_message
async def route_message(message: cl.Message | None) -> None:
    if message is None:  # Chainlit's edit of a message this session does not know
        await cl.Message(content=t("edit_unknown")).send()
        return
    # First, before anything awaits: Chainlit stores the attachments in tasks of its own, by
    # the names they then have (`../../evil.md` must be stored as `evil.md`).
    await show_base_names(message)
    mode = current_mode()
    first = message.content or next((e.name for e in message.elements or []), "")
    if not cl.user_session.get("thread_title"):  # named now, not only when the run is over
        await name_thread(thread_name(mode, first))
    if startup_problem():
        await cl.Message(content=t("no_model", problem=startup_problem())).send()
        return
    failures = history_failures()
    turn_usage = UsageTracker()  # every model call of the turn, for the admin's usage table
    counting = TURN_USAGE.set(turn_usage)
    try:
        await mode.on_message(message)
    finally:
        TURN_USAGE.reset(counting)
        await record_usage(mode.id, turn_usage)
        await name_thread(thread_name(mode, first))
        await persist_thread_state()
    await warn_if_history_failed(failures, t("history_unavailable"))
