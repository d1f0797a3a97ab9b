"""Chat mode in the browser: streamed answers, memory per thread, stop, stats, clear errors."""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import aclosing

import chainlit as cl

from reqstudio.errors import describe_failure
from reqstudio.events import BaseEvent
from reqstudio.llm import embedded_max_tokens
from reqstudio.modes.chat import ChatMemory
from reqstudio.modes.chat.entry import AnswerRestarted, AnswerToken, ChatRequest, run
from reqstudio.modes.chat.outcome import ChatEnding, chat_outcome, failed_ending
from reqstudio.usage import UsageTracker
from reqstudio.web.edits import (
    ANSWERED,
    drop_discarded_steps,
    note_answer,
    regenerate_action,
    was_answered,
)
from reqstudio.web.endings import ending_mark
from reqstudio.web.live import LiveRun, Views
from reqstudio.web.modes import catalog_mode
from reqstudio.web.session import runtime
from reqstudio.web.settings_panel import thread_factory
from reqstudio.web.texts import lang, t, token_figure
from reqstudio.web.thread_state import persist_thread_state, refresh_thread_state
from reqstudio.web.waits import WaitLines

log = logging.getLogger("reqstudio.chat")

MEMORY_KEY = "chat_memory"


def closing_mark(ending: ChatEnding) -> str:
    """The mark of how an answer ended, read from its outcome (`reqstudio.modes.chat.outcome`) as
    `reqstudio chat`'s exit code is. A whole answer is shown as it is; the notice of every
    other ending starts with its mark."""
    return ending_mark(chat_outcome(ending))


def stats_line(tracker: UsageTracker, seconds: float) -> str:
    # An answer with no usage at all is a server that does not report it (llama.cpp streaming)
    if not tracker.tokens_known or (tracker.calls and not tracker.total_tokens):
        return t("stats_no_usage", tokens=token_figure(0, known=False), seconds=seconds)
    return t(
        "stats",
        tokens=token_figure(tracker.total_tokens),
        input=tracker.input_tokens,
        output=tracker.output_tokens,
        seconds=seconds,
    )


class ChatViews(Views):
    """A chat answer as it streams: one message, the answer's tokens in it. A broken try's
    text is dropped: the answer shown is always one whole answer. The message then shows the
    retry's line (`WaitLines`), and the next try's text below it."""

    def __init__(self) -> None:
        self.reply = cl.Message(content="")
        self.answer = ""  # the current try's text

    async def show(self, event: BaseEvent) -> None:
        if isinstance(event, AnswerToken):
            self.answer += event.text
            await self.reply.stream_token(event.text)
        elif isinstance(event, AnswerRestarted):
            self.answer = ""
            self.reply.content = ""


async def on_chat_message(message: cl.Message) -> None:
    text = (message.content or "").strip()
    if not text:
        await cl.Message(content=t("empty_message")).send()
        return
    await refresh_thread_state()  # the turns another tab took meanwhile reach the model too
    memory = ChatMemory.load(cl.user_session.get(MEMORY_KEY))
    # an edited or regenerated message: what followed goes, from the memory and the page
    if memory.rewind_to(message.id) or was_answered(message.id):
        await drop_discarded_steps(message.id)
    tracker = UsageTracker()
    # Its button is added once the answer is over: an update on a retry (Chainlit sends a
    # message's actions with every update) showed it twice under the answer.
    views = ChatViews()
    live = LiveRun(views)
    reply = views.reply
    started = time.perf_counter()
    notice = ""
    cancelled = False
    request = ChatRequest(text=text, history=memory.dump())
    waits = WaitLines(reply=reply)
    try:
        answering = run(request, thread_factory(), callbacks=[tracker])
        async with waits, aclosing(answering):  # a stop ends the model's call too
            async for event in answering:
                await live.show(event)
    except asyncio.CancelledError:
        log.info("chat answer stopped after %d characters", len(views.answer))
        cancelled = True
        notice = t("stopped")
    if live.failed is not None:  # provider failures are reported in the chat, the app goes on
        # The marks are the ending's outcome's (`reqstudio.modes.chat.outcome`), as the CLI's exit code.
        exc = live.failed.error
        ending = failed_ending(exc, runtime().endpoint.embedded)
        if ending == "truncated":
            # The embedded model's answers are bounded on purpose (it loops when left free):
            # reaching the bound is the documented end of its answer, said as such.
            notice = t("truncated", tokens=embedded_max_tokens("chat"))
        else:
            log.warning("chat answer failed: %s", type(exc).__name__)
            notice = t("failed_kept", reason=describe_failure(exc, lang()))
        notice = f"{closing_mark(ending)} {notice}"
    # the answer delivered whole; else what the last try streamed (kept, said unfinished)
    answer = live.finished.result if live.finished is not None else views.answer
    footer = stats_line(tracker, time.perf_counter() - started)
    body = answer if not notice else f"{answer}\n\n{notice}".strip()
    reply.content = f"{waits.prefix()}{body}\n\n*{footer}*"
    reply.actions = [regenerate_action(message.id)]
    await reply.send()

    def with_this_turn(stored: list[dict] | None) -> list[dict]:
        """A memory (this one, or another tab's saved since) with this turn in it."""
        memory = ChatMemory.load(stored)
        memory.rewind_to(message.id)
        memory.add("user", text, message.id)
        if answer:
            memory.add("assistant", answer, message.id)
        return memory.dump()

    cl.user_session.set(MEMORY_KEY, with_this_turn(cl.user_session.get(MEMORY_KEY)))
    answered = note_answer(reply.id, message.id)
    await persist_thread_state({MEMORY_KEY: with_this_turn, ANSWERED: answered})
    if cancelled:
        raise asyncio.CancelledError


CHAT_MODE = catalog_mode("Chat", on_message=on_chat_message, editable=True)
