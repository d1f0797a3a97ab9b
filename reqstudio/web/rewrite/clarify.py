"""Rewrite mode's clarifications: read from an attached .json, or asked one question at a
time (answer, skip, or stop asking), or none."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import chainlit as cl

from reqstudio.errors import describe_failure
from reqstudio.modes.rewrite import ClarificationItem
from reqstudio.modes.rewrite.questions import (
    ClarificationsError,
    Reply,
    ask_one_at_a_time,
    parse_clarifications,
    propose_questions,
)
from reqstudio.web.session import finish_step, open_top_level_step, runtime
from reqstudio.web.settings_panel import thread_factory
from reqstudio.web.texts import Catalog, counted, lang
from reqstudio.web.waits import WaitLines

log = logging.getLogger("reqstudio.rewrite")

ASK_TIMEOUT = 1800  # seconds: people need time to think about a question

tr = Catalog("rewrite")


async def read_clarifications_file(path: Path, name: str) -> list[ClarificationItem] | None:
    try:
        items = parse_clarifications(path.read_text(encoding="utf-8-sig"))
    except (ClarificationsError, UnicodeDecodeError) as error:
        reason = str(error) if isinstance(error, ClarificationsError) else "not UTF-8 text"
        await cl.Message(content=tr("clarifications_bad", name=name, reason=reason)).send()
        return None
    await cl.Message(
        content=tr("clarifications_ok", name=name, count=counted(len(items), "entry"))
    ).send()
    return items


async def choose_clarifications(original: str) -> list[ClarificationItem]:
    choice = await ask_choice(
        tr("how_clarify"),
        [
            cl.Action(name="ask", payload={"choice": "ask"}, label=tr("let_app_ask")),
            cl.Action(name="upload", payload={"choice": "upload"}, label=tr("upload_json")),
            cl.Action(name="none", payload={"choice": "none"}, label=tr("no_clarify")),
        ],
    )
    picked = (choice or {}).get("payload", {}).get("choice", "none")
    if picked == "upload":
        files = await cl.AskFileMessage(
            content=tr("upload_json_prompt"),
            accept={"application/json": [".json"]},
            max_size_mb=1,
            timeout=ASK_TIMEOUT,
        ).send()
        for file in files or []:
            items = await read_clarifications_file(Path(file.path), file.name)
            return items or []
        return []
    if picked == "ask":
        return await ask_questions(original)
    return []


async def ask_questions(original: str) -> list[ClarificationItem]:
    settings = runtime().settings
    # Titled by what it does; how it ended is added when it ends, as every step's is (its
    # "正在……" title stayed on the finished step).
    step = await open_top_level_step(tr("step_questions"), "llm", icon="message-circle-question")
    try:
        async with WaitLines(where=lambda: step):
            questions = await propose_questions(
                original,
                thread_factory(),
                max_questions=settings.rewrite_max_questions,
            )
    except asyncio.CancelledError:
        await finish_step(step, "stopped")
        raise
    except Exception as error:
        log.warning("rewrite: no questions", exc_info=True)
        await finish_step(step, "failed", output=describe_failure(error, lang()))
        await cl.Message(
            content=tr("questions_failed", reason=describe_failure(error, lang()))
        ).send()
        return []
    listed = "\n".join(f"{i}. {q}" for i, q in enumerate(questions, start=1))
    await finish_step(step, output=listed)
    if not questions:
        await cl.Message(content=tr("no_questions")).send()
        return []

    async def ask(index: int, total: int, question: str) -> Reply:
        picked = await ask_choice(
            tr("question", index=index, total=total, question=question)
            + "\n\n"
            + tr("answer_or_skip"),
            [
                cl.Action(name="answer", payload={"a": "answer"}, label=tr("answer")),
                cl.Action(name="skip", payload={"a": "skip"}, label=tr("skip")),
                cl.Action(name="stop", payload={"a": "stop"}, label=tr("stop_asking")),
            ],
        )
        action = (picked or {}).get("payload", {}).get("a", "stop")
        if action != "answer":
            return Reply(action)
        answer = await cl.AskUserMessage(
            content=tr("your_answer", index=index), timeout=ASK_TIMEOUT
        ).send()
        return Reply("answer", (answer or {}).get("output", ""))

    outcome = await ask_one_at_a_time(questions, ask)
    await cl.Message(
        content=tr(
            "qa_summary",
            answered=len(outcome.clarifications),
            skipped=len(outcome.skipped),
            unasked=len(outcome.not_asked),
        )
    ).send()
    return outcome.clarifications


async def ask_choice(content: str, actions: list[cl.Action]) -> dict | None:
    """Ask with buttons; the question stays readable, with what was chosen under it."""
    ask = cl.AskActionMessage(content=content, actions=actions, timeout=ASK_TIMEOUT)
    picked = await ask.send()
    ask.content = content
    await record_choice(ask, picked)
    return picked


async def record_choice(choice: cl.AskActionMessage, picked: dict | None) -> None:
    """Chainlit replaces an answered question's text with "**Selected:** <label>" (in English):
    keep the question readable and say what was chosen in the user's language."""
    question = choice.content
    picked_label = (picked or {}).get("label")
    asked = question.split("\n\n")[0]
    outcome = tr("chosen", label=picked_label) if picked_label else tr("timed_out")
    choice.content = f"{asked}\n\n{outcome}"
    await choice.update()
