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

from agents.team.events import (
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
from agents.team.protocol import ROOT_ID, USER_ID, InterfaceSpec, TaskBrief
from agents.team.runner import TeamConfig, TeamRun
from agents.team.society import AgentSociety
from agents.team.store import EventStore
from reqstudio.errors import describe_failure
from reqstudio.persistence import record_target
from ui.modes import ModeSpec, StarterSpec
from ui.session import (
    persist_thread_state,
    runtime,
    send_notice,
    top_level_message,
)
from ui.texts import Catalog, lang

log = logging.getLogger("reqstudio.team")

TEXT = {
    "society": {"zh": "社会", "en": "Society"},
    "picture_title": {"zh": "🗺️ 团队结构（实时更新）", "en": "🗺️ The society (live)"},
    "tree": {"zh": "谁创建了谁", "en": "Who created whom"},
    "contacts_header": {
        "zh": "| 智能体 | 岗位 | 认识谁（来源） |\n|---|---|---|",
        "en": "| Agent | Role | Knows (how) |\n|---|---|---|",
    },
    "intros": {"zh": "介绍记录", "en": "Introductions"},
    "intro_line": {
        "zh": "{introducer} 把 {target} 介绍给 {requester}{via}",
        "en": "{introducer} introduced {target} to {requester}{via}",
    },
    "via": {"zh": "（转自 {via}）", "en": " (forwarded from {via})"},
    "role_created": {
        "zh": "🧩 {by} 定义了岗位 **{role}**：{duties}{spec}",
        "en": "🧩 {by} defined the role **{role}**: {duties}{spec}",
    },
    "with_spec": {"zh": "（含接口说明）", "en": " (with an interface spec)"},
    "card_title": {"zh": "🪪 名片：**{name}**", "en": "🪪 Card: **{name}**"},
    "card_modes": {
        "zh": "输入：{inputs} · 输出：{outputs}",
        "en": "Input: {inputs} · Output: {outputs}",
    },
    "card_header": {
        "zh": "| 技能 | 说明 | 示例 | 输入 | 输出 |\n|---|---|---|---|---|",
        "en": "| Skill | Description | Examples | Input | Output |\n|---|---|---|---|---|",
    },
    "card_formats": {
        "zh": "请求格式：{input_format} · 答复格式：{output_format}",
        "en": "Request format: {input_format} · Answer format: {output_format}",
    },
    "spawned": {
        "zh": "🐣 {parent} 创建了 **{agent}**（{role}），任务委托书：\n\n{brief}",
        "en": "🐣 {parent} created **{agent}** ({role}) with this task brief:\n\n{brief}",
    },
    "refused": {
        "zh": "⛔ 拒绝了 {agent} 的 `{tool}`：**{code}**（{meaning}）\n\n告知 {agent} 的原文：\n\n"
        "> {message}",
        "en": "⛔ Refused {agent}'s `{tool}`: **{code}** ({meaning})\n\nWhat {agent} was told:\n\n"
        "> {message}",
    },
    "introduced": {"zh": "🤝 {line}", "en": "🤝 {line}"},
    "limit": {
        "zh": "⏱ 达到限制 **{limit}**：{detail}",
        "en": "⏱ Limit **{limit}** reached: {detail}",
    },
    "failed_agent": {"zh": "⚠️ {agent} 出错：{error}", "en": "⚠️ {agent} failed: {error}"},
    "first_contact": {"zh": "（首次联系）", "en": " (first contact)"},
    "end": {
        "answered": {"zh": "✅ root 已答复用户。", "en": "✅ Root answered the user."},
        "idle": {
            "zh": "⚠️ 没有智能体还有事可做，root 没有答复用户。",
            "en": "⚠️ No agent had anything left to do, and root did not answer.",
        },
        "messages": {
            "zh": "⏱ 达到消息数上限，运行结束。",
            "en": "⏱ The message limit ended the run.",
        },
        "time": {"zh": "⏱ 达到时间上限，运行结束。", "en": "⏱ The time limit ended the run."},
        "tokens": {"zh": "⏱ 达到 token 上限，运行结束。", "en": "⏱ The token limit ended the run."},
        "loop": {
            "zh": "🔁 两个智能体在重复同样的对话（循环），运行已停止。",
            "en": "🔁 Two agents repeated the same exchange (a loop); the run stopped.",
        },
        "stopped": {
            "zh": "⏹ 已停止所有智能体；运行记录已保留。",
            "en": "⏹ Every agent was stopped; the record is kept.",
        },
        "failed": {"zh": "⚠️ root 出错，运行结束。", "en": "⚠️ Root failed; the run ended."},
    },
    "stats_header": {
        "zh": "| 智能体 | 岗位 | 发出 | 收到 | 工具调用 | 输入 tokens | 输出 tokens | 秒 |",
        "en": "| Agent | Role | Sent | Received | Tool calls | Input tokens | Output tokens | Seconds |",
    },
    "stats_title": {"zh": "统计（每个智能体）", "en": "Statistics per agent"},
    "summary": {
        "zh": "共 {agents} 个智能体，{messages} 条消息，{seconds:.1f} 秒。{detail}",
        "en": "{agents} agents, {messages} messages, {seconds:.1f} s. {detail}",
    },
    "root_note": {
        "zh": "root 没有用 send_message 答复用户，它最后说：\n\n> {note}",
        "en": "Root did not answer the user with send_message; its last words:\n\n> {note}",
    },
    "record": {"zh": "运行记录（JSON）见附件。", "en": "The run's record (JSON) is attached."},
    "intro": {
        "zh": "把需求工程任务交给团队：root 会定义岗位、用任务委托书创建专家，它们通过介绍认识彼此、协作完成，最后由 root 答复你。",
        "en": "Give the team a requirements task: root defines roles, creates specialists with "
        "task briefs, they meet through introductions and collaborate, and root answers you.",
    },
}

# What each refusal code means, for people; the agent itself got the detailed message.
REFUSALS = {
    "unknown_contact": {"zh": "对方不在联系人注册表中", "en": "not in the contact registry"},
    "missing_brief_fields": {"zh": "任务委托书缺少必填字段", "en": "the task brief lacks fields"},
    "invalid_brief": {"zh": "任务委托书格式无效", "en": "the task brief is malformed"},
    "invalid_payload": {
        "zh": "消息内容不符合其类型的要求",
        "en": "the payload does not fit its type",
    },
    "invalid_message_type": {"zh": "未知的消息类型", "en": "unknown message type"},
    "malformed_tool_call": {"zh": "工具调用参数不是合法 JSON", "en": "tool arguments are not JSON"},
    "invalid_arguments": {"zh": "工具参数无效", "en": "invalid tool arguments"},
    "unknown_tool": {"zh": "没有这个工具", "en": "no such tool"},
    "unknown_role": {"zh": "岗位尚未定义", "en": "the role is not defined"},
    "invalid_role": {"zh": "岗位缺少名称或说明", "en": "the role lacks a name or prompt"},
    "role_exists": {"zh": "同名岗位已存在", "en": "a role with that name exists"},
    "invalid_interface_spec": {"zh": "接口说明格式无效", "en": "the interface spec is malformed"},
    "unknown_target": {"zh": "被介绍的智能体不存在", "en": "no such agent to introduce"},
    "agent_limit": {"zh": "智能体数量已达上限", "en": "agent limit reached"},
    "depth_limit": {"zh": "创建层级已达上限", "en": "spawn depth limit reached"},
    "message_limit": {"zh": "消息数已达上限", "en": "message limit reached"},
    "self_message": {"zh": "不能给自己发消息", "en": "a message to oneself"},
    "run_ended": {"zh": "运行正在结束", "en": "the run is ending"},
    "duplicate_message": {"zh": "用户已收到同样的消息", "en": "the user has that message already"},
    "unknown_skill": {"zh": "对方名片上没有这项技能", "en": "not a skill on the receiver's card"},
}

tr = Catalog({k: v for k, v in TEXT.items() if k != "end"})


def end_text(reason: str) -> str:
    return TEXT["end"][reason][lang()]


def sign(message: cl.Message, name: str, icon: str) -> None:
    """Who a message is from, with an icon beside it: without one the browser asks for an
    avatar named after the author ("写作者 (agent-2)"), which Chainlit refuses with a 400."""
    message.author = name
    message.metadata = {**(message.metadata or {}), "icon": icon}


def author(society: AgentSociety, agent_id: str) -> str:
    if agent_id == USER_ID:
        return "user"
    return f"{society.role_name_of(agent_id)} ({agent_id})"


BRIEF_LABELS = {
    "objective": {"zh": "目标", "en": "Objective"},
    "constraints": {"zh": "技术约束", "en": "Constraints"},
    "inputs": {"zh": "输入", "en": "Inputs"},
    "outputs": {"zh": "输出要求", "en": "Outputs"},
    "completion_criteria": {"zh": "完成标准", "en": "Completion criteria"},
    "collaborators": {"zh": "协作联系人", "en": "Collaborators"},
    "references": {"zh": "参考资料", "en": "References"},
    "priority": {"zh": "优先级", "en": "Priority"},
    "skill": {"zh": "所需技能", "en": "Skill asked for"},
}


def brief_markdown(brief: dict[str, Any] | None) -> str:
    """A Task Brief as markdown: one labelled block per field, lists as lists."""
    if not brief:
        return ""
    checked = TaskBrief.model_validate(brief).model_dump(exclude_none=True)
    blocks = []
    for name, labels in BRIEF_LABELS.items():
        value = checked.get(name)
        if not value:
            continue
        label = f"**{labels[lang()]}** (`{name}`)"
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


def society_markdown(society: AgentSociety) -> str:
    """Who created whom (a tree), who knows whom (a table), who introduced whom (a list)."""
    lines = [f"**{tr('picture_title')}**", "", f"_{tr('tree')}_", "```text", "user"]

    def walk(agent_id: str, prefix: str, last: bool) -> None:
        agent = society.agents[agent_id]
        branch = "└─ " if last else "├─ "
        lines.append(f"{prefix}{branch}{agent_id} · {agent.role.name}")
        children = [a.id for a in society.agents.values() if a.parent == agent_id]
        for index, child in enumerate(children):
            walk(child, prefix + ("   " if last else "│  "), index == len(children) - 1)

    walk(ROOT_ID, "", True)
    lines += ["```", "", tr("contacts_header")]
    for agent_id, agent in society.agents.items():
        known = ", ".join(
            f"{c.agent_id} ({c.how}{'' if c.introduced_by == 'society' else ' · ' + c.introduced_by})"
            for c in society.contacts(agent_id)
        )
        lines.append(f"| {agent_id} | {agent.role.name} | {known} |")
    intros = [e for e in society.events if isinstance(e, Introduced)]
    if intros:
        lines += ["", f"_{tr('intros')}_"]
        lines += [f"- {intro_line(e)}" for e in intros]
    return "\n".join(lines)


def intro_line(event: Introduced) -> str:
    via = tr("via", via=event.forwarded_from) if event.forwarded_from else ""
    return tr(
        "intro_line",
        introducer=event.introducer,
        target=event.target,
        requester=event.requester,
        via=via,
    )


def stats_markdown(done: RunFinished) -> str:
    rows = [f"**{tr('stats_title')}**", "", tr("stats_header"), "|---|---|---|---|---|---|---|---|"]
    for s in done.agents:
        rows.append(
            f"| {s.agent_id} | {s.role_name} | {s.messages_sent} | {s.messages_received} | "
            f"{s.tool_calls} | {s.input_tokens} | {s.output_tokens} | {s.seconds:.1f} |"
        )
    return "\n".join(rows)


class TeamRunView:
    """Turns one run's events into Chainlit messages."""

    def __init__(self, run: TeamRun):
        self.run = run
        self.society = run.society
        self.picture: cl.Message | None = None
        self.answer: cl.Message | None = None
        self.answer_id: int | None = None  # the delivered message `answer` shows

    async def note(self, content: str) -> None:
        message = top_level_message(content)
        sign(message, tr("society"), "users")
        await message.send()

    async def redraw(self) -> None:
        content = society_markdown(self.society)
        if self.picture is None:
            self.picture = top_level_message(content)
            sign(self.picture, tr("society"), "users")
            await self.picture.send()
        elif self.picture.content != content:
            self.picture.content = content
            await self.picture.update()

    async def show(self, event: TeamEvent) -> None:
        if isinstance(event, MessageDelivered):
            await self.delivered(event)
        elif isinstance(event, AgentSpawned):
            if event.parent is not None:
                await self.note(
                    tr(
                        "spawned",
                        parent=author(self.society, event.parent),
                        agent=event.agent_id,
                        role=event.role_name,
                        brief=brief_markdown(event.brief),
                    )
                )
            await self.redraw()
        elif isinstance(event, RoleCreated):
            spec = ""
            if event.interface_spec:
                spec = (
                    tr("with_spec") + "\n\n" + card_markdown(event.interface_spec, event.role_name)
                )
            await self.note(
                tr(
                    "role_created",
                    by=event.by,
                    role=event.role_name,
                    duties=event.duties,
                    spec=spec,
                )
            )
        elif isinstance(event, ContactAdded):
            await self.redraw()
        elif isinstance(event, Introduced):
            await self.note(tr("introduced", line=intro_line(event)))
            await self.redraw()
        elif isinstance(event, Refused):
            await self.note(
                tr(
                    "refused",
                    agent=event.agent_id,
                    tool=event.tool,
                    code=event.code,
                    meaning=REFUSALS.get(event.code, {}).get(lang(), event.code),
                    message=event.message,
                )
            )
        elif isinstance(event, LimitReached):
            await self.note(tr("limit", limit=event.limit, detail=event.detail))
        elif isinstance(event, AgentFailed):
            await self.note(tr("failed_agent", agent=event.agent_id, error=event.error))
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

    async def delivered(self, event: MessageDelivered) -> None:
        m = event.message
        if m["from"] == USER_ID or m["to"] == USER_ID:
            return  # the user's own task; root's answer is streamed on its own
        first = tr("first_contact") if event.first_contact else ""
        head = (
            f"**{author(self.society, m['from'])}** → **{author(self.society, m['to'])}** · "
            f"`{m['message_type']}`{first}"
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
            body.append(f"```json\n{json.dumps(rest, ensure_ascii=False, indent=1)}\n```")
            body.append(card_markdown(m["payload"]["interface_spec"], rest.get("role_name", "")))
        elif m["payload"]:
            body.append(f"```json\n{json.dumps(m['payload'], ensure_ascii=False, indent=1)}\n```")
        message = top_level_message("\n\n".join(body))
        sign(message, author(self.society, m["from"]), "bot")
        await message.send()

    async def finish(self, done: RunFinished) -> None:
        await self.redraw()
        if len(self.society.agents) > 1:
            await self.note(society_markdown(self.society))  # the final picture, near the answer
        if done.answer:
            if self.answer is None:
                self.answer = top_level_message()
                sign(self.answer, author(self.society, ROOT_ID), "bot")
            self.answer.content = done.answer
            await self.answer.send()
        record = await self.run.export()
        summary = tr(
            "summary",
            agents=len(done.agents),
            messages=len(self.society.messages),
            seconds=done.seconds,
            detail=end_text(done.reason),
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


async def on_team_start() -> None:
    await send_notice(tr("intro"))


async def on_team_message(message: cl.Message) -> None:
    task = (message.content or "").strip()
    if not task:
        return
    settings = runtime().settings
    store = EventStore.at(record_target(settings))
    run = TeamRun(runtime().factory(), TeamConfig.from_settings(settings), store=store)
    view = TeamRunView(run)
    try:
        async for event in run.events(task):
            if isinstance(event, RunFinished):
                await view.finish(event)
            else:
                await view.show(event)
    except asyncio.CancelledError:
        # the stop button: the run's generator stopped every agent; show what was kept
        if run.finished is not None:
            await view.finish(run.finished)
        raise
    except Exception as exc:  # the engine reports failures as events; this is a last guard
        log.exception("team run failed")
        await view.note(f"⚠️ {describe_failure(exc, lang())}")
    finally:
        await asyncio.to_thread(store.close)
        await persist_thread_state()


TEAM_MODE = ModeSpec(
    id="Team",
    title={"zh": "团队 Team", "en": "Team"},
    description={
        "zh": "智能体团队：用任务委托书分派工作，只与认识的联系人通信，通过介绍结识新的协作者。",
        "en": "A team of agents that delegate with task briefs, talk only to contacts they know, "
        "and meet new ones through introductions.",
    },
    on_message=on_team_message,
    on_start=on_team_start,
    starters=[
        StarterSpec(
            label={"zh": "校园二手平台 SRS 初稿", "en": "Campus marketplace SRS draft"},
            message={
                "zh": "为校园二手交易平台组建团队，写出 SRS 初稿；约束：静态网页前端 + Python 后端",
                "en": "Form a team to write a first SRS draft for a campus second-hand marketplace; "
                "constraints: static web front end + Python back end",
            },
        ),
        StarterSpec(
            label={"zh": "评审座位预约需求", "en": "Review seat-booking requirements"},
            message={
                "zh": "组建评审小组，找出图书馆座位预约系统需求中不可测试的条目并改写；约束：微信小程序 + Java 后端",
                "en": "Form a review team to find and rewrite the untestable requirements of a "
                "library seat-booking system; constraints: WeChat mini program + Java back end",
            },
        ),
        StarterSpec(
            label={"zh": "非功能需求清单", "en": "Non-functional requirements"},
            message={
                "zh": "请团队为在线考试系统整理可度量的非功能需求（性能、安全、可用性）；约束：Python 后端，部署在校内服务器",
                "en": "Have the team list measurable non-functional requirements (performance, "
                "security, availability) for an online exam system; constraints: Python back "
                "end, hosted on campus servers",
            },
        ),
    ],
)
