"""SRS mode's buttons under a finished SRS: Review & improve (Review mode's loop on it), and
Evaluate against the reference SRS."""

from __future__ import annotations

import asyncio
import json

import chainlit as cl

from reqstudio.errors import describe_failure
from reqstudio.modes.srs.evaluation import evaluate_srs
from reqstudio.web.session import (
    button_action,
    finish_step,
    open_top_level_step,
    persist_thread_state,
)
from reqstudio.web.settings_panel import thread_factory
from reqstudio.web.srs.tables import evaluation_table
from reqstudio.web.srs.thread import evaluate_action, thread_file
from reqstudio.web.texts import Catalog, lang
from reqstudio.web.waits import WaitLines

tr = Catalog("srs")


@button_action("srs_review")
async def on_review(action: cl.Action) -> None:
    """Review mode's loop on the SRS just written, in this thread; Evaluate then scores the
    improved SRS, so the metrics before and after can be compared."""
    from reqstudio.web.review import review_generated_srs  # Review mode's adapter; imported on use

    current = (cl.user_session.get("srs_last_result") or {}).get("srs", "")
    if not current:
        return
    improved = await review_generated_srs(current)
    if improved is None:
        return
    offer = cl.Message(content=tr("evaluate"))
    if cl.user_session.get("srs_reference"):
        offer.actions = [evaluate_action(offer.id)]
        await offer.send()  # before the thread names it: a reopened thread shows its button
    cl.user_session.set(
        "srs_last_result", {"srs": improved, "srs_before_review": current, "message_id": offer.id}
    )
    await persist_thread_state()


@button_action("srs_evaluate")
async def evaluate_last_result(action: cl.Action | None = None) -> None:
    reference = (cl.user_session.get("srs_reference") or {}).get("text", "")
    candidate = (cl.user_session.get("srs_last_result") or {}).get("srs", "")
    if not reference or not candidate:
        return
    step = await open_top_level_step(tr("evaluating"), "llm", icon="gauge")
    try:
        async with WaitLines(where=lambda: step):
            result = await evaluate_srs(reference, candidate, thread_factory())
    except asyncio.CancelledError:
        await finish_step(step, "stopped")
        raise
    except Exception as exc:
        reason = describe_failure(exc, lang())
        await finish_step(step, "failed")  # the message below says why, once
        await cl.Message(content=tr("evaluation_failed", reason=reason)).send()
        return
    table = evaluation_table(result)
    # the step's title says how it ended and the message shows the table: said once, so a
    # reader (and a test looking for it) finds one, also while the step folds away
    await finish_step(step, "failed" if "error" in result else "done")
    # the seed's keys and values as they came: a download, not a block on the page
    data = json.dumps(result, ensure_ascii=False, indent=2).encode()
    message = cl.Message(content=table)
    message.elements = [thread_file("evaluation.json", data, "application/json")]
    await message.send()
