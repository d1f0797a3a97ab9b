"""Helpers shared by the mode handlers: the app runtime and saving thread state."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import chainlit as cl
from chainlit.data import get_data_layer
from chainlit.user import PersistedUser
from chainlit.utils import utc_now

from reqstudio.runtime import AppRuntime
from reqstudio.web.texts import Catalog, t
from reqstudio.web.thread_state import persist_thread_state

log = logging.getLogger("reqstudio")

_runtime: AppRuntime | None = None
_startup_problem: str | None = None


def set_startup_problem(problem: str | None) -> None:
    """Why no model is available (the offline model failed to start), or None."""
    global _startup_problem
    _startup_problem = problem


def startup_problem() -> str | None:
    return _startup_problem


def set_runtime(value: AppRuntime) -> None:
    global _runtime
    _runtime = value


def runtime() -> AppRuntime:
    if _runtime is None:
        raise RuntimeError("app runtime not initialised")
    return _runtime


# At most this long a turn's end waits for its history writes (the data-layer pool's own
# wait, REQSTUDIO_DB_POOL_TIMEOUT, is 10 s by default; a write still unfinished after this
# counts for the next turn).
TURN_WRITES_WAIT_S = 10.0
# ... and at most this long for its writes held while the database was away, and queued
# behind them: once it is back they land within a moment.
HELD_WRITES_WAIT_S = 1.0


def history_failures() -> int:
    """How many history statements of this session's thread have failed so far (0 without
    our data layer): another user's failed write is not this user's unsaved turn."""
    layer = get_data_layer()
    failures_of = getattr(layer, "failures_of", None)
    if failures_of is None:
        return getattr(layer, "failures", 0)
    try:
        thread = cl.context.session.thread_id
    except Exception:
        return getattr(layer, "failures", 0)
    return failures_of.get(thread, 0)


async def warn_if_history_failed(before: int, text: str) -> None:
    """Tell the user when saving this turn's history failed (the database went away): once
    per outage, until a turn is saved again. The notice itself cannot be saved either.
    The turn's own writes are waited for first (Chainlit starts them in tasks nobody awaits):
    the notice then follows the turn that was not saved, and a turn that ended was saved."""
    layer = get_data_layer()
    thread = cl.context.session.thread_id
    flush_thread = getattr(layer, "flush_thread", None)
    if flush_thread is not None:
        await flush_thread(thread, TURN_WRITES_WAIT_S)
    held = getattr(
        layer, "held", None
    )  # writes waiting for the database (reqstudio/web/held_writes.py)
    still_held = await held.settled(thread, HELD_WRITES_WAIT_S) if held is not None else 0
    if history_failures() == before and not still_held:
        cl.user_session.set("history_warned", False)
        return
    log.warning("history database unavailable; a turn was not saved")
    if not cl.user_session.get("history_warned"):
        cl.user_session.set("history_warned", True)
        await send_top_level(text)


# Chainlit nests what a handler sends under the handler's run, and the browser drops or
# reorders such children (messages sent in on_chat_start vanish after the first user
# message; steps show after the message of the run). Top-level items read top to bottom.


async def start_run(mode: str, *labels: str) -> str:
    """A new run's key in this thread (`<thread>:<labels>:<n>`), kept as the mode's active run
    (the one Resume offers) and saved with the thread."""
    sequence_key = f"{mode}_run_seq"

    def next_number(stored: Any) -> int:
        return int(stored or 0) + 1

    # Numbered by the thread, not by the tab: another tab's run since this tab opened the
    # thread took the next number, and two runs of one key would share their checkpoints.
    cl.user_session.set(sequence_key, next_number(cl.user_session.get(sequence_key)))
    await persist_thread_state({sequence_key: next_number})
    sequence = int(cl.user_session.get(sequence_key))
    run_key = ":".join([str(cl.context.session.thread_id), *labels, str(sequence)])
    cl.user_session.set(f"{mode}_active_run", run_key)
    await persist_thread_state()
    return run_key


def top_level_message(content: str = "") -> cl.Message:
    message = cl.Message(content=content)
    message.parent_id = None
    return message


async def send_top_level(content: str) -> None:
    await top_level_message(content).send()


async def send_notice(content: str, actions: list[cl.Action] | None = None) -> None:
    """A message from the app itself (mode confirmation, notices at chat start), with its
    buttons if any.

    Sent as a system message: the browser hides a new chat's starters once an assistant
    message is there, so the notices that open a chat must not be assistant messages."""
    message = cl.Message(content=content, type="system_message", actions=actions or [])
    message.parent_id = None
    await message.send()


# A top-level step shows an icon beside it. Without one the browser asks for an avatar
# named after the step, `/avatars/ReqParse · 完成`, which Chainlit refuses (400) for any name
# outside [a-zA-Z0-9_ .-]: a failed request per step and a grey dot where the icon goes.
# Lucide icon names, as the browser bundles them.
STEP_ICONS = {"llm": "brain", "tool": "wrench", "run": "users"}


def step_icon(kind: str, icon: str | None) -> str:
    return icon or STEP_ICONS.get(kind, "sparkles")


async def open_top_level_step(
    name: str, kind: str, *, icon: str | None = None, **kwargs: Any
) -> cl.Step:
    """A running step at the top level, already shown: open, so its stream can be read.

    The browser shows a step as running only while it has a start and no end, and folds an
    `auto_collapse` step once it ends; `finish_step` gives it that end. A click opens it again.
    """
    step = cl.Step(
        name=name,
        type=kind,
        default_open=True,
        auto_collapse=True,
        icon=step_icon(kind, icon),
        **kwargs,
    )
    step.parent_id = None
    step.start = utc_now()
    await step.send()
    return step


async def send_finished_step(
    name: str, kind: str, output: str, *, icon: str | None = None
) -> cl.Step:
    """A step that is over as soon as it is shown (a decision, a list of results): folded."""
    step = cl.Step(
        name=f"{name} · {step_outcome('done')}",
        type=kind,
        default_open=False,
        icon=step_icon(kind, icon),
    )
    step.parent_id = None
    step.start = step.end = utc_now()
    step.output = output
    await step.send()
    return step


step_outcome = Catalog("step_outcome")


async def finish_step(
    step: cl.Step | None,
    outcome: str = "done",
    *,
    name: str | None = None,
    output: str | None = None,
    note: str | None = None,
) -> None:
    """End a step: its title says how it ended (done, failed, stopped) and it folds away.

    `note` is added under what the step already shows (the reason of a failure or a stop)."""
    if step is None:
        return
    label = step_outcome(outcome)
    step.name = f"{name or step.name} · {label}"
    if output is not None:
        step.output = output
    if note:
        step.output = f"{step.output or ''}\n\n{note}".strip()
    step.is_error = outcome == "failed"
    step.end = utc_now()
    await step.update()


# --- Chainlit's own English strings ----------------------------------------------------------
# Chainlit's translation files cover its interface, not the texts its Python side writes into
# the chat. Those are replaced here so that every line the user reads is in their language.

choice_text = Catalog("choice")


class LocalizedAskAction(cl.AskActionMessage):
    """AskActionMessage that keeps its question once answered and reports the choice below it
    in the user's language (Chainlit replaces the question with "**Selected:** label" or
    "Timed out: no action was taken", in English)."""

    question = ""

    async def send(self):
        # Chainlit replaces the question with the choice once answered; the question stays.
        self.question = self.content
        try:
            return await super().send()
        except asyncio.CancelledError:
            await self._withdraw()
            raise

    async def _withdraw(self) -> None:
        """The run that asked ended (stopped, or out of time) before the user answered:
        Chainlit leaves the buttons on the page and the browser waiting. Take both back and
        say so, so that nobody answers a question nothing waits for."""
        from chainlit.context import context

        with contextlib.suppress(Exception):  # the connection may be gone; nothing to undo
            for action in self.actions:
                await action.remove()
            await context.emitter.clear("clear_ask")
            self.wait_for_answer = False
            self.content = f"{self.question}\n\n{choice_text('withdrawn')}".strip()
            await self.update()

    async def update(self):
        if self.content.startswith("**Selected:** "):
            choice = choice_text("selected", label=self.content.removeprefix("**Selected:** "))
            self.content = f"{self.question}\n\n{choice}".strip()
        elif self.content == "Timed out: no action was taken":
            self.content = f"{self.question}\n\n{choice_text('timed_out')}".strip()
        return await super().update()


class StopLineMessage(cl.Message):
    """Chainlit's stop handler posts "Task manually stopped." before cancelling the task; each
    mode already says it stopped, in the user's language, beside what it kept."""

    async def send(self):
        if self.content == "Task manually stopped.":
            # Chainlit cancels the session's task right after this: say what it finds, so a
            # Stop that changes nothing can be told apart from a Stop that never came.
            running = cl.context.session.current_task
            log.info(
                "stop: %s",
                "no run to cancel"
                if running is None or running.done()
                else f"cancelling the session's run ({running.get_name()})",
            )
            return self
        return await super().send()


def showing_the_session_again_on_reconnect(
    chainlit_handler: Callable[[str], Awaitable[None]],
) -> Callable[[str], Awaitable[None]]:
    """Chainlit's `connection_successful` socket handler; then, for a session restored on a
    new socket, what it showed the browser and "task_start" if its run still goes on, and
    the question the run waits for asked again (reqstudio/web/chainlit_seam.py says why and
    installs it; reqstudio/web/reconnect.py)."""
    from chainlit.session import WebsocketSession

    from reqstudio.web.token_stream import batcher_of

    async def connection_successful(sid):
        session = WebsocketSession.get(sid)
        running = session.current_task if session is not None else None
        await chainlit_handler(sid)
        if session is None:
            return
        restored = getattr(session, "restored", False)  # the browser's second socket or later
        if restored:
            await batcher_of(session).replay_shown()
        if running is not None and not running.done() and session.current_task is running:
            await session.emit("task_start", {})
        if restored:  # after task_start: a question asked again lets the browser answer
            batcher_of(session).shown.reconnected()

    connection_successful.shows_the_session_again = True  # type: ignore[attr-defined]
    return connection_successful


def inferring_pdfs_as_files(infer: Callable[[str], str]) -> Callable[[str], str]:
    """Chainlit's element type for a MIME type (`infer`), but "file" where it says "pdf":
    an attached PDF is shown as a file chip (reqstudio/web/chainlit_seam.py says why)."""

    def infer_type(mime_type: str) -> str:
        kind = infer(mime_type)
        return "file" if kind == "pdf" else kind

    infer_type.shows_pdfs_as_files = True  # type: ignore[attr-defined]
    return infer_type


def upload_ceiling_mb() -> int:
    """What the browser lets through: well above the app's own limit, so that a file too big
    is refused by the app, in the user's language (Chainlit's own toast is English only)."""
    return int(max(100, runtime().settings.reference_max_mb * 10))


def diff_block(label: str, before: str, after: str) -> str:
    """What a revision changed, as a readable unified diff in a Markdown code block (Review's
    revised sections and Rewrite's patched sections)."""
    lines = difflib.unified_diff(
        before.splitlines(),
        after.splitlines(),
        fromfile=t("diff_before", label=label),
        tofile=t("diff_after", label=label),
        lineterm="",
    )
    return "```diff\n" + "\n".join(lines) + "\n```"


RECONNECT_GRACE_S = 5.0
_WATCHERS: set[asyncio.Future] = set()  # kept referenced until they finish


def end_run_unless_reconnected(session: Any, grace: float = RECONNECT_GRACE_S) -> None:
    """Cancel the session's running task once its browser is gone for good.

    Chainlit calls on_chat_end when a socket disconnects; the browser reconnects a dropped
    socket to the same session (a new socket id), and a run must survive that. A session
    still on the disconnected socket after `grace` seconds has lost its tab."""
    task = session.current_task
    if task is None or task.done():
        return
    socket_id = session.socket_id

    async def cancel_unless_back() -> None:
        await asyncio.sleep(grace)
        if session.socket_id == socket_id and not task.done():
            log.info("browser gone: the session's run is cancelled")
            task.cancel()

    watcher = asyncio.ensure_future(cancel_unless_back())
    _WATCHERS.add(watcher)
    watcher.add_done_callback(_WATCHERS.discard)


async def run_as_task(work: Callable[[], Awaitable[None]]) -> None:
    """Run an action button's work as the session's task, as a message's work runs.

    Chainlit runs action callbacks inside the HTTP request, outside any task: the browser then
    shows no stop button, steps do not show as running, and Stop cancels nothing. The work is
    shielded from that request: a request the browser drops or that the server cancels must
    not cancel a run the user started (only Stop, or a closed tab, does)."""
    session = cl.context.session
    emitter = cl.context.emitter
    task = asyncio.create_task(work())
    session.current_task = task
    await emitter.task_start()

    async def end_task() -> None:
        if session.current_task is task:
            session.current_task = None
        await emitter.task_end()

    task.add_done_callback(lambda _: asyncio.ensure_future(end_task()))
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        if not task.done():  # the request was cancelled, not the work: the work goes on
            raise


ActionWork = Callable[[cl.Action], Awaitable[None]]


def button_action(
    name: str, *, at_click: Callable[[cl.Action], Awaitable[bool]] | None = None
) -> Callable[[ActionWork], ActionWork]:
    """Register `work(action)` for the buttons named `name`, run as the session's task.

    Every button of the app is registered here (a test fails on `cl.action_callback`
    elsewhere): a button's work that ran inside Chainlit's HTTP request showed no stop button,
    Stop did not reach it, and a dropped request cut it short, also between a run's last
    message and the buttons that should follow it. `at_click(action)` runs first, in the
    click's request (a Resume offer is taken back there, even while a run goes on); the work
    starts only when it returns True."""

    def register(work: ActionWork) -> ActionWork:
        async def on_click(action: cl.Action) -> None:
            if at_click is not None and not await at_click(action):
                return
            await run_as_task(lambda: work(action))

        on_click.__name__ = on_click.__qualname__ = work.__name__
        cl.action_callback(name)(on_click)
        return work

    return register


async def show_base_names(message: cl.Message) -> None:
    """An attachment is shown by its base name only (`../../evil.md` is `evil.md`), also on
    the chip of the user's own message, which Chainlit labels with the name the browser gave."""
    from reqstudio.modes.srs.documents import display_name

    for element in message.elements or []:
        base = display_name(element.name or "")
        if base != element.name:
            element.name = base
            await element.send(for_id=message.id, persist=False)


async def name_thread(title: str, *, replace: bool = False) -> None:
    """Give the thread its name in the history, from its first message (Chainlit names it by
    that message cut short, so runs of one starter all look alike); the first name stays,
    unless `replace` (a mode that learns what the thread is about: an uploaded document)."""
    data_layer = get_data_layer()
    session = cl.context.session
    if replace and title.strip():
        cl.user_session.set("thread_title", title.strip())
    title = cl.user_session.get("thread_title") or title.strip()
    if data_layer is None or not session.thread_id or not title:
        return
    # Kept and set again after every message: Chainlit names the thread from a task of its
    # own, which may finish after a quick first answer and overwrite the name.
    cl.user_session.set("thread_title", title)
    try:
        # with its owner, as Chainlit stores it: the first naming may create the thread
        user = session.user if isinstance(session.user, PersistedUser) else None
        await data_layer.update_thread(
            thread_id=session.thread_id, name=title, user_id=user.id if user else None
        )
    except Exception:
        log.exception("could not name the thread")
        return
    # The history lists threads again when the first interaction changes: without this it
    # showed Chainlit's name (the first message cut short) until the page was reloaded.
    await cl.context.emitter.emit(
        "first_interaction", {"interaction": title, "thread_id": session.thread_id}
    )
