"""Edit a sent message, regenerate an answer (Chat and Agent).

Chainlit's own edit (`edit_message`, on per mode through the chat profile's config overrides)
removes every message after the edited one, from the page and the history, and hands the
edited message to `on_message` again with its id unchanged. Regenerate does the same for an
answer's question, unchanged. Either way the mode's memory rewinds to that message id
(`ChatMemory.rewind_to`, `AgentMemory.rewind_to`), so the model is never sent the turns the
user discarded.

Chainlit adds a reopened thread's messages to the session's list, so an old message can be
edited after a restart too. An answer's Regenerate button is not stored with the thread
(Chainlit keeps no actions): a reopened thread shows it only under the answers given since.
"""

from __future__ import annotations

import logging

import chainlit as cl
from chainlit.config import config

from reqstudio.web.session import button_action
from reqstudio.web.texts import t

log = logging.getLogger("reqstudio.edits")

REGENERATE = "regenerate"


def regenerate_action(question: cl.Message) -> cl.Action:
    """The button under an answer that asks `question` again."""
    return cl.Action(
        name=REGENERATE, payload={"message": question.id}, label=t("regenerate"), icon="refresh-cw"
    )


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
