"""Every wait for a model visible in the browser, in every mode.

A mode runs its engine inside `async with WaitLines(...)`: every model call the run makes
reports to it (`reqstudio.waits`), and it shows

- a waiting line ("⏳ 等待模型回答…") in the mode's current step or message while a request
  is out and nothing has streamed (for a call whose text is not shown as it comes, until its
  answer is whole, and for a streamed answer that went quiet for `waits.QUIET_AFTER` s, until
  its next chunk: "⏳ 模型正在回答…"), with the seconds since the call began once past
  `SECONDS_FROM`, updated every `TICK` seconds. It shows `SHOW_AFTER` after the request left
  (a quicker answer shows none: nothing flickers, and a fast run sends nothing more) and goes
  when the answer starts streaming. It is never stored: the thread keeps what happened, not
  that someone waited;
- a line per retry ("⟳ 第 2/3 次尝试：上一次 120 秒没有回答"), stored with the thread, so it is
  there when the thread is reopened.

One timer per run, armed only while a call is waited for; nothing per token. Where the lines
go: by default small messages of their own belonging to the step `where()` names (the browser
draws them right after it, in sight also once the step is folded); at the top level when it
names none, where the waiting line moves to the bottom each time it changes, to stay in sight
below what arrived meanwhile. A mode whose calls each have a step of their own (Review's
reviewers) names it by the call's label (`place`): that call's waiting line and retry lines
go there, each step with its own waiting line. Chat puts them at the top of its answer's own
message (`reply`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

import chainlit as cl
from chainlit.context import context

from reqstudio import waits
from reqstudio.web.texts import Catalog, lang

log = logging.getLogger("reqstudio.waits")

tr = Catalog("waits")

SHOW_AFTER = 1.0  # seconds after the request left before the waiting line shows
SECONDS_FROM = 10.0  # the line counts the seconds once a wait is this long
TICK = 5.0  # ... and is updated this often


@dataclass
class _Waited:
    started: float  # when the call's first try left (loop time)
    streamed: bool  # its text shows as it comes: once it does, it is not waited for
    attempt: int = 1  # its current try
    arrived: bool = False  # something of the current try's answer came
    quiet: bool = False  # ... and then nothing for `waits.QUIET_AFTER` s: waited for again
    retried: bool = False
    host: cl.Step | None = None  # the call's own step (`place`); None: the run's `where()`


async def show_streamed(message: cl.Message, text: str) -> None:
    """`message` shows `text`, not stored (as a message being streamed is). The whole message
    each time: a browser that reloaded the page meanwhile gets it again, not a lost update;
    the mode's next tokens go on after `text`."""
    message.content = text
    message.streaming = True
    await context.emitter.stream_start(message.to_dict())


class OwnLines:
    """The lines as messages of their own, under the step `where()` names (None: the top
    level), or under a call's own step. A retry line is sent and stored; a waiting line is
    only streamed, never stored."""

    def __init__(self, where: Callable[[], cl.Step | cl.Message | None]):
        self.where = where
        self.waiting: cl.Message | None = None
        self.placed: dict[str, cl.Message] = {}  # a call's own step's id -> its waiting line

    def _host(self) -> str | None:
        host = self.where()
        return host.id if host is not None else None

    async def retry(self, line: str, host: cl.Step | None = None) -> None:
        await self.show_waiting(None, host)  # below the retry line, not above it
        message = cl.Message(content=line)
        message.parent_id = host.id if host is not None else self._host()
        await message.send()

    async def show_waiting(self, text: str | None, host: cl.Step | None = None) -> None:
        if host is not None:
            await self._show_placed(text, host)
            return
        host = self._host()
        moves = self.waiting is not None and (self.waiting.parent_id != host or host is None)
        if self.waiting is not None and (text is None or moves):
            await context.emitter.delete_step(self.waiting.to_dict())
            self.waiting = None
        if text is None:
            return
        if self.waiting is None:
            self.waiting = cl.Message(content="")
            self.waiting.parent_id = host
        await show_streamed(self.waiting, text)

    async def _show_placed(self, text: str | None, host: cl.Step) -> None:
        """The waiting line of the calls whose own step is `host`, right under it."""
        shown = self.placed.get(host.id)
        if text is None:
            if shown is not None:
                await context.emitter.delete_step(self.placed.pop(host.id).to_dict())
            return
        if shown is None:
            shown = self.placed[host.id] = cl.Message(content="")
            shown.parent_id = host.id
        await show_streamed(shown, text)


class ReplyLines:
    """Chat: the lines at the top of the answer's message, before the answer. A retry drops
    the broken try's text from the screen (the mode drops it from its own copy); `prefix()`
    is what the message keeps above the answer when it is stored. An answer that went quiet
    has its waiting line below the text it has so far, until its next chunk."""

    def __init__(self, reply: cl.Message):
        self.reply = reply
        self.retries: list[str] = []
        self.waiting: str | None = None
        self.above: str | None = None  # the answer so far, above a waiting line below it

    def prefix(self) -> str:
        return "".join(f"{line}\n\n" for line in self.retries)

    async def retry(self, line: str, host: cl.Step | None = None) -> None:
        self.retries.append(line)
        self.above = None  # the broken try's text is gone
        await show_streamed(self.reply, self.prefix() + (self.waiting or ""))

    async def show_waiting(self, text: str | None, host: cl.Step | None = None) -> None:
        if text == self.waiting:
            return
        begun = len(self.reply.content) > len(self.prefix())  # the answer's text is shown
        if self.above is None and self.waiting is None and begun:
            self.above = self.reply.content
        self.waiting = text
        if self.above is None:
            await show_streamed(self.reply, self.prefix() + (text or ""))
            return
        above = self.above
        if text is None:  # the answer goes on after its text so far
            self.above = None
        await show_streamed(self.reply, above + (f"\n\n{text}" if text else ""))


class WaitLines:
    """One run's waits on screen (see the module's text). `who(label)` names the agent a
    call's retry line is about, where a run has several (Team); `place(label)` the step of
    its own a call's lines go in (None: `where()`'s)."""

    def __init__(
        self,
        *,
        where: Callable[[], cl.Step | cl.Message | None] | None = None,
        reply: cl.Message | None = None,
        who: Callable[[str], str | None] | None = None,
        place: Callable[[str], cl.Step | None] | None = None,
    ):
        self.lines: OwnLines | ReplyLines = (
            ReplyLines(reply) if reply is not None else OwnLines(where or (lambda: None))
        )
        self.who = who
        self.place = place
        self.calls: dict[int, _Waited] = {}
        # the waiting lines on screen: None for `where()`'s, else a call's own step's id
        self.shown: dict[str | None, str] = {}
        self.hosts: dict[str, cl.Step] = {}  # the calls' own steps, by id
        self.lock = asyncio.Lock()
        self.timer: asyncio.TimerHandle | None = None
        self.ticks: set[asyncio.Task] = set()
        self.closed = False
        self._watching = waits.watching(self.observe)

    def prefix(self) -> str:
        """Chat: the retry lines that go above the answer in its stored message."""
        return self.lines.prefix() if isinstance(self.lines, ReplyLines) else ""

    async def __aenter__(self) -> WaitLines:
        self._watching.__enter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._watching.__exit__(None, None, None)
        self.closed = True
        if self.timer is not None:
            self.timer.cancel()
        self.calls.clear()
        try:
            await self.render()  # the waiting line goes; the retry lines stay
        except Exception:  # the browser may be gone; the run's own ending matters more
            log.warning("the waiting line could not be removed", exc_info=True)

    # --- the calls' reports ----------------------------------------------------------------

    async def observe(self, event: waits.CallEvent) -> None:
        if self.closed:
            return
        now = asyncio.get_running_loop().time()
        if isinstance(event, waits.RequestSent):
            waited = self.calls.get(event.call)
            if waited is None:
                waited = self.calls[event.call] = _Waited(now, event.streamed)
                waited.host = self.place(event.label) if self.place is not None else None
                if waited.host is not None:
                    self.hosts[waited.host.id] = waited.host
            waited.attempt, waited.arrived, waited.quiet = event.attempt, False, False
            self.arm()
        elif isinstance(event, waits.AnswerArrived) and self.current(event):
            waited = self.calls[event.call]
            waited.arrived, waited.quiet = True, False
            self.disarm_if_idle()
            if self.shown:
                await self.render()  # before the first token (or the next) reaches the screen
        elif isinstance(event, waits.AnswerQuiet) and self.current(event):
            self.calls[event.call].quiet = True
            await self.render()
        elif isinstance(event, waits.TryFailed):
            # (a call that never sent itself re-asks a whole answer: its line only)
            host = None
            if (waited := self.calls.get(event.call)) is not None:
                waited.retried = True
                waited.arrived, waited.quiet = False, False
                host = waited.host
            async with self.lock:
                await self.lines.retry(self.retry_line(event), host)
                # a retry line moved it: shown again below
                self.shown.pop(host.id if host is not None else None, None)
            await self.render()
        elif isinstance(event, waits.CallEnded):
            ended = self.calls.pop(event.call, None)
            self.disarm_if_idle()
            if ended is not None and self.shown:
                await self.render()

    def current(self, event: waits.AnswerArrived | waits.AnswerQuiet) -> bool:
        """The report is about a call waited for, and its current try (a quiet spell's report
        can come after its try ended)."""
        waited = self.calls.get(event.call)
        return waited is not None and waited.attempt == event.attempt

    def retry_line(self, event: waits.TryFailed) -> str:
        retry = waits.retry_text(event, lang())
        who = self.who(event.label) if self.who is not None else None
        return tr("retry_line_of", who=who, retry=retry) if who else tr("retry_line", retry=retry)

    # --- the waiting line ------------------------------------------------------------------

    def waited_for(self) -> list[_Waited]:
        """The calls whose answer is not on screen: nothing came yet, it is not streamed, or it
        went quiet."""
        return [
            call
            for call in self.calls.values()
            if not (call.streamed and call.arrived and not call.quiet)
        ]

    def waiting_text(self, now: float, calls: list[_Waited] | None = None) -> str | None:
        calls = self.waited_for() if calls is None else calls
        if not calls:
            return None
        waited = now - min(call.started for call in calls)
        if waited < SHOW_AFTER and not any(call.retried for call in calls):
            return None
        answering = all(call.arrived for call in calls)
        count = len(calls)
        return tr(
            "answering" if answering else "waiting",
            count=tr("count", count=count) if count > 1 else "",
            seconds=tr("seconds", seconds=int(waited)) if waited >= SECONDS_FROM else "",
        )

    async def render(self) -> None:
        async with self.lock:
            now = asyncio.get_running_loop().time()
            groups: dict[str | None, list[_Waited]] = {}
            for call in self.waited_for():
                groups.setdefault(call.host.id if call.host is not None else None, []).append(call)
            for key in [*groups, *(key for key in self.shown if key not in groups)]:
                text = self.waiting_text(now, groups.get(key, []))
                if text != self.shown.get(key):
                    await self.lines.show_waiting(text, self.hosts.get(key) if key else None)
                    if text is None:
                        self.shown.pop(key, None)
                    else:
                        self.shown[key] = text
        self.arm()

    def disarm_if_idle(self) -> None:
        """No call waited for: no timer (a quick answer leaves nothing behind)."""
        if self.timer is not None and not self.waited_for():
            self.timer.cancel()
            self.timer = None

    def arm(self) -> None:
        """The run's one timer, set for the waiting line's next change."""
        calls = self.waited_for()
        if self.timer is not None or not calls or self.closed:
            return
        loop = asyncio.get_running_loop()
        oldest = min(call.started for call in calls)
        waited = loop.time() - oldest
        if waited < SHOW_AFTER:
            due = oldest + SHOW_AFTER
        elif waited < SECONDS_FROM:
            due = oldest + SECONDS_FROM
        else:
            due = oldest + SECONDS_FROM + TICK * (int((waited - SECONDS_FROM) / TICK) + 1)
        self.timer = loop.call_at(due, self._tick)

    def _tick(self) -> None:
        self.timer = None
        if self.closed:
            return
        task = asyncio.ensure_future(self._tick_render())
        self.ticks.add(task)
        task.add_done_callback(self.ticks.discard)

    async def _tick_render(self) -> None:
        try:
            await self.render()
        except Exception:
            log.warning("the waiting line could not be updated", exc_info=True)
