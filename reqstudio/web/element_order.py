"""A message's files show in the order the app lists them, when they arrive and when the
thread is opened again.

Chainlit sends a message's files all at once (`asyncio.gather`): each is first written to the
file store, so the browser showed them in the order their writes finished (`srs.docx` before
`srs.md`, or after, from one run to the next), and the history stores them from tasks of their
own, so a reopened thread listed them in the order those rows landed. Here a message's files
are sent one after another, each with an id that sorts in the order the files were made (a
UUID whose first bits are the time, as UUID version 7 lays it out), and a thread read back
lists each message's files by those ids.
"""

from __future__ import annotations

import itertools
import os
import time
import uuid
from collections.abc import Iterable
from typing import Any

_SEQUENCE = itertools.count()


def ordered_id() -> str:
    """A UUID (version 7 layout) that sorts after every one made before it in this process:
    48 bits of milliseconds, then a counter, then random bits."""
    millis = time.time_ns() // 1_000_000
    counter = next(_SEQUENCE) & 0xFFF
    tail = int.from_bytes(os.urandom(8), "big") & 0x3FFF_FFFF_FFFF_FFFF
    value = (millis << 80) | (0x7 << 76) | (counter << 64) | (0b10 << 62) | tail
    return str(uuid.UUID(int=value))


def is_ordered(element_id: Any) -> bool:
    try:
        return uuid.UUID(str(element_id)).version == 7
    except ValueError:
        return False


def in_creation_order(elements: Iterable[dict]) -> list[dict]:
    """A thread's elements, each message's in the order they were made when their ids say it
    (the app's files); other elements (a user's uploads) keep the order they came in."""
    elements = list(elements)
    groups: dict[Any, list[dict]] = {}
    for element in elements:
        groups.setdefault(element.get("forId"), []).append(element)
    ordered: list[dict] = []
    for group in groups.values():
        if all(is_ordered(e.get("id")) for e in group):
            group = sorted(group, key=lambda e: str(e.get("id")))
        ordered += group
    return ordered


def made_here(element: Any) -> bool:
    """A file the app makes for a message (a download, a chart), not sent before. One with a
    path or an address may be a stored upload, whose id Chainlit already knows (SRS mode sends
    the reference uploaded to a question again under its id, to move its chip)."""
    fresh = not element.persisted and element.for_id is None
    return fresh and element.path is None and element.url is None


def message_sending_files_in_order() -> dict[str, Any]:
    """`send` and `update` for Chainlit's `Message` that send a message's files one after
    another, in its list's order, with ids made in that order; its buttons after them
    (reqstudio/web/chainlit_seam.py puts them on `cl.Message`)."""
    import chainlit as cl
    from chainlit.message import MessageBase

    async def send_parts(message: cl.Message, every_action: bool) -> None:
        for element in message.elements:
            if made_here(element):
                element.id = ordered_id()  # not sent yet: nothing refers to its id
            await element.send(for_id=message.id)
        for action in message.actions:
            if every_action or action.forId is None:  # as Chainlit's own send and update
                await action.send(for_id=message.id)

    async def send(self):
        await MessageBase.send(self)
        await send_parts(self, every_action=True)
        return self

    async def update(self):
        await MessageBase.update(self)
        await send_parts(self, every_action=False)
        return True

    send.sends_files_in_order = True  # type: ignore[attr-defined]
    return {"send": send, "update": update}
