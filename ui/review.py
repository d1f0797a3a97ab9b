"""Review mode in the browser: a document uploaded (or pasted, or the SRS just written), then
one Step per round ("审阅 · 第 2 轮") with a nested step per reviewer (its findings as tables)
and per revised section (its text streaming, then the diff), and a final message with the stop
reason, the improvement trajectory in words and as a chart, the disagreements, and downloads."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import chainlit as cl
import plotly.graph_objects as go
from chainlit.input_widget import Slider, Switch

from agents.review import ReviewRequest, ReviewResult, pending_review, run_review, saved_review
from agents.review.documents import document_too_large, load_document
from agents.review.events import (
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
from agents.review.models import (
    BlueTeamReview,
    ClientReview,
    JudgeReview,
    RedTeamReview,
    ReviewRound,
    SectionRevision,
)
from agents.review.partial import incomplete_json, incomplete_markdown, revised_through
from agents.review.tracking import issue_ledger
from agents.review.trajectory import counts_per_round
from agents.srs.documents import ReferenceDocumentError
from reqstudio.document_model import parse_markdown
from reqstudio.errors import describe_failure
from reqstudio.persistence import open_checkpointer
from reqstudio.usage import UsageTracker
from ui.modes import ModeSpec, catalog_texts
from ui.session import (
    diff_block,
    open_top_level_step,
    persist_thread_state,
    runtime,
    top_level_message,
)
from ui.texts import Catalog, lang

log = logging.getLogger("reqstudio.review")

MIN_PASTED_CHARS = 30
ASK_TIMEOUT = 1800

tr = Catalog("review")

ACCEPT = {
    "text/markdown": [".md", ".markdown"],
    "text/plain": [".txt", ".md"],
    "application/pdf": [".pdf"],
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": [".docx"],
}
COLOURS = {"high": "#d62728", "medium": "#ff7f0e", "low": "#2ca02c"}


def cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "/") or " "


def priority_name(priority: str) -> str:
    return tr.get(f"priority.{priority}", priority)


def table(columns: list[str], rows: list[list[Any]], extra_head: list[str] = ()) -> str:
    """A markdown table under the named columns (`review.column.*`), or "(none)"."""
    head = [tr(f"column.{c}") for c in columns] + list(extra_head)
    if not rows:
        return tr("none_found")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)




def field_heading(key: str) -> str:
    """The seed's field name read in the user's language; the key stays in small print."""
    return f"**{tr('field.' + key)}** `{key}`\n\n"


def section_label(agent_id: str, titles: dict[str, str]) -> str:
    return f"{agent_id} {titles.get(agent_id, '')}".strip()


def reviewer_output(review: Any, titles: dict[str, str]) -> str:
    """A reviewer's findings as tables, in the seed's fields."""
    parts: list[str] = []
    if isinstance(review, RedTeamReview):
        parts.append(
            table(
                ["section", "category", "issue", "expected", "priority"],
                [
                    [
                        section_label(i.agent_id, titles),
                        i.category,
                        i.issue,
                        i.expected,
                        priority_name(i.priority),
                    ]
                    for i in review.improvements
                ],
            )
        )
    elif isinstance(review, BlueTeamReview):
        parts.append(field_heading("keep_as_is") + table(
            ["section", "aspect", "reason"],
            [[section_label(k.agent_id, titles), k.aspect, k.reason] for k in review.keep_as_is],
        ))  # fmt: skip
        parts.append(field_heading("enhancement_suggestions") + table(
            ["section", "aspect", "suggestion"],
            [[section_label(s.agent_id, titles), s.aspect, s.suggestion]
             for s in review.enhancement_suggestions],
        ))  # fmt: skip
    elif isinstance(review, ClientReview):
        parts.append(field_heading("business_gaps") + table(
            ["aspect", "gap", "impact", "required_info"],
            [[g.aspect, g.gap, g.impact, g.required_info] for g in review.business_gaps],
        ))  # fmt: skip
        for name, items in (
            ("market_concerns", review.market_concerns),
            ("feasibility_concerns", review.feasibility_concerns),
        ):
            if items:
                parts.append(field_heading(name) + "\n".join(f"- {cell(i)}" for i in items))
    elif isinstance(review, JudgeReview):
        parts.append(field_heading("prioritized_improvements") + table(
            ["number", "section", "task", "rationale"],
            [[p.priority, section_label(p.agent_id, titles), p.task, p.rationale]
             for p in review.prioritized_improvements],
        ))  # fmt: skip
        parts.append(disagreement_tables(review, titles))
    if review.score is not None:
        parts.append(tr("legacy_score", score=review.score))
    return "\n\n".join(parts)


def disagreement_tables(judge: JudgeReview, titles: dict[str, str]) -> str:
    """The judge's conflicting_views (red and blue side by side, and the ruling) and
    consensus_issues."""
    conflicts = table(
        ["section", "disputed", "red_team", "blue_team", "ruling"],
        [
            [section_label(c.agent_id, titles), c.aspect, c.red_team, c.blue_team, c.ruling]
            for c in judge.conflicting_views
        ],
    )
    consensus = table(
        ["section", "consensus_issue", "raised_by"],
        [
            [section_label(c.agent_id, titles), c.issue, ", ".join(c.raised_by)]
            for c in judge.consensus_issues
        ],
    )
    return (
        f"{field_heading('conflicting_views')}{conflicts}\n\n"
        f"{field_heading('consensus_issues')}{consensus}"
    )


def status_name(status: str) -> str:
    return tr(f"status_{status}")


def round_issue_table(
    record: ReviewRound, earlier: list[ReviewRound], titles: dict[str, str]
) -> str:
    """This round's issues with their ids and statuses (the earlier ones resolved this round
    included), the checks of the last revision, the judge's overrulings and the notes."""
    ledger = issue_ledger([*earlier, record])
    rows = []
    for entry in record.issue_statuses:
        tracked = ledger.get(entry.issue_id)
        if tracked is None:
            continue
        rows.append(
            [entry.issue_id, section_label(tracked.agent_id, titles), tracked.issue,
             priority_name(tracked.priority), status_name(entry.status)]
        )  # fmt: skip
    parts = []
    if rows:
        parts.append(tr("issues_heading") + "\n\n" + table(
            ["id", "section", "issue", "priority", "status"],
            rows,
        ))  # fmt: skip
    if record.checks:
        verdict = {True: tr("check_holds"), False: tr("check_broken"), None: tr("check_unanswered")}
        parts.append(tr("checks_heading") + "\n\n" + table(
            ["check", "section", "text", "issue", "result", "note"],
            [[c.check_id, section_label(c.agent_id, titles), f"{c.kind}: {c.text}",
              c.issue_id or "", verdict[c.holds], c.note] for c in record.checks],
        ))  # fmt: skip
    parts += [
        tr("overruled", issue=o.issue_id, aspect=o.aspect, ruling=o.ruling)
        for o in record.overruled
    ]
    parts += [tr("tracking_note", note=note) for note in record.tracking_notes]
    return "\n\n".join(parts)


def issues_across_rounds(rounds: list[ReviewRound], titles: dict[str, str]) -> str:
    """Every issue of the run: id, section, issue, priority, its status in each round."""
    ledger = issue_ledger(rounds)
    if not ledger:
        return ""
    numbers = [r.round for r in rounds]
    rows = [
        [t.id, section_label(t.agent_id, titles), t.issue, priority_name(t.priority)]
        + [status_name(t.status_by_round[str(n)]) if str(n) in t.status_by_round else "·"
           for n in numbers]
        for t in ledger.values()
    ]  # fmt: skip
    head = ["id", "section", "issue", "priority"]
    rounds = [tr("column.round", round=n) for n in numbers]
    return tr("issues_all") + "\n\n" + table(head, rows, extra_head=rounds)


def section_diff(revision: SectionRevision) -> str:
    if revision.failed:
        return tr("author_failed", reason=revision.failed)
    if revision.rejected:
        return tr("author_rejected", reason=revision.rejected)
    if not revision.changed:
        return tr("unchanged")
    return diff_block(revision.agent_id, revision.before.strip("\n"), revision.after.strip("\n"))


def decision_text(record_or_decision: Any, titles: dict[str, str]) -> str:
    decision = record_or_decision
    if decision.action == "iterate":
        return tr(
            "iterate", sections=", ".join(section_label(a, titles) for a in decision.focus_on)
        )
    text = tr("stop", reason=tr(decision.reason))
    return f"{text} — {decision.detail}" if decision.detail else text


def round_details(record: ReviewRound, titles: dict[str, str]) -> str:
    """The round table's rows for what the decision does not say: each revision's outcome
    (with why it failed or was rejected) and the issues that name no section."""
    parts = []
    if record.revisions:
        parts.append(tr("revisions_heading") + "\n\n" + table(
            ["section", "outcome", "cause"],
            [[section_label(r.agent_id, titles), f"{tr('outcome_' + r.outcome)} `{r.outcome}`",
              r.failed or r.rejected] for r in record.revisions],
        ))  # fmt: skip
    if record.document_wide:
        parts.append(tr("document_wide_heading") + "\n\n" + table(
            ["named_section", "issue", "expected", "priority"],
            [[i.agent_id, i.issue, i.expected, priority_name(i.priority)]
             for i in record.document_wide],
        ))  # fmt: skip
    return "\n\n".join(parts)


UNCHECKED_STOPS = {"reviewer_failed", "unplaced_issues", "no_new_high_priority"}


def final_text(result: ReviewResult) -> str:
    """The closing summary. ✅ only for a run every reviewer took part in that ended by one of
    the seed's rules; a failed reviewer anywhere, or a stop that is no verdict, gets ⚠️."""
    values = {
        "reason": tr(result.stop_reason or "max_rounds"),
        "trajectory": result.trajectory_text(lang()),
        "rounds": len(result.rounds),
        "revised": sum(1 for r in result.rounds for v in r.revisions if v.changed),
        "tokens": result.usage.get("total_tokens", 0),
        "seconds": result.seconds,
    }
    failures = result.failed_reviewers
    names = "; ".join(failures) or result.stop_detail
    note = tr("failed_reviewers", names=names) if names else ""
    if result.stop_reason in UNCHECKED_STOPS:
        return tr("final_unchecked", failures=note, **values)
    if failures:
        return tr("final_partial", failures=note, **values)
    return tr("final", **values)


def trajectory_figure(rounds: list[ReviewRound]) -> go.Figure:
    data = counts_per_round(rounds)
    figure = go.Figure(
        [
            go.Bar(
                name=priority_name(p),
                x=[f"{r}" for r in data["round"]],
                y=data[p],
                marker_color=COLOURS[p],
            )
            for p in ("high", "medium", "low")
        ]
    )
    figure.update_layout(
        barmode="stack",
        title=tr("chart_title"),
        xaxis_title=tr("chart_round"),
        yaxis_title=tr("chart_count"),
        yaxis={"dtick": 1, "rangemode": "tozero"},
        height=320,
        margin={"l": 40, "r": 20, "t": 50, "b": 40},
    )
    return figure


class RoundView:
    """One round on screen: its step, a nested step per reviewer and per revised section."""

    def __init__(self, number: int, titles: dict[str, str]):
        self.number = number
        self.titles = titles
        self.step: cl.Step | None = None
        self.reviewers: dict[str, cl.Step] = {}
        self.authors: dict[str, cl.Step] = {}

    async def open(self) -> None:
        self.step = await open_top_level_step(tr("step_round", round=self.number), "run")
        self.step.output = tr("reviewing")
        await self.step.update()
        for reviewer in ("red_team", "blue_team", "client", "judge"):
            child = cl.Step(
                name=tr(reviewer), type="tool", parent_id=self.step.id, default_open=False
            )
            child.output = tr("reviewing") if reviewer != "judge" else tr("waiting_judge")
            await child.send()
            self.reviewers[reviewer] = child

    async def reviewer_done(self, reviewer: str, output: str, error: bool = False) -> None:
        child = self.reviewers[reviewer]
        child.output = output
        child.is_error = error
        await child.update()

    async def author_started(self, agent_id: str, title: str) -> None:
        child = cl.Step(
            name=tr("step_author", title=title), type="llm", parent_id=self.step.id,
            default_open=False,
        )  # fmt: skip
        await child.send()
        self.authors[agent_id] = child

    async def close(self, output: str | None = None, error: bool = False) -> None:
        if self.step is None:
            return
        for child in self.reviewers.values():
            if child.output in (tr("reviewing"), tr("waiting_judge")):
                child.output = tr("stopped") if error else tr("none_found")
                await child.update()
        if output is not None:
            self.step.output = output
        self.step.is_error = error
        await self.step.update()


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
        too_large = document_too_large(document, runtime().factory(), name or "document")
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
        sequence = int(cl.user_session.get("review_run_seq") or 0) + 1
        cl.user_session.set("review_run_seq", sequence)
        run_key = f"{cl.context.session.thread_id}:{thread_suffix}:{sequence}"
        cl.user_session.set("review_active_run", run_key)
        await persist_thread_state()
    else:
        run_key = resume_key
    tracker = UsageTracker()
    titles = {s.id: s.title for s in parse_markdown(document).sections}
    view: RoundView | None = None
    finished: list[ReviewRound] = []  # the rounds so far, for the issues' statuses
    edits: dict[str, str] | None = None
    resume_now = resume_key is not None
    try:
        async with open_checkpointer(runtime().settings) as saver:
            if resume_now:
                saved = await saved_review(saver, run_key)
                titles = {s.id: s.title for s in saved.document.sections} if saved else {}
                finished = list(saved.rounds) if saved else []
            while True:
                outcome: Any = None
                async for event in run_review(
                    None if resume_now else request,
                    runtime().factory(),
                    tracker=tracker,
                    checkpointer=saver,
                    thread_id=run_key,
                    resume=resume_now,
                    edits=edits,
                ):
                    if isinstance(event, RoundStarted):
                        view = RoundView(event.round, titles)
                        await view.open()
                    elif isinstance(event, ReviewerFinished) and view is not None:
                        await view.reviewer_done(
                            event.reviewer, reviewer_output(event.review, titles)
                        )
                    elif isinstance(event, ReviewerFailed) and view is not None:
                        note = tr("unreadable", reviewer=tr(event.reviewer), reason=event.reason)
                        await view.reviewer_done(event.reviewer, note, error=True)
                    elif isinstance(event, DecisionMade) and view is not None:
                        counts = {
                            p: sum(1 for i in event.decision.improvements if i.priority == p)
                            for p in ("high", "medium", "low")
                        }
                        summary = tr(
                            "round_summary",
                            total=len(event.decision.improvements),
                            decision=decision_text(event.decision, titles),
                            **counts,
                        )
                        if event.record is not None:
                            tracked = round_issue_table(event.record, finished, titles)
                            summary = f"{summary}\n\n{tracked}".rstrip()
                        view.step.output = summary
                        await view.step.update()
                    elif isinstance(event, AuthorStarted) and view is not None:
                        await view.author_started(event.agent_id, event.title)
                    elif isinstance(event, AuthorToken) and view is not None:
                        await view.authors[event.agent_id].stream_token(event.text)
                    elif isinstance(event, AuthorReset) and view is not None:
                        view.authors[event.agent_id].output = ""
                        await view.authors[event.agent_id].update()
                    elif isinstance(event, SectionRevised) and view is not None:
                        child = view.authors[event.revision.agent_id]
                        child.output = section_diff(event.revision)
                        child.is_error = event.revision.outcome in ("failed", "rejected")
                        await child.update()
                    elif isinstance(event, RoundFinished):
                        finished.append(event.record)
                        titles.update({s.id: s.title for s in event.document.sections})
                        if view is not None:
                            details = round_details(event.record, titles)
                            await view.close(
                                f"{view.step.output}\n\n{details}" if details else None
                            )
                    elif isinstance(event, Paused | RunFinished | RunFailed):
                        outcome = event
                if isinstance(outcome, Paused):
                    edits = await ask_for_edits(outcome)
                    resume_now = True
                    continue
                if isinstance(outcome, RunFinished):
                    await show_result(outcome.result)
                    return outcome.result
                if isinstance(outcome, RunFailed):
                    reason = outcome.message_zh if lang() == "zh" else outcome.message
                    note = tr("failed", reason=reason)
                    if view is not None:
                        await view.close(note, error=True)
                    await show_partial(outcome.partial, note, run_key, reason)
                return None
    except asyncio.CancelledError:
        if view is not None:
            await view.close(tr("stopped"), error=True)
        stopped = top_level_message(tr("stopped"))
        stopped.actions = [resume_action(run_key)]
        await stopped.send()
        raise
    except Exception as error:  # keep the app running; finished rounds are in the checkpoint
        log.exception("review failed")
        note = tr("failed", reason=describe_failure(error, lang()))
        if view is not None:
            await view.close(note, error=True)
        await top_level_message(note).send()
        return None


async def ask_for_edits(paused: Paused) -> dict[str, str]:
    """ "Pause after each round": continue at once, or edit sections first."""
    edits: dict[str, str] = {}
    document = paused.document
    while True:
        answer = await cl.AskActionMessage(
            content=tr("paused", round=paused.round),
            actions=[
                cl.Action(name="continue", payload={"a": "continue"}, label=tr("continue")),
                cl.Action(name="edit", payload={"a": "edit"}, label=tr("edit")),
            ],
            timeout=ASK_TIMEOUT,
        ).send()
        if (answer or {}).get("payload", {}).get("a") != "edit":
            return edits
        picked = await cl.AskActionMessage(
            content=tr("which_section"),
            actions=[
                cl.Action(name=s.id, payload={"id": s.id}, label=f"{s.id} {s.title}"[:60])
                for s in document.sections[:20]
            ],
            timeout=ASK_TIMEOUT,
        ).send()
        agent_id = (picked or {}).get("payload", {}).get("id")
        if not agent_id:
            return edits
        section = document.section(agent_id)
        reply = await cl.AskUserMessage(
            content=tr("new_text", title=section.title, content=section.content.strip()[:1500]),
            timeout=ASK_TIMEOUT,
        ).send()
        text = (reply or {}).get("output", "")
        if text.strip():
            edits[agent_id] = text
            document = document.with_content(agent_id, text)
            await cl.Message(content=tr("edit_noted", title=section.title)).send()


def download_contents(result: ReviewResult) -> dict[str, bytes]:
    """The finished review's downloads: the improved document and every review."""
    return {
        "improved.md": result.improved_markdown.encode(),
        "reviews.json": json.dumps(result.reviews_json(), ensure_ascii=False, indent=2).encode(),
    }


def partial_download_contents(partial: ReviewResult, reason: str) -> dict[str, bytes]:
    """A failed review's downloads: the last finished version marked incomplete on its first
    line, and the reviews so far marked incomplete (as the CLI writes them)."""
    data = incomplete_json(partial, reason)
    return {
        "improved-partial.md": incomplete_markdown(partial, reason, lang()).encode(),
        "improved-partial-reviews.json": json.dumps(data, ensure_ascii=False, indent=2).encode(),
    }


def files(contents: dict[str, bytes]) -> list[cl.File]:
    return [
        cl.File(
            name=name,
            content=content,
            mime="application/json" if name.endswith(".json") else "text/markdown",
        )
        for name, content in contents.items()
    ]


def improved_document_text(result: ReviewResult) -> str:
    """The improved document as a message: whole when the review changed it; when it did not,
    one line saying so (the same text again would only fill the chat)."""
    if result.improved_markdown == result.original:
        return tr("no_change", rounds=len(result.rounds))
    return f"**{tr('improved_title')}**\n\n{result.improved_markdown}"


def partial_text(partial: ReviewResult) -> str:
    revised = revised_through(partial)
    version = tr("partial_revised", round=revised) if revised else tr("partial_unrevised")
    return tr("partial_kept", version=version, rounds=len(partial.rounds))


async def show_result(result: ReviewResult) -> None:
    titles = {s.id: s.title for s in result.document.sections}
    await top_level_message(improved_document_text(result)).send()
    judged = [r for r in result.rounds if r.judge is not None]
    parts = [final_text(result)]
    if note := result.best_version_note(lang()):
        parts.append(f"⚠️ {note}")
    if issues := issues_across_rounds(result.rounds, titles):
        parts.append(issues)
    trajectory = json.dumps(result.improvement_trajectory, ensure_ascii=False, indent=1)
    parts.append(f"{field_heading('improvement_trajectory')}```json\n{trajectory}\n```")
    if judged:
        parts.append(tr("disagreements"))
        for record in judged:
            parts.append(f"**{tr('step_round', round=record.round)}**")
            parts.append(disagreement_tables(record.judge, titles))
    summary = top_level_message("\n\n".join(parts))
    summary.elements = [
        cl.Plotly(name="trajectory", figure=trajectory_figure(result.rounds), display="inline"),
        *files(download_contents(result)),
    ]
    await summary.send()
    await persist_thread_state()


async def show_partial(partial: Any, note: str, run_key: str, reason: str = "") -> None:
    message = top_level_message(note)
    if isinstance(partial, ReviewResult) and partial.rounds:
        message.content = f"{note}\n\n{partial_text(partial)}"
        message.elements = files(partial_download_contents(partial, reason or note))
    message.actions = [resume_action(run_key)]
    await message.send()


def resume_action(run_key: str) -> cl.Action:
    return cl.Action(name="review_resume", payload={"run": run_key}, label=tr("resume"))


@cl.action_callback("review_resume")
async def on_resume_action(action: cl.Action) -> None:
    await action.remove()
    run_key = action.payload.get("run") or cl.user_session.get("review_active_run")
    if run_key:
        await render_review("", "", resume_key=run_key)


# (browser session, run) pairs already offered: restoring a thread reconnects the browser,
# which runs on_chat_resume a second time.
_OFFERED: set[tuple[str, str]] = set()


async def on_review_resume(thread: dict) -> None:
    await cl.ChatSettings(settings_widgets()).send()
    # Chainlit sends the stored thread after this handler returns; a task's message comes later.
    asyncio.get_running_loop().create_task(offer_resume())


async def offer_resume() -> None:
    run_key = cl.user_session.get("review_active_run")
    offer_key = (cl.context.session.id, str(run_key))
    if not run_key or offer_key in _OFFERED:
        return
    _OFFERED.add(offer_key)
    async with open_checkpointer(runtime().settings) as saver:
        pending = await pending_review(saver, run_key)
    if pending:
        await cl.Message(content=tr("resume_offer"), actions=[resume_action(run_key)]).send()


# --- the conversation ----------------------------------------------------------------------


def settings_widgets() -> list:
    settings = runtime().settings
    return [
        Slider(
            id="review_max_rounds",
            label=tr("settings_rounds"),
            initial=settings.review_max_rounds,
            min=1,
            max=10,
            step=1,
        ),
        Switch(
            id="review_pause",
            label=tr("settings_pause"),
            initial=settings.review_pause_after_round,
        ),
    ]


async def on_review_start() -> None:
    await cl.ChatSettings(settings_widgets()).send()
    await cl.Message(content=tr("intro")).send()


async def read_document(message: cl.Message) -> tuple[str, str] | None:
    """(name, text) of the attached document or the pasted text; refusals are reported."""
    max_mb = runtime().settings.reference_max_mb
    for element in message.elements or []:
        path = getattr(element, "path", None)
        if not path:
            continue
        try:
            # pypdf / python-docx / charset detection are CPU-bound: off the event loop
            loaded = await asyncio.to_thread(load_document, Path(path), element.name, max_mb=max_mb)
        except ReferenceDocumentError as error:
            await cl.Message(content=f"⚠️ {error.message(lang())}").send()
            return None
        return loaded.name, loaded.text
    text = (message.content or "").strip()
    if len(text) >= MIN_PASTED_CHARS:
        return (text.splitlines()[0].lstrip("# ").strip()[:60] or "document"), text
    await cl.Message(content=tr("need_document", chars=MIN_PASTED_CHARS)).send()
    return None


async def on_review_message(message: cl.Message) -> None:
    found = await read_document(message)
    if found is None:
        return
    name, text = found
    sections = len(parse_markdown(text).sections)
    await cl.Message(
        content=tr("document_ok", name=name, chars=len(text), sections=sections)
    ).send()
    await persist_thread_state()
    await render_review(text, name)


async def review_generated_srs(srs_markdown: str) -> str | None:
    """SRS mode's "审阅并改进": review the SRS just written in this thread; the improved SRS,
    or None if the review did not finish."""
    result = await render_review(srs_markdown, "srs.md", thread_suffix="srs-review")
    if result is None:
        return None
    await cl.Message(content=tr("srs_reviewed")).send()
    return result.improved_markdown


def review_srs_label() -> str:
    return tr("review_srs")


REVIEW_MODE = ModeSpec(
    id="Review",
    **catalog_texts("review"),
    on_message=on_review_message,
    on_start=on_review_start,
    on_resume=on_review_resume,
)
