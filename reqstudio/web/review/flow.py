"""Review mode's run in the browser: the review loop's events drawn round by round, the pause
after a round (continue, or edit a section first), and how a run ends: finished, failed or
stopped (finished rounds stay in the checkpoint, to resume)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import chainlit as cl

from reqstudio.document_model import parse_markdown
from reqstudio.errors import describe_failure, remedy_for
from reqstudio.events import BaseEvent
from reqstudio.modes.review import ReviewRequest, ReviewResult, run_review, saved_review
from reqstudio.modes.review.documents import document_too_large
from reqstudio.modes.review.events import (
    AuthorReset,
    AuthorStarted,
    AuthorToken,
    DecisionMade,
    Paused,
    ReviewerFailed,
    ReviewerFinished,
    RoundFinished,
    RoundStarted,
    RunFailed,
    RunFinished,
    SectionRevised,
)
from reqstudio.modes.review.models import ReviewRound
from reqstudio.modes.review.user_decision import (
    ReviewDecision,
    ReviewDecisionError,
    check_decision,
    parse_review_commands,
)
from reqstudio.persistence import open_checkpointer
from reqstudio.usage import UsageTracker
from reqstudio.web.live import LiveRun, Views
from reqstudio.web.resume_advice import remember_ending, resume_advice
from reqstudio.web.review.results import resume_action, show_partial, show_result
from reqstudio.web.review.tables import (
    decision_text,
    failure_note,
    priority_name,
    reviewer_output,
    round_details,
    round_issue_table,
    section_button,
    section_diff,
    section_label,
    table,
)
from reqstudio.web.review.view import RoundView
from reqstudio.web.session import LocalizedAskAction, runtime, start_run, top_level_message
from reqstudio.web.settings_panel import thread_factory
from reqstudio.web.texts import Catalog, counted, lang
from reqstudio.web.waits import WaitLines

log = logging.getLogger("reqstudio.review")

ASK_TIMEOUT = 1800

tr = Catalog("review")


class ReviewViews(Views):
    """A review run's rounds in the browser: a step per round with a step per reviewer and
    per author in it (`RoundView`), the round's summary and its issues' table."""

    def __init__(self, titles: dict[str, str]):
        self.titles = titles  # section id -> title, as the rounds revise them
        self.finished: list[ReviewRound] = []  # the rounds so far, for the issues' statuses
        self.round: RoundView | None = None

    @property
    def open_round(self) -> RoundView | None:
        return self.round if self.round is not None and not self.round.closed else None

    async def show(self, event: BaseEvent) -> None:
        view, titles = self.round, self.titles
        if isinstance(event, RoundStarted):
            self.round = RoundView(event.round, titles)
            await self.round.open()
        elif isinstance(event, RoundFinished):
            self.finished.append(event.record)
            titles.update({s.id: s.title for s in event.document.sections})
            if view is not None:
                details = round_details(event.record, titles)
                await view.close(f"{view.step.output}\n\n{details}" if details else None)
        elif view is not None:
            await self.in_round(view, event)

    async def in_round(self, view: RoundView, event: BaseEvent) -> None:
        titles = self.titles
        if isinstance(event, ReviewerFinished):
            await view.reviewer_done(event.reviewer, reviewer_output(event.review, titles))
        elif isinstance(event, ReviewerFailed):
            reason = event.text(lang())
            note = tr("unreadable", reviewer=tr(event.reviewer), reason=reason)
            await view.reviewer_done(event.reviewer, note, error=True)
        elif isinstance(event, DecisionMade):
            counts = {
                p: sum(1 for i in event.decision.improvements if i.priority == p)
                for p in ("high", "medium", "low")
            }
            summary = tr(
                "round_summary",
                total=counted(len(event.decision.improvements), "issue"),
                decision=decision_text(event.decision, titles),
                **counts,
            )
            if event.record is not None:
                tracked = round_issue_table(event.record, self.finished, titles)
                summary = f"{summary}\n\n{tracked}".rstrip()
            view.step.output = summary
            await view.step.update()
        elif isinstance(event, AuthorStarted):
            await view.author_started(event.agent_id, event.title)
        elif isinstance(event, AuthorToken):
            await view.authors[event.agent_id].stream_token(event.text)
        elif isinstance(event, AuthorReset):
            view.authors[event.agent_id].output = ""
            await view.authors[event.agent_id].update()
        elif isinstance(event, SectionRevised):
            await view.author_done(
                event.revision.agent_id,
                section_diff(event.revision),
                failed=event.revision.outcome in ("failed", "rejected"),
            )


async def render_review(
    document: str,
    name: str,
    *,
    thread_suffix: str = "review",
    resume_key: str | None = None,
) -> ReviewResult | None:
    """Run the review loop on `document` and show it (or, with `resume_key`, continue that saved
    run from its last finished round); the result, or None if it did not finish."""
    if resume_key is None:
        too_large = document_too_large(document, thread_factory(), name or "document")
        if too_large is not None:  # refused before the first call, in one line
            await top_level_message(f"⚠️ {too_large.message(lang())}").send()
            return None
    settings = runtime().settings
    chosen = cl.user_session.get("chat_settings") or {}
    request = ReviewRequest(
        document=document or "(resumed)",
        title=Path(name).stem,
        max_rounds=int(chosen.get("review_max_rounds", settings.review_max_rounds)),
        pause_after_round=bool(chosen.get("review_pause", settings.review_pause_after_round)),
    )
    if resume_key is None:
        run_key = await start_run("review", thread_suffix)
    else:
        run_key = resume_key
    tracker = UsageTracker()
    views = ReviewViews({s.id: s.title for s in parse_markdown(document).sections})
    live = LiveRun(views)
    decision: ReviewDecision | None = None
    paused: Paused | None = None
    resume_now = resume_key is not None

    def current_round() -> cl.Step | None:
        return views.open_round.step if views.open_round is not None else None

    def reviewer_step(label: str) -> cl.Step | None:
        """A reviewer's call waits in that reviewer's own step, while it runs."""
        view = views.open_round
        return view.running_reviewer(label) if view is not None else None

    waits = WaitLines(where=current_round, place=reviewer_step)
    try:
        async with open_checkpointer(runtime().settings) as saver, waits:
            if resume_now:
                saved = await saved_review(saver, run_key)
                views.titles = {s.id: s.title for s in saved.document.sections} if saved else {}
                views.finished = list(saved.rounds) if saved else []
            while True:
                events = run_review(
                    None if resume_now else request,
                    thread_factory(),
                    tracker=tracker,
                    checkpointer=saver,
                    thread_id=run_key,
                    resume=resume_now,
                    decision=decision,
                )
                try:
                    first = await anext(events)
                except ReviewDecisionError as error:  # nothing applied: the same pause again
                    if paused is None:
                        raise
                    decision = await ask_for_decision(paused, error.message(lang()))
                    continue
                live.begin()
                async for event in _prepend(first, events):
                    await live.show(event)
                outcome = live.paused or live.finished or live.failed
                if isinstance(outcome, Paused):
                    paused = outcome
                if isinstance(outcome, Paused):
                    decision = await ask_for_decision(outcome)
                    resume_now = True
                    continue
                if isinstance(outcome, RunFinished):
                    await show_result(outcome.result)
                    return outcome.result
                if isinstance(outcome, RunFailed):
                    reason = outcome.text(lang())
                    advice = resume_advice(outcome.remedy)
                    note = failure_note(reason, outcome.partial, advice.text)
                    if views.round is not None:
                        await views.round.close(note, error=True)
                    await show_partial(outcome.partial, note, run_key, reason, advice.offer)
                    await remember_ending(run_key, outcome.remedy, advice.offer)
                return None
    except asyncio.CancelledError:
        said = tr("stopped") if views.finished else tr("stopped_none")
        if views.round is not None:
            await views.round.close(said, error=True, outcome="stopped")
        stopped = top_level_message(said)
        stopped.actions = [resume_action(run_key)]
        await stopped.send()
        raise
    except Exception as error:  # keep the app running; finished rounds are in the checkpoint
        log.exception("review failed")
        remedy = remedy_for(error)
        advice = resume_advice(remedy)
        note = failure_note(
            describe_failure(error, lang()), None, advice.text, rounds=len(views.finished)
        )
        if views.round is not None:
            await views.round.close(note, error=True)
        failed = top_level_message(note)
        failed.actions = [resume_action(run_key)] if advice.offer else []
        await failed.send()
        await remember_ending(run_key, remedy, advice.offer)
        return None


async def _prepend(first: Any, rest: Any) -> Any:
    yield first
    async for item in rest:
        yield item


def findings_table(paused: Paused, titles: dict[str, str]) -> str:
    """The round's findings the authors are about to be asked for, with their issue ids."""
    focus = set(paused.focus_on)
    rows = [
        [f.issue_id or "", section_label(f.agent_id, titles), f.issue, priority_name(f.priority),
         "✓" if f.agent_id in focus else ""]
        for f in paused.findings
    ]  # fmt: skip
    return table(["id", "section", "issue", "priority", "in_focus"], rows)


async def ask_for_decision(paused: Paused, refused: str = "") -> ReviewDecision:
    """ "Pause after each round", before the authors revise: continue at once, or edit
    sections, drop findings or add some first."""
    decision = ReviewDecision()
    document = paused.document
    titles = {s.id: s.title for s in document.sections}
    while True:
        content = f"{tr('paused', round=paused.round)}\n\n{findings_table(paused, titles)}"
        if refused:
            content = f"⚠️ {refused}\n\n{content}"
            refused = ""
        question = LocalizedAskAction(  # the findings table stays once answered
            content=content,
            actions=[
                cl.Action(name="continue", payload={"a": "continue"}, label=tr("continue")),
                cl.Action(name="edit", payload={"a": "edit"}, label=tr("edit")),
                cl.Action(name="findings", payload={"a": "findings"}, label=tr("findings")),
            ],
            timeout=ASK_TIMEOUT,
        )
        question.parent_id = None  # below the round's step, not under the user's message
        answer = await question.send()
        chosen = (answer or {}).get("payload", {}).get("a")
        if chosen == "findings":
            ask = cl.AskUserMessage(content=tr("findings_prompt"), timeout=ASK_TIMEOUT)
            ask.parent_id = None
            reply = await ask.send()
            try:
                more = parse_review_commands((reply or {}).get("output", ""))
                decision = decision.model_copy(
                    update={"drop": [*decision.drop, *more.drop], "add": [*decision.add, *more.add]}
                )
                shown = ReviewRound(round=paused.round, improvements=paused.findings)
                check_decision(decision, shown, document)
            except ReviewDecisionError as error:
                refused = error.message(lang())
                decision = decision.model_copy(update={"drop": [], "add": []})
                continue
            await cl.Message(
                content=tr(
                    "findings_noted",
                    dropped=", ".join(decision.drop) or "—",
                    added=counted(len(decision.add), "finding"),
                )
            ).send()
            continue
        if chosen != "edit":
            return decision
        picked = await cl.AskActionMessage(
            content=tr("which_section"),
            actions=[
                cl.Action(name=s.id, payload={"id": s.id}, label=section_button(s.id, s.title))
                for s in document.sections[:20]
            ],
            timeout=ASK_TIMEOUT,
        ).send()
        agent_id = (picked or {}).get("payload", {}).get("id")
        if not agent_id:
            return decision
        section = document.section(agent_id)
        reply = await cl.AskUserMessage(
            content=tr("new_text", title=section.title, content=section.content.strip()[:1500]),
            timeout=ASK_TIMEOUT,
        ).send()
        text = (reply or {}).get("output", "")
        if text.strip():
            decision.edits[agent_id] = text
            document = document.with_content(agent_id, text)
            await cl.Message(content=tr("edit_noted", title=section.title)).send()
