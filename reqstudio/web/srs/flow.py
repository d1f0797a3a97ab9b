"""SRS mode's run in the browser: one collapsible Step per agent and round, the SRS streamed
into the final message with its downloads, and what a failure or a stop keeps."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import chainlit as cl

from reqstudio.errors import (
    DATABASE_UNAVAILABLE,
    describe_failure,
    describe_not_run,
    is_database_failure,
    remedy_for,
)
from reqstudio.events import BaseEvent
from reqstudio.export import DOCX_MEDIA_TYPE
from reqstudio.failures import FailureCode
from reqstudio.modes.srs import events
from reqstudio.modes.srs.decisions import DecisionError, HumanDecision
from reqstudio.modes.srs.engine import SrsRequest, run_srs
from reqstudio.modes.srs.outcome import SrsEnding, srs_outcome
from reqstudio.modes.srs.trace import CSV_NAME as TRACE_CSV
from reqstudio.persistence import open_checkpointer
from reqstudio.run_lease import RunBusy, run_lease
from reqstudio.usage import UsageTracker
from reqstudio.web.baselines import baseline_actions
from reqstudio.web.endings import ending_mark
from reqstudio.web.live import LiveRun, Look, Views
from reqstudio.web.rendering import word_copy
from reqstudio.web.reqif_files import REQIF_MEDIA_TYPE, reqif_copy
from reqstudio.web.requirements_check import RequirementsCheck, check_requirements, show_check
from reqstudio.web.resume_advice import remember_ending, resume_advice
from reqstudio.web.session import persist_thread_state, runtime
from reqstudio.web.settings_panel import thread_factory
from reqstudio.web.srs.pause import ask_for_decision, decision_text
from reqstudio.web.srs.tables import node_output, requirement_table
from reqstudio.web.srs.thread import evaluate_action, remove_taken_offer, review_action, thread_file
from reqstudio.web.texts import Catalog, counted, lang, sentences, usage_token_figure
from reqstudio.web.waits import WaitLines

log = logging.getLogger("reqstudio.srs")

tr = Catalog("srs")


def failure_text(event: events.RunFailed) -> str:
    """Why the run failed, in the user's language: its failure code through the catalogue
    (the engine's English where a failure came without one)."""
    return event.text(lang())


def interaction_log_dir() -> Path:
    return runtime().settings.data_dir / "srs-logs"


AGENT_ICONS = {
    "ReqParse": "file-search",
    "ReqExplore": "compass",
    "ReqClarify": "list-checks",
    "DocGenerate": "file-text",
}


class SrsViews(Views):
    """The SRS run in the browser: a step per agent and round (the running step shows the
    model's answer as it streams), the document streamed into the last message, and what a
    failure keeps."""

    def __init__(self, run_key: str, *, resume: bool):
        self.run_key = run_key
        self.resume = resume
        self.rounds_shown = 0  # the summary counts rounds as the steps are titled
        self.offer_removed = False
        self.steps_finished = 0  # in this sitting; a resumed run's earlier ones are saved

    async def remove_offer_once(self) -> None:
        if self.resume and not self.offer_removed:  # once, as the resumed run starts or pauses
            await remove_taken_offer()
            self.offer_removed = True

    def ending(self, key: SrsEnding, **values: object) -> str:
        """The failed / stopped line: "completed steps are saved" only when some are; its mark
        is the ending's outcome's (`reqstudio.modes.srs.outcome`), as the CLI's exit code is."""
        saved = self.resume or self.steps_finished
        text = tr(key if saved else f"{key}_nothing_saved", **values)
        return f"{closing_mark(key)} {text}"

    def look(self, event: BaseEvent) -> Look | None:
        if not isinstance(event, events.NodeStarted):
            return None
        looping = event.agent in ("ReqExplore", "ReqClarify")
        key = "step_name" if looping else "step_name_single"
        name = tr(key, agent=event.agent, round=event.round)
        return Look(name, "llm", AGENT_ICONS.get(event.agent))

    def into_step(self, event: BaseEvent) -> bool:
        return isinstance(event, events.NodeToken | events.NodeRestarted)

    def streams(self, event: BaseEvent) -> bool:
        return isinstance(event, events.DocumentToken | events.DocumentReset)

    def output(self, event: BaseEvent) -> str | None:
        return node_output(event) if isinstance(event, events.NodeFinished) else None

    async def show(self, event: BaseEvent) -> None:
        live = self.live
        if isinstance(event, events.Notice):
            text = event.text(lang())
            await cl.Message(content=f"ℹ️ {text}").send()
        elif isinstance(event, events.DecisionApplied):
            await cl.Message(content=decision_text(event)).send()
        elif isinstance(event, events.NodeStarted):
            if event.agent in ("ReqExplore", "ReqClarify"):
                self.rounds_shown = max(self.rounds_shown, event.round)
            if event.agent == "DocGenerate":
                live.new_result()  # the document sits below the steps
            await self.remove_offer_once()
        elif isinstance(event, events.NodeFinished):
            self.steps_finished += 1
        elif isinstance(event, events.DocumentContinued):
            log.info("DocGenerate hit the length limit; continued (%d)", event.count)
        elif isinstance(event, events.RunFinished):
            await finish_run(live.result, event.result, self.rounds_shown)
        elif isinstance(event, events.RunFailed):
            reason = failure_text(event)
            await live.close_step("failed", note=reason)
            if event.code == FailureCode.SRS_NOT_AN_SRS:
                live.result.content = ""  # what the model wrote is no SRS: not shown as one
            # what to change before resuming (the thread offers Resume when reopened)
            advice = resume_advice(event.remedy)  # type: ignore[arg-type]
            note = sentences(self.ending("failed", reason=reason), advice.text)
            if event.error_type == DATABASE_UNAVAILABLE:  # says itself what is saved
                note = f"{closing_mark('failed')} {reason}"
            await show_partial(live.result, event.partial, note)
            await remember_ending(self.run_key, event.remedy, advice.offer)


async def render_run(request: SrsRequest, run_key: str, *, resume: bool) -> None:
    tracker = UsageTracker()
    views = SrsViews(run_key, resume=resume)
    live = LiveRun(views)

    decision: HumanDecision | None = None
    paused: events.Paused | None = None
    try:
        while True:
            refused = ""
            try:
                # One executor per run across tabs and instances (reqstudio/run_lease.py).
                async with (
                    run_lease(runtime().settings, f"srs:{run_key}"),
                    open_checkpointer(runtime().settings) as saver,
                ):
                    live.begin()
                    async with WaitLines(where=lambda: live.step):
                        async for event in run_srs(
                            request,
                            thread_factory(),
                            tracker=tracker,
                            checkpointer=saver,
                            thread_id=run_key,
                            resume=resume,
                            log_dir=interaction_log_dir(),
                            decision=decision,
                        ):
                            await live.show(event)
                    waiting = live.paused
            except DecisionError as error:  # nothing applied: the same pause, asked again
                if paused is None:
                    raise
                refused = error.message(lang())
            else:
                if waiting is None:
                    return
                paused = waiting
                await views.remove_offer_once()
            # The lease is let go while the user decides: the run waits in the checkpoint.
            decision = await ask_for_decision(paused, refused)
            if decision is None:
                return
            resume = views.resume = True
    except RunBusy as busy:  # another tab or instance runs it: not started twice
        await cl.Message(content=f"⏳ {busy.message(lang())}").send()
    except asyncio.CancelledError:
        stopped = views.ending("stopped")
        await live.close_step("stopped", note=stopped)
        live.result.content = (live.result.content + "\n\n" + stopped).strip()
        await live.result.send()
        raise
    except Exception as exc:  # keep the app running; completed steps stay in the checkpoint
        log.exception("SRS run failed")
        await live.close_step("failed", note=describe_failure(exc, lang()))
        remedy = remedy_for(exc)
        advice = resume_advice(remedy)
        text = sentences(views.ending("failed", reason=describe_failure(exc, lang())), advice.text)
        if is_database_failure(exc):  # before any step ran: nothing changed
            text = f"{closing_mark('failed')} {describe_not_run(exc, lang())}"
        await cl.Message(content=text).send()
        await remember_ending(run_key, remedy, advice.offer)


async def show_partial(document: cl.Message, partial: events.SrsResult | None, note: str) -> None:
    body = document.content
    if partial is not None and partial.requirements and not body:
        body = requirement_table(partial.requirements)
    document.content = f"{body}\n\n{note}".strip()
    await document.send()


def closing_mark(ending: SrsEnding) -> str:
    """The mark of how a run ended, read from its outcome (`reqstudio.modes.srs.outcome`) as
    `reqstudio srs generate`'s exit code is."""
    return ending_mark(srs_outcome(ending))


def ablation_label(ablation: str) -> str:
    """An ablation as the user reads it (`none` is "the whole pipeline")."""
    return tr(f"ablation_{ablation.replace('-', '_')}")


def in_document(listed: int, check: RequirementsCheck | None) -> str:
    """The summary counts the requirement list; the requirements check counts what the
    document states (a small model may leave items out): when they differ, it says both."""
    if check is None or check.requirements == listed:
        return ""
    return tr("in_document", count=check.requirements)


async def finish_run(document: cl.Message, result: events.SrsResult, rounds_shown: int = 0) -> None:
    cl.user_session.set("srs_last_result", {"srs": result.srs_markdown, "message_id": document.id})
    # the document, then its traceability matrix (a table) in the reader's language
    final = result.final_markdown(lang())
    check = await check_requirements(final, request_sentences=result.request_sentences)
    summary = tr(
        "summary",
        rounds=counted(max(result.rounds, rounds_shown), "round"),
        items=counted(len(result.requirements), "requirement"),
        in_document=in_document(len(result.requirements), check),
        frozen=len(result.frozen_ids),
        removed=len(result.removed_ids),
        tokens=usage_token_figure(result.usage),
        seconds=result.seconds,
        ablation=ablation_label(result.ablation_used),
    )
    if result.continuations:
        summary += tr("continued", count=result.continuations)
    summary = f"{closing_mark('done')} {summary}"
    document.content = f"{final}\n\n---\n{summary}"
    log_json = json.dumps(
        {"logs": result.logs, "usage": result.usage}, ensure_ascii=False, indent=2
    )
    document.elements = [
        thread_file("srs.md", final.encode(), "text/markdown"),
        thread_file("srs-log.json", log_json.encode(), "application/json"),
    ]
    if result.traceability:
        trace = result.trace_csv(lang()).encode()
        document.elements.insert(1, thread_file(TRACE_CSV, trace, "text/csv"))
    after_word = 1
    if docx := await word_copy(final):
        document.elements.insert(1, thread_file("srs.docx", docx, DOCX_MEDIA_TYPE))
        after_word = 2
    if reqif := await reqif_copy(final, "srs"):
        document.elements.insert(after_word, thread_file("srs.reqif", reqif, REQIF_MEDIA_TYPE))
    document.actions = [review_action(document.id), *baseline_actions("srs.md", final)]
    if cl.user_session.get("srs_reference"):
        document.actions.append(evaluate_action(document.id))
    await document.send()
    await show_check(check)
    await persist_thread_state()
