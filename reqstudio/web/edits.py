"""Edit a sent message, regenerate an answer (Chat and Agent).

Chainlit's own edit (`edit_message`, on per mode through the chat profile's config overrides)
removes every message after the edited one, from the page and the history, and hands the
edited message to `on_message` again with its id unchanged. Regenerate does the same for an
answer's question, unchanged. Either way the mode's memory rewinds to that message id
(`ChatMemory.rewind_to`, `AgentMemory.rewind_to`), so the model is never sent the turns the
user discarded.

Chainlit adds a reopened thread's messages to the session's list, so an old message can be
edited after a restart too. Chainlit stores no buttons with a thread: the session keeps which
question each answer answered (`ANSWERED`, saved with the thread's state), and a reopened
thread gets each answer's Regenerate button again (`restore_regenerate_buttons`).
"""

from __future__ import annotations

import logging

import chainlit as cl
from chainlit.config import config
from chainlit.data import get_data_layer

from reqstudio.web.rendering import first_offer
from reqstudio.web.session import button_action
from reqstudio.web.texts import t
from reqstudio.web.thread_versions import Merger

log = logging.getLogger("reqstudio.edits")

REGENERATE = "regenerate"
# answer message id -> the id of the question it answers, in the session and the thread's state
ANSWERED = "answered"


def regenerate_action(question_id: str) -> cl.Action:
    """The button under an answer that asks the question `question_id` again."""
    return cl.Action(
        name=REGENERATE, payload={"message": question_id}, label=t("regenerate"), icon="refresh-cw"
    )


def note_answer(answer_id: str, question_id: str) -> Merger:
    """Remember that `answer_id` answers `question_id`, so that the answer has its Regenerate
    button again when the thread is reopened; the merger for `persist_thread_state` (another
    tab's answers stay)."""

    def with_this_answer(stored: dict[str, str] | None) -> dict[str, str]:
        return {**(stored or {}), answer_id: question_id}

    cl.user_session.set(ANSWERED, with_this_answer(cl.user_session.get(ANSWERED)))
    return with_this_answer


async def restore_regenerate_buttons(thread: dict) -> None:
    """A reopened thread's answers get their Regenerate button again: each answer the
    session's state names whose question and answer are both still in the thread (an edit
    or a regeneration removed the others), once per browser session (a thread's restore
    runs on_chat_resume twice)."""
    answered: dict[str, str] = cl.user_session.get(ANSWERED) or {}
    kept = {step.get("id") for step in thread.get("steps") or []}
    for answer_id, question_id in answered.items():
        if answer_id in kept and question_id in kept and first_offer(f"{REGENERATE}:{answer_id}"):
            await regenerate_action(question_id).send(for_id=answer_id)


def was_answered(question_id: str) -> bool:
    """Whether the session's state names an answer to `question_id`."""
    return question_id in (cl.user_session.get(ANSWERED) or {}).values()


async def drop_discarded_steps(question_id: str) -> None:
    """The steps of the turns an edit or a regeneration of `question_id` discarded (an
    Agent's reasoning, its decisions) leave the page and the thread, as their messages do:
    Chainlit removes only messages. Every step the thread holds after the question but
    messages (what another tab asked and was answered stays) and this turn's own run."""
    data_layer = get_data_layer()
    thread_id = cl.context.session.thread_id
    steps_after = getattr(data_layer, "steps_after", None)
    if steps_after is None or not thread_id:
        return
    this_run = cl.context.current_step.id if cl.context.current_step else None
    for step in await steps_after(thread_id, question_id):
        if step["type"].endswith("_message") or this_run in (step["id"], step["parentId"]):
            continue
        await data_layer.delete_step(step["id"])
        await cl.context.emitter.delete_step({"id": step["id"]})


@button_action(REGENERATE)
async def regenerate(action: cl.Action) -> None:
    """Ask the answer's question again: the answer and everything after it go."""
    question_id = (action.payload or {}).get("message")
    messages = cl.chat_context.get()
    question = next((m for m in messages if m.id == question_id), None)
    if question is None:
        await cl.Message(content=t("regenerate_unknown")).send()
        return
    for message in messages[messages.index(question) + 1 :]:
        await message.remove()
    log.info("regenerating the answer to message %s", question_id)
    if config.code.on_message:
        await config.code.on_message(question)
