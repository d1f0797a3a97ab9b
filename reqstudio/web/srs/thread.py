"""What a resumed SRS thread must show again.

Files are elements of their messages: Chainlit's data layer keeps them in the configured
store (reqstudio/web/storage.py) and shows them again when the thread is opened, on any instance. The
thread itself keeps only its Evaluate button (actions are not stored), and one Resume offer."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

import chainlit as cl
from chainlit.data import get_data_layer

from reqstudio.modes.srs.documents import display_name
from reqstudio.web.rendering import first_offer
from reqstudio.web.texts import Catalog

log = logging.getLogger("reqstudio.srs")

tr = Catalog("srs")


def thread_file(name: str, content: bytes, mime: str) -> cl.File:
    return cl.File(name=display_name(name), content=content, mime=mime)


async def restore_thread_items() -> None:
    """Show again the Evaluate and Review & improve buttons the thread had, and the files of a thread written by a
    version before the file store (kept then in this machine's data directory)."""
    for item in cl.user_session.get("srs_files") or []:
        if Path(item["path"]).is_file():
            file = cl.File(
                id=stable_id(item["path"]), name=item["name"], path=item["path"], mime=item["mime"]
            )
            await file.send(for_id=item["for_id"], persist=False)
    last = cl.user_session.get("srs_last_result") or {}
    # The browser keeps actions across its reloads of the thread (not files): once a session.
    # In the order the run showed them (reqstudio/web/srs/flow.py): Review & improve, then Evaluate.
    # "Review & improve" on the SRS the thread wrote, until it has been reviewed
    reviewable = last.get("message_id") and last.get("srs") and "srs_before_review" not in last
    if reviewable and first_offer("review"):
        await review_action(last["message_id"]).send(for_id=last["message_id"])
    wanted = last.get("message_id") and cl.user_session.get("srs_reference")
    if wanted and first_offer("evaluate"):
        await evaluate_action(last["message_id"]).send(for_id=last["message_id"])


def review_action(for_id: str) -> cl.Action:
    return cl.Action(
        id=stable_id(f"review:{for_id}"), name="srs_review", payload={}, label=tr("review")
    )


def evaluate_action(for_id: str) -> cl.Action:
    return cl.Action(
        id=stable_id(f"evaluate:{for_id}"), name="srs_evaluate", payload={}, label=tr("evaluate")
    )


def stable_id(key: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"reqstudio:{key}"))


async def remove_taken_offer() -> None:
    """The Resume button the user clicked leaves the browser, again: a browser that was
    reconnecting when it was clicked misses the first removal."""
    taken = cl.user_session.get("srs_offer_taken")
    if taken:
        await cl.context.emitter.emit("remove_action", taken)


async def drop_earlier_offers(thread: dict) -> None:
    """A thread shows one resume offer: the one of this opening. Earlier ones leave the
    stored thread, and the copy of it about to be sent to the browser."""
    made = cl.user_session.get("srs_offer") or {}
    earlier = set(made.get("ids") or [])
    if not earlier or made.get("session") == cl.context.session.id:
        return  # none, or this opening's own (the browser reconnects once when it opens one)
    thread["steps"] = [step for step in thread.get("steps", []) if step["id"] not in earlier]
    data_layer = get_data_layer()
    for step_id in earlier:
        if data_layer is not None:
            try:
                await data_layer.delete_step(step_id)
            except Exception:
                log.warning("could not delete an earlier resume offer", exc_info=True)
    cl.user_session.set("srs_offer", {})
