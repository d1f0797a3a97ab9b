"""Chat mode in the browser: streamed answers, memory per thread, stop, stats, clear errors."""

from __future__ import annotations

import asyncio
import logging
import time

import chainlit as cl

from agents.chat import ChatEngine, ChatMemory
from reqstudio.calls import IncompleteAnswerError
from reqstudio.errors import describe_failure
from reqstudio.llm import embedded_max_tokens
from reqstudio.usage import UsageTracker
from ui.edits import regenerate_action
from ui.modes import catalog_mode
from ui.session import persist_thread_state, runtime
from ui.settings_panel import thread_factory
from ui.texts import lang, t

log = logging.getLogger("reqstudio.chat")

MEMORY_KEY = "chat_memory"


def stats_line(tracker: UsageTracker, seconds: float) -> str:
    if tracker.total_tokens == 0:
        return t("stats_no_usage", seconds=seconds)
    return t(
        "stats",
        tokens=tracker.total_tokens,
        input=tracker.input_tokens,
        output=tracker.output_tokens,
        seconds=seconds,
    )


async def on_chat_message(message: cl.Message) -> None:
    text = (message.content or "").strip()
    if not text:
        await cl.Message(content=t("empty_message")).send()
        return
    memory = ChatMemory.load(cl.user_session.get(MEMORY_KEY))
    memory.rewind_to(message.id)  # an edited or regenerated message: what followed goes
    tracker = UsageTracker()
    engine = ChatEngine(thread_factory(), callbacks=[tracker])
    reply = cl.Message(content="", actions=[regenerate_action(message)])
    started = time.perf_counter()
    answer = ""
    notice = ""
    cancelled = False

    async def show(token: str) -> None:
        nonlocal answer
        answer += token
        await reply.stream_token(token)

    async def start_again(attempt: int, error: BaseException, wait: float) -> None:
        # The broken try's text is dropped: the answer shown is always one whole answer.
        nonlocal answer
        answer = ""
        reply.content = t("retrying", attempt=attempt)
        await reply.update()
        reply.content = ""

    try:
        await engine.reply(memory, text, on_token=show, on_retry=start_again)
    except asyncio.CancelledError:
        log.info("chat answer stopped after %d characters", len(answer))
        cancelled = True
        notice = t("stopped")
    except IncompleteAnswerError as exc:
        if exc.reason == "length" and runtime().endpoint.embedded:
            # The embedded model's answers are bounded on purpose (it loops when left free):
            # reaching the bound is the documented end of its answer, said as such.
            notice = t("truncated", tokens=embedded_max_tokens("chat"))
        else:
            log.warning("chat answer failed: %s", type(exc).__name__)
            notice = t("failed_kept", reason=describe_failure(exc, lang()))
    except Exception as exc:  # provider failures are reported in the chat, the app goes on
        log.warning("chat answer failed: %s", type(exc).__name__)
        notice = t("failed_kept", reason=describe_failure(exc, lang()))
    footer = stats_line(tracker, time.perf_counter() - started)
    body = answer if not notice else f"{answer}\n\n{notice}".strip()
    reply.content = f"{body}\n\n*{footer}*"
    await reply.send()
    memory.add("user", text, message.id)
    if answer:
        memory.add("assistant", answer, message.id)
    cl.user_session.set(MEMORY_KEY, memory.dump())
    await persist_thread_state()
    if cancelled:
        raise asyncio.CancelledError


CHAT_MODE = catalog_mode("Chat", on_message=on_chat_message, editable=True)
