"""SRS mode's conversation: the settings, the description and its reference SRS, Resume of
an unfinished run, the thread's name, and the mode's entry."""

from __future__ import annotations

import asyncio
import logging
import re

import chainlit as cl
from chainlit.input_widget import Select, Switch

from reqstudio.modes.srs.engine import SrsRequest, paused_run, pending_resume
from reqstudio.persistence import open_checkpointer
from reqstudio.web.modes import catalog_mode, rounds_slider
from reqstudio.web.rendering import first_offer, forget_offer
from reqstudio.web.resume_advice import resume_refused
from reqstudio.web.session import button_action, persist_thread_state, runtime, start_run
from reqstudio.web.srs.flow import ablation_label, render_run
from reqstudio.web.srs.reference import ask_for_reference, read_attachments
from reqstudio.web.srs.thread import drop_earlier_offers, remove_taken_offer, restore_thread_items
from reqstudio.web.texts import Catalog

log = logging.getLogger("reqstudio.srs")

tr = Catalog("srs")


def settings_widgets() -> list:
    settings = runtime().settings
    return [
        rounds_slider("srs_max_iterations", tr("settings_rounds"), settings.srs_max_iterations),
        Select(
            id="srs_ablation",
            label=tr("settings_ablation"),
            items={ablation_label(a): a for a in ("none", "no-clarify", "no-explore-clarify")},
            initial_value="none",
        ),
        # Off by default, per thread: wait for the user's word after each ReqClarify round.
        Switch(id="srs_pause", label=tr("settings_pause"), initial=False),
    ]


async def on_srs_message(message: cl.Message) -> None:
    if not await read_attachments(message):
        return
    text = (message.content or "").strip()
    if not text:
        await cl.Message(content=tr("need_description")).send()
        return
    if not cl.user_session.get("srs_reference"):
        await ask_for_reference()
    reference = (cl.user_session.get("srs_reference") or {}).get("text", "")
    chosen = cl.user_session.get("chat_settings") or {}
    request = SrsRequest(
        user_input=text,
        reference_srs=reference,
        ablation=chosen.get("srs_ablation", "none"),
        max_iterations=int(chosen.get("srs_max_iterations", runtime().settings.srs_max_iterations)),
        pause_after_round=bool(chosen.get("srs_pause", False)),
    )
    await render_run(request, await start_run("srs"), resume=False)


async def on_srs_resume(thread: dict) -> None:
    await drop_earlier_offers(thread)
    # Chainlit sends the stored thread to the browser after this handler returns, replacing
    # what the handler showed; a task's messages are queued after that, so the offer stays.
    asyncio.get_running_loop().create_task(restore_and_offer())


async def restore_and_offer() -> None:
    # Every time: the browser reloads the stored thread when it reconnects, dropping what was
    # shown; stable ids make a second showing replace the first.
    await restore_thread_items()
    await remove_taken_offer()
    await offer_resume()


async def offer_resume() -> None:
    run_key = cl.user_session.get("srs_active_run")
    if resume_refused(run_key):  # its failed ending said resuming cannot help yet
        return
    if not run_key:
        return
    if not first_offer(str(run_key)):
        await show_offer_again(run_key)
        return
    try:
        async with open_checkpointer(runtime().settings) as saver:
            node = await pending_resume(saver, run_key)
            paused = await paused_run(saver, run_key) if node else None
    except Exception:  # the database is away: no offer now, the next resume asks again
        log.exception("could not read the SRS checkpoint")
        forget_offer(str(run_key))
        return
    if node:
        text = tr("resume_offer", node=node)
        if paused is not None:  # it waits for the user's decision on the list
            text = tr("resume_offer_paused", round=paused.round)
        action = cl.Action(name="srs_resume", payload={"run": run_key}, label=tr("resume"))
        offer = cl.Message(content=text, actions=[action])
        async with offer_lock():
            await offer.send()
            cl.user_session.set(
                "srs_offer",
                {"session": cl.context.session.id, "ids": [offer.id], "text": text,
                 "action": action.id, "run": run_key},
            )  # fmt: skip
        await persist_thread_state()


def offer_lock() -> asyncio.Lock:
    """One at a time per tab: showing the Resume offer (again) and taking it. Showing it
    again awaits the browser between its look at whether it was taken and its button going
    out; a click handled in between was undone by it, the offer staying after the click
    (seen under load in CI)."""
    session = cl.context.session
    lock = getattr(session, "_reqstudio_offer_lock", None)
    if lock is None:
        lock = session._reqstudio_offer_lock = asyncio.Lock()
    return lock


async def show_offer_again(run_key: str) -> None:
    """The browser reconnected while this session opened the thread (it does once, as it
    restores the thread's mode): the offer made on the first connection may have gone with
    it, or be missing from the stored copy the browser now shows (its write still on its way).
    The same message and button again, by their ids: the browser replaces them, no second."""
    async with offer_lock():  # a click comes before this look or after the button is back
        made = cl.user_session.get("srs_offer") or {}
        taken = (cl.user_session.get("srs_offer_taken") or {}).get("id")
        if made.get("session") != cl.context.session.id or made.get("run") != run_key:
            return
        if not made.get("ids") or not made.get("text") or taken == made.get("action"):
            return
        action = cl.Action(
            id=made["action"], name="srs_resume", payload={"run": run_key}, label=tr("resume")
        )
        await action.remove()  # the browser keeps buttons across reconnects: not a second one
        await cl.Message(id=made["ids"][0], content=made["text"], actions=[action]).send()


async def take_offer(action: cl.Action) -> bool:
    """The Resume offer clicked leaves the browser; True unless a run already goes on (a
    browser that reconnected while the thread loaded may show the offer again, and a second
    click must not start the run twice)."""
    # The browser may reconnect while the thread loads and miss this removal: the offer is
    # removed again on every reconnect (restore_and_offer).
    async with offer_lock():
        cl.user_session.set("srs_offer_taken", action.to_dict())
        await action.remove()
    running = cl.context.session.current_task
    return running is None or running.done()


@button_action("srs_resume", at_click=take_offer)
async def on_resume_action(action: cl.Action) -> None:
    run_key = action.payload.get("run") or cl.user_session.get("srs_active_run")
    await render_run(SrsRequest(user_input="(resumed)"), run_key, resume=True)


def system_name(description: str) -> str:
    """The system a description is about, for the thread's name: its first clause, without
    the usual lead-ins ("我们要做", "We want")."""
    text = " ".join(description.split())
    first = re.split(r"[：:。.;；!?！？\n]", text, maxsplit=1)[0].strip()
    first = re.sub(
        r"^(我们要做|我们想做|我们需要|我想做|请为|为|设计|做)|^(we want|we need|build|design)\s+",
        "",
        first,
        flags=re.IGNORECASE,
    ).strip()
    first = first.split("，")[0].split(",")[0].strip() or text
    return first[:40]


SRS_MODE = catalog_mode(
    "SRS",
    on_message=on_srs_message,
    on_resume=on_srs_resume,
    settings=settings_widgets,
    thread_title=lambda description: f"SRS · {system_name(description)}",
)
