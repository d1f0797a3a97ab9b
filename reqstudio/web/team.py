"""Team mode in the browser: each delivered message as it happens, authored by its sender's
role and id; spawns with their briefs; refusals and introductions as visible events; a
picture of the society updated as the run goes; root's answer streamed, with statistics per
agent and the run's record for download. The stop button stops every agent; the record stays."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import chainlit as cl
from pydantic import ValidationError

from reqstudio.errors import describe_failure
from reqstudio.events import payload
from reqstudio.modes.team.events import (
    AgentFailed,
    AgentSpawned,
    AnswerToken,
    ContactAdded,
    Introduced,
    LimitReached,
    MessageDelivered,
    Refused,
    RoleCreated,
    RunFinished,
    TeamEvent,
)
from reqstudio.modes.team.outcome import team_outcome
from reqstudio.modes.team.protocol import ROOT_ID, USER_ID, InterfaceSpec, TaskBrief
from reqstudio.modes.team.runner import TeamConfig, TeamRun
from reqstudio.modes.team.society import AgentSociety
from reqstudio.modes.team.store import EventStore
from reqstudio.outcomes import Outcome
from reqstudio.persistence import record_target
from reqstudio.web.endings import with_mark
from reqstudio.web.live import LiveRun, Views
from reqstudio.web.modes import catalog_mode
from reqstudio.web.session import (
    persist_thread_state,
    runtime,
    top_level_message,
)
from reqstudio.web.settings_panel import thread_factory
from reqstudio.web.team_picture import LivePicture, society_figure
from reqstudio.web.texts import Catalog, counted, lang, token_figure
from reqstudio.web.waits import WaitLines

log = logging.getLogger("reqstudio.team")


tr = Catalog("team")


def end_text(done: RunFinished) -> str:
    """How the run ended, its mark read from the ending's outcome (`reqstudio.modes.team.outcome`), as
    `reqstudio team`'s exit code is."""
    return with_mark(team_outcome(done), tr(f"end.{done.reason}"))


def sign(message: cl.Message, name: str, icon: str) -> None:
    """Who a message is from, with an icon beside it: without one the browser asks for an
    avatar named after the author ("写作者 (agent-2)"), which Chainlit refuses with a 400."""
    message.author = name
    message.metadata = {**(message.metadata or {}), "icon": icon}


def role_name(society: AgentSociety, agent_id: str) -> str:
    """An agent's role as the user reads it: root's in the user's language, the others' as
    the agent that defined them named them."""
    return tr("root_role") if agent_id == ROOT_ID else society.role_name_of(agent_id)


def author(society: AgentSociety, agent_id: str) -> str:
    if agent_id == USER_ID:
        return tr("picture_user")
    return f"{role_name(society, agent_id)} ({agent_id})"


def payload_markdown(payload: dict[str, Any]) -> str:
    """A message's payload as labelled lines (`状态：完成`), not JSON: the protocol's fields
    and values in the user's language, a field the agents made up under its own name."""
    lines = []
    for key, value in payload.items():
        label = tr.get(f"payload.{key}", key)
        if isinstance(value, str):
            shown = tr.get(f"payload_value.{value}", value)
        elif isinstance(value, list):
            shown = "; ".join(str(v) for v in value)
        else:
            shown = json.dumps(value, ensure_ascii=False)
        lines.append(f"- **{label}**: {shown}")
    return "\n".join(lines)


BRIEF_FIELDS = (
    "objective",
    "constraints",
    "inputs",
    "outputs",
    "completion_criteria",
    "collaborators",
    "references",
    "priority",
    "skill",
)


def brief_markdown(brief: dict[str, Any] | None) -> str:
    """A Task Brief as markdown: one labelled block per field, lists as lists."""
    if not brief:
        return ""
    checked = TaskBrief.model_validate(brief).model_dump(exclude_none=True)
    blocks = []
    for name in BRIEF_FIELDS:
        value = checked.get(name)
        if not value:
            continue
        label = f"**{tr('brief.' + name)}**"
        if name == "collaborators":
            items = [
                f"- {c['agent_id']}: {c.get('role_description', '')} {c.get('collaboration_note', '')}"
                for c in value
            ]
            blocks.append(label + "\n" + "\n".join(items))
        elif isinstance(value, list):
            blocks.append(label + "\n" + "\n".join(f"- {v}" for v in value))
        else:
            blocks.append(f"{label}: {value}")
    return "\n\n".join(blocks)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def card_markdown(spec: dict[str, Any] | None, fallback_name: str = "") -> str:
    """An interface spec as the agent card it is: name and description, input and output
    modes, then one row per skill with its examples. Old flat specs show as cards too."""
    if not spec:
        return ""
    try:
        card = InterfaceSpec.model_validate(spec)
    except ValidationError:
        return f"```json\n{json.dumps(spec, ensure_ascii=False, indent=1)}\n```"
    lines = [tr("card_title", name=_cell(card.name or fallback_name or "?"))]
    if card.description:  # a blank line ends the quote: the modes are not part of it
        lines += [f"> {_cell(card.description)}", ""]
    inputs, outputs = ", ".join(card.default_input_modes), ", ".join(card.default_output_modes)
    lines.append(tr("card_modes", inputs=inputs, outputs=outputs))
    if (card.input_format, card.output_format) != (inputs, outputs):  # else the same line again
        lines.append(
            tr(
                "card_formats",
                input_format=_cell(card.input_format),
                output_format=_cell(card.output_format),
            )
        )
    rows = [
        f"| `{_cell(s.id)}` {_cell(s.name)} | {_cell(s.description)} | "
        f"{'<br>'.join(_cell(e) for e in s.examples)} | "
        f"{', '.join(s.input_modes or card.default_input_modes)} | "
        f"{', '.join(s.output_modes or card.default_output_modes)} |"
        for s in card.skills
    ]
    if rows:
        lines += ["", tr("card_header"), *rows]
    return "\n".join(lines)


def society_details(society: AgentSociety) -> str:
    """What the picture does not show at a glance, as text: who knows whom and how they got
    the contact (a table), who introduced whom (a list)."""
    lines = [tr("contacts_header")]
    for agent_id in society.agents:
        known = ", ".join(
            f"{tr('picture_user') if c.agent_id == USER_ID else c.agent_id} ({tr('how.' + c.how)}"
            f"{'' if c.introduced_by == 'society' else ' · ' + c.introduced_by})"
            for c in society.contacts(agent_id)
        )
        lines.append(f"| {agent_id} | {role_name(society, agent_id)} | {known} |")
    intros = [e for e in society.events if isinstance(e, Introduced)]
    if intros:
        lines += ["", f"_{tr('intros')}_"]
        lines += [f"- {intro_line(e)}" for e in intros]
    return "\n".join(lines)


def intro_line(event: Introduced) -> str:
    via = tr("via", via=event.forwarded_from) if event.forwarded_from else ""
    return tr("intro_line", **payload(event), via=via)  # introducer, target, requester


def stats_markdown(done: RunFinished) -> str:
    rows = [f"**{tr('stats_title')}**", "", tr("stats_header"), "|---|---|---|---|---|---|---|---|"]
    for s in done.agents:
        # calls that reported no tokens at all: a server that sends no usage (llama.cpp)
        known = bool(s.input_tokens or s.output_tokens or not s.model_calls)
        rows.append(
            f"| {s.agent_id} | {tr('root_role') if s.agent_id == ROOT_ID else s.role_name} | "
            f"{s.messages_sent} | {s.messages_received} | "
            f"{s.tool_calls} | {token_figure(s.input_tokens, known)} | "
            f"{token_figure(s.output_tokens, known)} | {s.seconds:.1f} |"
        )
    return "\n".join(rows)


class TeamViews(Views):
    """One run's events as Chainlit messages: who said what to whom, the society's live
    picture, root's answer, and the closing summary with the run's record."""

    def __init__(self, run: TeamRun):
        self.run = run
        self.society = run.society
        self.picture = LivePicture(run.society)
        self.pictured = False  # the final picture is shown
        self.answer: cl.Message | None = None
        self.answer_id: int | None = None  # the delivered message `answer` shows

    def speaker(self, label: str) -> str | None:
        """Whose model call a wait is (its label is `team <agent id>`), as messages name them."""
        agent_id = label.removeprefix("team ")
        return author(self.society, agent_id) if agent_id in self.society.agents else None

    async def note(self, content: str) -> None:
        message = top_level_message(content)
        sign(message, tr("society"), "users")
        await message.send()

    async def final_picture(self) -> None:
        """The live picture gives way to the run's last one, stored in the history with the
        thread (a reopened thread shows it once, as the run left it)."""
        if self.pictured:
            return
        self.pictured = True
        await self.picture.close()
        if len(self.society.agents) < 2:
            return  # root alone: nothing to draw
        content = f"**{tr('picture_final')}**\n\n{society_details(self.society)}"
        message = top_level_message(content)
        sign(message, tr("society"), "users")
        message.elements = [
            cl.Plotly(name="society", figure=society_figure(self.society), display="inline")
        ]
        await message.send()

    async def show(self, event: TeamEvent) -> None:
        if isinstance(event, RunFinished):
            await self.finish(event)
        elif isinstance(event, MessageDelivered):
            await self.delivered(event)
        elif isinstance(event, AgentSpawned):
            if event.parent is not None:
                await self.note(
                    tr(
                        "spawned",
                        parent=author(self.society, event.parent),
                        agent=event.agent_id,
                        role=role_name(self.society, event.agent_id),
                        brief=brief_markdown(event.brief),
                    )
                )
            await self.picture.changed()
        elif isinstance(event, RoleCreated):
            spec = ""
            if event.interface_spec:
                spec = (
                    tr("with_spec") + "\n\n" + card_markdown(event.interface_spec, event.role_name)
                )
            await self.note(tr("role_created", **payload(event), spec=spec))
        elif isinstance(event, ContactAdded):
            await self.picture.changed()
        elif isinstance(event, Introduced):
            await self.note(tr("introduced", line=intro_line(event)))
            await self.picture.changed()
        elif isinstance(event, Refused):
            await self.note(
                tr(
                    "refused",
                    agent=event.agent_id,
                    action=tr.get(f"tool.{event.tool}", event.tool),
                    meaning=tr.get(f"refusal.{event.code}", event.code),
                    message=event.message,
                )
            )
        elif isinstance(event, LimitReached):
            await self.note(tr("limit", limit=self.limit_text(event.limit)))
        elif isinstance(event, AgentFailed):
            error = event.text(lang())
            await self.note(tr("failed_agent", agent=event.agent_id, error=error))
        elif isinstance(event, AnswerToken):
            # one delivered answer per message: a second answer root delivers gets its own
            if self.answer is not None and event.message_id != self.answer_id:
                await self.answer.send()
                self.answer = None
            if self.answer is None:
                self.answer = top_level_message()
                self.answer_id = event.message_id
                sign(self.answer, author(self.society, ROOT_ID), "bot")
            await self.answer.stream_token(event.text)

    def limit_text(self, limit: str) -> str:
        """The limit a run reached, with its value, in words (`the limit of 100 messages`)."""
        config, limits = self.run.config, self.society.limits
        values = {
            "agents": limits.max_agents,
            "depth": limits.max_depth,
            "messages": limits.max_messages,
            "time": f"{config.max_execution_time:g}",
            "tokens": config.max_tokens,
        }
        return tr(f"limit_name.{limit}", value=values.get(limit, ""))

    async def delivered(self, event: MessageDelivered) -> None:
        m = event.message
        await self.picture.changed()  # one more message on an arrow
        if m["from"] == USER_ID or m["to"] == USER_ID:
            return  # the user's own task; root's answer is streamed on its own
        first = tr("first_contact") if event.first_contact else ""
        head = (
            f"**{author(self.society, m['from'])}** → **{author(self.society, m['to'])}** · "
            f"{tr.get('message_type.' + m['message_type'], m['message_type'])}{first}"
        )
        body = [head]
        if m.get("self_introduction"):
            body.append(f"_{m['self_introduction']}_")
        if m["content"].strip():
            body.append(m["content"].strip())
        if m["message_type"] == "task_assignment" and m["payload"]:
            body.append(brief_markdown(m["payload"]))
        elif m["message_type"] == "introduction_response" and m["payload"].get("interface_spec"):
            rest = {k: v for k, v in m["payload"].items() if k != "interface_spec"}
            body.append(payload_markdown(rest))
            body.append(card_markdown(m["payload"]["interface_spec"], rest.get("role_name", "")))
        elif m["payload"]:
            body.append(payload_markdown(m["payload"]))
        message = top_level_message("\n\n".join(body))
        sign(message, author(self.society, m["from"]), "bot")
        await message.send()

    async def finish(self, done: RunFinished) -> None:
        await self.final_picture()  # near the answer
        if done.answer:
            if self.answer is None:
                self.answer = top_level_message()
                sign(self.answer, author(self.society, ROOT_ID), "bot")
            self.answer.content = done.answer
            await self.answer.send()
        record = await self.run.export()
        summary = tr(
            "summary",
            agents=counted(len(done.agents), "agent"),
            messages=counted(len(self.society.messages), "message"),
            seconds=done.seconds,
            detail=end_text(done),
        )
        parts = [summary, stats_markdown(done), tr("record")]
        if done.root_note:
            parts.insert(0, tr("root_note", note=done.root_note))
        closing = top_level_message("\n\n".join(parts))
        sign(closing, tr("society"), "users")
        closing.elements = [
            cl.File(
                name="team-record.json",
                content=json.dumps(record, ensure_ascii=False, indent=2).encode(),
                mime="application/json",
            )
        ]
        await closing.send()


async def on_team_message(message: cl.Message) -> None:
    task = (message.content or "").strip()
    if not task:
        return
    settings = runtime().settings
    store = EventStore.at(record_target(settings))
    run = TeamRun(thread_factory(), TeamConfig.from_settings(settings), store=store)
    view = TeamViews(run)
    live = LiveRun(view)
    try:
        async with WaitLines(who=view.speaker):  # between the messages, at the top level
            async for event in run.events(task):
                await live.show(event)
    except asyncio.CancelledError:
        # the stop button: the run's generator stopped every agent; show what was kept
        if run.finished is not None:
            await view.finish(run.finished)
        raise
    except Exception as exc:  # the engine reports failures as events; this is a last guard
        log.exception("team run failed")
        await view.note(with_mark(Outcome.FAILED, describe_failure(exc, lang())))
    finally:
        await view.final_picture()  # whatever ended the run, its picture is kept
        await asyncio.to_thread(store.close)
        await persist_thread_state()


TEAM_MODE = catalog_mode("Team", on_message=on_team_message)
