"""Rewrite mode in the browser: the original uploaded (or pasted), clarifications from a .json
or asked one at a time, then one Step per stage (the outline as a table, the sections streaming,
each review round with its issues and per-section diffs), and the result as .md and .json."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

import chainlit as cl

from agents.rewrite import (
    ClarificationItem,
    DocumentStructure,
    RewriteChain,
    RewriteRequest,
    RewriteResult,
    RewriteStageError,
)
from agents.rewrite.chain import RewriteResumeError
from agents.rewrite.errors import RewriteTooLarge
from agents.rewrite.models import PatchFailure, ReviewIssue, SectionPatch
from agents.rewrite.questions import (
    ClarificationsError,
    Reply,
    ask_one_at_a_time,
    parse_clarifications,
    propose_questions,
)
from agents.rewrite.sizes import context_sizes
from agents.rewrite.state import RewriteOptions
from agents.srs.documents import ReferenceDocumentError, load_reference
from reqstudio.errors import describe_failure
from reqstudio.persistence import open_checkpointer
from reqstudio.usage import UsageTracker
from ui.modes import ModeSpec, StarterSpec
from ui.session import (
    diff_block,
    open_top_level_step,
    persist_thread_state,
    runtime,
    send_notice,
    step_icon,
    top_level_message,
)
from ui.texts import Catalog, lang

log = logging.getLogger("reqstudio.rewrite")

ASK_TIMEOUT = 1800  # seconds: people need time to think about a question
MIN_PASTED_CHARS = 30

TEXT = {
    "intro": {
        "zh": "请上传要重写的原始文档（.md / .txt / .pdf / .docx），也可以直接粘贴文档内容。"
        "可同时附上澄清问答 .json（由 question 和 answer 组成的列表）；没有的话，我可以先就文档"
        "中的空白和含糊之处向你提问。",
        "en": "Upload the original document to rewrite (.md / .txt / .pdf / .docx), or paste "
        "its text. You may attach a clarifications .json too (a list of question and answer "
        "objects); without one, I can first ask you about the document's gaps and ambiguities.",
    },
    "need_original": {
        "zh": "还没有原始文档：请上传文件，或粘贴文档内容。",
        "en": "No original document yet: upload a file or paste the document's text.",
    },
    "original_ok": {
        "zh": "已读取原始文档《{name}》：{chars} 个字符。",
        "en": "Original document “{name}” read: {chars} characters.",
    },
    "clarifications_ok": {
        "zh": "已读取澄清问答《{name}》：{count} 条。",
        "en": "Clarifications “{name}” read: {count} entries.",
    },
    "clarifications_bad": {
        "zh": "⚠️ 澄清文件《{name}》无法使用：{reason}。需要一个 JSON 列表，每项含 question 和 "
        "answer 两个字符串字段。",
        "en": "⚠️ The clarifications file “{name}” cannot be used: {reason}. It must be a JSON "
        "list whose entries each have the string fields question and answer.",
    },
    "how_clarify": {
        "zh": "重写前先澄清文档中的空白和含糊之处。你希望怎么做？",
        "en": "Before rewriting, the document's gaps and ambiguities should be clarified. How?",
    },
    "let_app_ask": {"zh": "请向我提问", "en": "Ask me questions"},
    "upload_json": {"zh": "上传澄清 .json", "en": "Upload a clarifications .json"},
    "no_clarify": {"zh": "不澄清，直接重写", "en": "Rewrite without"},
    "upload_json_prompt": {
        "zh": "请上传澄清问答 .json（question / answer 列表）。",
        "en": "Upload the clarifications .json (a list of question / answer objects).",
    },
    "proposing": {"zh": "正在阅读文档并拟定澄清问题…", "en": "Reading the document for questions…"},
    "no_questions": {
        "zh": "没有需要澄清的问题，直接开始重写。",
        "en": "No question needed; rewriting now.",
    },
    "questions_failed": {
        "zh": "⚠️ 未能拟定澄清问题：{reason} 将不带澄清直接重写。",
        "en": "⚠️ Could not draft clarifying questions: {reason} Rewriting without them.",
    },
    "question": {
        "zh": "**问题 {index}/{total}**：{question}",
        "en": "**Question {index}/{total}**: {question}",
    },
    "answer_or_skip": {
        "zh": "回答这个问题、跳过，还是不再提问？",
        "en": "Answer this question, skip it, or stop asking?",
    },
    "answer": {"zh": "回答", "en": "Answer"},
    "chosen": {"zh": "已选择：{label}", "en": "Chosen: {label}"},
    "timed_out": {"zh": "等待超时，未作选择。", "en": "Timed out; nothing was chosen."},
    "skip": {"zh": "跳过", "en": "Skip"},
    "stop_asking": {"zh": "不再提问，开始重写", "en": "Stop asking, rewrite"},
    "your_answer": {
        "zh": "请输入你对问题 {index} 的回答：",
        "en": "Type your answer to question {index}:",
    },
    "qa_summary": {
        "zh": "收集到 {answered} 条回答，跳过 {skipped} 个问题，未提问 {unasked} 个。",
        "en": "{answered} answered, {skipped} skipped, {unasked} not asked.",
    },
    "step_outline": {"zh": "① 大纲规划", "en": "① Outline"},
    "step_filling": {"zh": "② 逐节撰写", "en": "② Sections"},
    "step_review": {"zh": "③ 评审 · 第 {round} 轮", "en": "③ Review · round {round}"},
    "step_review_off": {"zh": "③ 评审（已关闭）", "en": "③ Review (off)"},
    "outline_head": {
        "zh": "**{title}**\n\n| # | 标题 | 写作目标 | 层级 |\n|---|---|---|---|",
        "en": "**{title}**\n\n| # | Title | Goal | Level |\n|---|---|---|---|",
    },
    "filling": {
        "zh": "正在生成第 {index}/{total} 节：{title}",
        "en": "Writing section {index}/{total}: {title}",
    },
    "filled": {"zh": "已写完 {total} 节。", "en": "{total} sections written."},
    "reviewing": {"zh": "评审中…", "en": "Reviewing…"},
    "no_issues": {"zh": "✅ 没有发现问题。", "en": "✅ No issues found."},
    "issues_head": {
        "zh": "发现 {count} 个问题：\n\n| 章节 | 类型 | 问题 | 建议 |\n|---|---|---|---|",
        "en": "{count} issues found:\n\n| Section | Kind | Issue | Suggestion |\n|---|---|---|---|",
    },
    "patched": {"zh": "修订「{title}」", "en": "Patched “{title}”"},
    "last_round": {
        "zh": "已达到评审轮数上限（{limit}），不再复审。",
        "en": "Review round limit ({limit}) reached; no further review.",
    },
    "summary": {
        "zh": "✅ 重写完成：{sections} 节 · 评审 {rounds} 轮 · 修复问题 {fixed} 个 · {tokens} tokens · "
        "{seconds:.1f} 秒",
        "en": "✅ Rewrite done: {sections} sections · {rounds} review rounds · {fixed} issues "
        "fixed · {tokens} tokens · {seconds:.1f} s",
    },
    "failed": {
        "zh": "⚠️ 重写在阶段 {stage} 失败：{reason} 已写的内容已保留。",
        "en": "⚠️ The rewrite failed in stage {stage}: {reason} What was written is kept.",
    },
    "stopped": {
        "zh": "⏹ 已停止。已写的内容已保留。",
        "en": "⏹ Stopped. What was written is kept.",
    },
    "stage_failed": {"zh": "⚠️ 本阶段失败：{reason}", "en": "⚠️ This stage failed: {reason}"},
    "patch_failed": {
        "zh": "⚠️ 未能修订「{title}」（{section_id}），该节保持修订前的内容：{reason}",
        "en": "⚠️ Could not patch “{title}” ({section_id}); it stays as before: {reason}",
    },
    "unplaced": {
        "zh": "⚠️ {count} 个问题无法对应到任何章节，未修订：{which}",
        "en": "⚠️ {count} issue(s) name no section and are not patched: {which}",
    },
    "incomplete": {
        "zh": "⚠️ 重写未完全完成：以下章节未能修订，保持初稿内容：{sections}。{sections_count} 节 · "
        "评审 {rounds} 轮 · 修复问题 {fixed} 个 · {tokens} tokens · {seconds:.1f} 秒",
        "en": "⚠️ Rewrite incomplete: these sections could not be patched and stay as drafted: "
        "{sections}. {sections_count} sections · {rounds} review rounds · {fixed} issues fixed · "
        "{tokens} tokens · {seconds:.1f} s",
    },
    "too_large": {
        "zh": "⚠️ 文档太大，模型上下文放不下，未开始重写：{sizes}。",
        "en": "⚠️ The document is too large for the model's context; nothing was started: {sizes}.",
    },
    "may_not_fit": {
        "zh": "⚠️ 评审与修订请求可能超出模型上下文（{sizes}），模型服务可能拒绝。",
        "en": "⚠️ The review and patch requests may not fit the model's context ({sizes}); the "
        "provider may refuse them.",
    },
    "resume": {"zh": "继续重写", "en": "Resume the rewrite"},
    "resume_offer": {
        "zh": "上次的重写没有完成，已完成的步骤已保存。要从那里继续吗？",
        "en": "The last rewrite did not finish; its finished steps are saved. Resume from there?",
    },
}

tr = Catalog(TEXT)

ACCEPT = {
    "text/markdown": [".md", ".markdown"],
    "text/plain": [".txt", ".md"],
    "application/pdf": [".pdf"],
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": [".docx"],
    "application/json": [".json"],
}


KINDS = {
    "contradiction": ("矛盾", "contradiction"),
    "omission": ("遗漏", "omission"),
    "unresolved_clarification": ("未采纳澄清", "clarification ignored"),
    "inconsistency": ("前后不一致", "inconsistency"),
    "other": ("其他", "other"),
}


def kind_label(kind: str) -> str:
    zh, en = KINDS.get(kind, (kind, kind))
    return zh if lang() == "zh" else en


def cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "/")


def outline_table(document: DocumentStructure) -> str:
    rows = [tr("outline_head", title=cell(document.title))]
    for number, section in enumerate(document.sections, start=1):
        rows.append(
            f"| {number} | {cell(section.title)} | {cell(section.goal)} | {section.level} |"
        )
    return "\n".join(rows)


def issues_table(issues: list[ReviewIssue], document: DocumentStructure | None) -> str:
    titles = {s.id: s.title for s in document.sections} if document else {}
    rows = [tr("issues_head", count=len(issues))]
    for issue in issues:
        where = f"{issue.section_id} {titles.get(issue.section_id, '')}".strip()
        rows.append(
            f"| {cell(where)} | {kind_label(issue.kind)} | {cell(issue.description)} | {cell(issue.suggestion)} |"
        )
    return "\n".join(rows)


def section_diff(patch: SectionPatch) -> str:
    return diff_block(patch.section_id, patch.before, patch.after)


class ChainlitProgress:
    """The engine's progress handler for the browser: Steps, the streaming draft, diffs."""

    def __init__(self) -> None:
        self.step: cl.Step | None = None
        self.document: DocumentStructure | None = None
        self.draft = top_level_message()
        self.written: dict[str, str] = {}  # section id -> text streamed so far
        self.current: str | None = None
        self.max_rounds = 0
        self.last_issues = 0
        self.step_round = 0  # the review round whose step is open

    async def close_step(self, output: str | None = None, error: bool = False) -> None:
        if self.step is not None:
            if output is not None:
                self.step.output = output
            self.step.is_error = error
            await self.step.update()
            self.step = None

    def draft_markdown(self) -> str:
        """The document as far as it was written (also what a stop keeps)."""
        if self.document is None:
            return ""
        parts = [f"# {self.document.title}\n"]
        for section in self.document.sections:
            if section.id in self.written:
                body = self.written[section.id].strip("\n")
                parts.append(f"{'#' * section.level} {section.title}\n\n{body}\n")
        return "\n".join(parts)

    # --- ProgressCallbackHandler --------------------------------------------------------

    async def on_stage_start(self, stage_name: str, **kwargs: Any) -> None:
        if stage_name == "outline_generation":
            self.step = await open_top_level_step(tr("step_outline"), "llm", icon="list-tree")
        elif stage_name == "content_filling":
            self.step = await open_top_level_step(tr("step_filling"), "llm", icon="pen-line")
            self.document = kwargs.get("document") or self.document
            self.draft = top_level_message()
            if kwargs.get("resumed_at") and self.document is not None:
                # a resumed run: the sections written before the stop come from the checkpoint
                done = [s for s in self.document.sections if s.content.strip()]
                self.written.update({s.id: s.content for s in done})
                self.draft.content = self.draft_markdown()
            await self.draft.send()

    async def on_stage_end(self, stage_name: str, **kwargs: Any) -> None:
        if stage_name == "outline_generation":
            self.document = kwargs["document"]
            await self.close_step(outline_table(self.document))
        elif stage_name == "content_filling":
            self.document = kwargs["document"]
            await self.close_step(tr("filled", total=len(self.document.sections)))
        elif stage_name == "review_revision":
            self.document = kwargs.get("document") or self.document
            rounds = int(kwargs.get("rounds") or 0)
            if not rounds:
                step = await open_top_level_step(tr("step_review_off"), "llm", icon="search-check")
                await step.update()
            elif self.step is not None:
                if rounds >= self.max_rounds and self.last_issues:
                    note = tr("last_round", limit=self.max_rounds)
                    self.step.output = f"{self.step.output or ''}\n\n{note}"
                await self.close_step()

    async def on_stage_error(self, stage_name: str, reason: str = "", **kwargs: Any) -> None:
        if reason == "cancelled":
            await self.close_step(tr("stopped"), error=True)
            return
        # names the section's fault and its finish reason, in the user's language
        note = tr("stage_failed", reason=kwargs.get("reason_zh") if lang() == "zh" else reason)
        output = f"{self.step.output}\n\n{note}" if self.step and self.step.output else note
        await self.close_step(output, error=True)

    async def on_stage_progress(self, stage_name: str, message: str, **kwargs: Any) -> None:
        if stage_name == "content_filling" and self.step is not None:
            self.current = kwargs["section_id"]
            self.written[self.current] = ""
            self.step.output = tr(
                "filling", index=kwargs["index"], total=kwargs["total"], title=kwargs["title"]
            )
            await self.step.update()
            section = self.document.section(self.current) if self.document else None
            if section is not None:
                await self.draft.stream_token(
                    ("\n\n" if self.draft.content else "")
                    + f"{'#' * section.level} {section.title}\n\n"
                )
        elif stage_name == "review_revision":
            await self.review_progress(kwargs)

    async def review_progress(self, kwargs: dict[str, Any]) -> None:
        round_number = int(kwargs["round"])
        if "issues" in kwargs:
            issues = kwargs["issues"]
            self.last_issues = len(issues)
            self.step.output = issues_table(issues, self.document) if issues else tr("no_issues")
            await self.step.update()
        elif "failure" in kwargs:
            failure: PatchFailure = kwargs["failure"]
            note = tr(
                "patch_failed",
                title=cell(failure.title),
                section_id=failure.section_id,
                reason=failure.reason_zh if lang() == "zh" else failure.reason,
            )
            self.step.output = f"{self.step.output or ''}\n\n{note}"
            self.step.is_error = True
            await self.step.update()
        elif "unplaced" in kwargs:
            unplaced: list[ReviewIssue] = kwargs["unplaced"]
            which = "; ".join(f"“{cell(i.section_id)}”: {cell(i.description)}" for i in unplaced)
            note = tr("unplaced", count=len(unplaced), which=which)
            self.step.output = f"{self.step.output or ''}\n\n{note}"
            await self.step.update()
        elif "patch" in kwargs:
            patch: SectionPatch = kwargs["patch"]
            self.step.output = (
                (self.step.output or "")
                + f"\n\n**{tr('patched', title=cell(patch.title))}**\n\n"
                + section_diff(patch)
            )
            await self.step.update()
        elif "sections" not in kwargs and self.step_round != round_number:  # a round starts
            self.step_round = round_number
            await self.close_step()
            self.step = await open_top_level_step(
                tr("step_review", round=round_number), "llm", icon="search-check"
            )
            self.step.output = tr("reviewing")
            await self.step.update()

    async def on_section_token(self, section_id: str, text: str) -> None:
        self.written[section_id] = self.written.get(section_id, "") + text
        await self.draft.stream_token(text)

    async def on_section_reset(self, section_id: str) -> None:
        # The stream broke: drop what arrived of this section; it is written again.
        partial = self.written.get(section_id, "")
        if partial and self.draft.content.endswith(partial):
            self.draft.content = self.draft.content[: len(self.draft.content) - len(partial)]
            await self.draft.update()
        self.written[section_id] = ""


# --- the conversation ----------------------------------------------------------------------


async def on_rewrite_start() -> None:
    await send_notice(tr("intro"))


def store_original(name: str, text: str) -> None:
    cl.user_session.set("rewrite_original", {"name": name, "text": text})


async def read_attachments(message: cl.Message) -> tuple[bool, list[ClarificationItem] | None]:
    """Read attached files: documents become the original, a .json the clarifications.
    Returns (ok, clarifications or None when no .json came)."""
    clarifications = None
    max_mb = runtime().settings.reference_max_mb
    for element in message.elements or []:
        path = getattr(element, "path", None)
        if not path:
            continue
        name = element.name or Path(path).name
        if name.lower().endswith(".json"):
            items = await read_clarifications_file(Path(path), name)
            if items is None:
                return False, None
            clarifications = items
            continue
        try:
            # pypdf / python-docx / charset detection are CPU-bound: off the event loop
            document = await asyncio.to_thread(load_reference, Path(path), name, max_mb=max_mb)
        except ReferenceDocumentError as error:
            await cl.Message(content=f"⚠️ {error.message(lang())}").send()
            return False, None
        store_original(document.name, document.text)
        await cl.Message(
            content=tr("original_ok", name=document.name, chars=len(document.text))
        ).send()
    return True, clarifications


async def read_clarifications_file(path: Path, name: str) -> list[ClarificationItem] | None:
    try:
        items = parse_clarifications(path.read_text(encoding="utf-8-sig"))
    except (ClarificationsError, UnicodeDecodeError) as error:
        reason = str(error) if isinstance(error, ClarificationsError) else "not UTF-8 text"
        await cl.Message(content=tr("clarifications_bad", name=name, reason=reason)).send()
        return None
    await cl.Message(content=tr("clarifications_ok", name=name, count=len(items))).send()
    return items


async def choose_clarifications(original: str) -> list[ClarificationItem]:
    ask = cl.AskActionMessage(
        content=tr("how_clarify"),
        actions=[
            cl.Action(name="ask", payload={"choice": "ask"}, label=tr("let_app_ask")),
            cl.Action(name="upload", payload={"choice": "upload"}, label=tr("upload_json")),
            cl.Action(name="none", payload={"choice": "none"}, label=tr("no_clarify")),
        ],
        timeout=ASK_TIMEOUT,
    )
    asked = ask.content
    choice = await ask.send()
    ask.content = asked
    await record_choice(ask, choice)
    picked = (choice or {}).get("payload", {}).get("choice", "none")
    if picked == "upload":
        files = await cl.AskFileMessage(
            content=tr("upload_json_prompt"),
            accept={"application/json": [".json"]},
            max_size_mb=1,
            timeout=ASK_TIMEOUT,
        ).send()
        for file in files or []:
            items = await read_clarifications_file(Path(file.path), file.name)
            return items or []
        return []
    if picked == "ask":
        return await ask_questions(original)
    return []


async def ask_questions(original: str) -> list[ClarificationItem]:
    settings = runtime().settings
    async with cl.Step(name=tr("proposing"), type="llm", icon=step_icon("llm", None)) as step:
        try:
            questions = await propose_questions(
                original,
                runtime().factory(),
                max_questions=settings.rewrite_max_questions,
            )
        except Exception as error:
            log.warning("rewrite: no questions", exc_info=True)
            step.output = describe_failure(error, lang())
            await cl.Message(
                content=tr("questions_failed", reason=describe_failure(error, lang()))
            ).send()
            return []
        step.output = "\n".join(f"{i}. {q}" for i, q in enumerate(questions, start=1))
    if not questions:
        await cl.Message(content=tr("no_questions")).send()
        return []

    async def ask(index: int, total: int, question: str) -> Reply:
        choice = cl.AskActionMessage(
            content=tr("question", index=index, total=total, question=question)
            + "\n\n"
            + tr("answer_or_skip"),
            actions=[
                cl.Action(name="answer", payload={"a": "answer"}, label=tr("answer")),
                cl.Action(name="skip", payload={"a": "skip"}, label=tr("skip")),
                cl.Action(name="stop", payload={"a": "stop"}, label=tr("stop_asking")),
            ],
            timeout=ASK_TIMEOUT,
        )
        asked = choice.content
        picked = await choice.send()
        choice.content = asked
        await record_choice(choice, picked)
        action = (picked or {}).get("payload", {}).get("a", "stop")
        if action != "answer":
            return Reply(action)
        answer = await cl.AskUserMessage(
            content=tr("your_answer", index=index), timeout=ASK_TIMEOUT
        ).send()
        return Reply("answer", (answer or {}).get("output", ""))

    outcome = await ask_one_at_a_time(questions, ask)
    await cl.Message(
        content=tr(
            "qa_summary",
            answered=len(outcome.clarifications),
            skipped=len(outcome.skipped),
            unasked=len(outcome.not_asked),
        )
    ).send()
    return outcome.clarifications


async def record_choice(choice: cl.AskActionMessage, picked: dict | None) -> None:
    """Chainlit replaces an answered question's text with "**Selected:** <label>" (in English):
    keep the question readable and say what was chosen in the user's language."""
    question = choice.content
    picked_label = (picked or {}).get("label")
    asked = question.split("\n\n")[0]
    outcome = tr("chosen", label=picked_label) if picked_label else tr("timed_out")
    choice.content = f"{asked}\n\n{outcome}"
    await choice.update()


async def on_rewrite_message(message: cl.Message) -> None:
    ok, clarifications = await read_attachments(message)
    if not ok:
        return
    text = (message.content or "").strip()
    attached_original = any(
        not (e.name or "").lower().endswith(".json") for e in message.elements or []
    )
    if not attached_original and len(text) >= MIN_PASTED_CHARS:
        store_original(text.splitlines()[0][:60], text)
    original = (cl.user_session.get("rewrite_original") or {}).get("text", "")
    if not original.strip():
        await cl.Message(content=tr("need_original")).send()
        return
    if clarifications is None:
        clarifications = await choose_clarifications(original)
    await persist_thread_state()
    await render_rewrite(RewriteRequest(original_content=original, clarifications=clarifications))


def rewrite_chain() -> RewriteChain:
    settings = runtime().settings
    options = RewriteOptions(max_review_rounds=settings.rewrite_max_review_rounds, language=lang())
    return RewriteChain(runtime().factory(), options=options)


async def render_rewrite(request: RewriteRequest | None, *, resume_key: str | None = None) -> None:
    """Run a rewrite and show it; with `resume_key`, continue that saved run instead."""
    tracker = UsageTracker()
    progress = ChainlitProgress()
    chain = rewrite_chain()
    progress.max_rounds = chain.options.max_review_rounds
    started = time.perf_counter()
    if resume_key is None:
        assert request is not None
        sizes = context_sizes(request, chain.factory)
        if not sizes.fits:
            await top_level_message(tr("too_large", sizes=sizes.describe(lang()))).send()
            return
        if sizes.draft_may_not_fit:
            await send_notice(tr("may_not_fit", sizes=sizes.describe(lang())))
        sequence = int(cl.user_session.get("rewrite_run_seq") or 0) + 1
        cl.user_session.set("rewrite_run_seq", sequence)
        run_key = f"{cl.context.session.thread_id}:rewrite:{sequence}"
        cl.user_session.set("rewrite_active_run", run_key)
        await persist_thread_state()
    else:
        run_key = resume_key
    try:
        async with open_checkpointer(runtime().settings) as saver:
            result = await chain.ainvoke(
                request,
                progress,
                tracker=tracker,
                checkpointer=saver,
                run_id=run_key,
                resume=resume_key is not None,
            )
    except asyncio.CancelledError:
        await progress.close_step(tr("stopped"), error=True)
        await keep_partial(progress, None, tr("stopped"), run_key)
        raise
    except RewriteResumeError:
        await top_level_message(tr("failed", stage="?", reason=tr("resume_offer"))).send()
        return
    except (RewriteStageError, RewriteTooLarge) as error:
        log.info("rewrite failed: %s", error, exc_info=True)
        reason = error.reason_zh if lang() == "zh" else error.reason
        note = tr("failed", stage=error.stage, reason=reason)
        await progress.close_step(note, error=True)
        await keep_partial(progress, error.partial, note, run_key)
        return
    except Exception as error:  # keep the app running; finished steps are in the checkpoint
        log.exception("rewrite failed")
        note = tr("failed", stage="?", reason=describe_failure(error, lang()))
        await progress.close_step(note, error=True)
        await keep_partial(progress, None, note, run_key)
        return
    await finish(progress, result, time.perf_counter() - started)


def downloads(markdown: str, structure: dict[str, Any], stem: str = "rewritten") -> list[cl.File]:
    return [
        cl.File(name=f"{stem}.md", content=markdown.encode(), mime="text/markdown"),
        cl.File(
            name=f"{stem}.json",
            content=json.dumps(structure, ensure_ascii=False, indent=2).encode(),
            mime="application/json",
        ),
    ]


async def finish(progress: ChainlitProgress, result: RewriteResult, seconds: float) -> None:
    progress.draft.content = result.rewritten_content
    await progress.draft.update()
    counts = dict(
        rounds=result.rounds,
        fixed=result.issues_fixed,
        tokens=result.usage.get("total_tokens", 0),
        seconds=seconds,
    )
    sections = len(result.structured_document.sections)
    if result.complete:
        text = tr("summary", sections=sections, **counts)
    else:
        names = "、" if lang() == "zh" else ", "
        failed = names.join(f"{f.section_id}「{f.title}」" for f in result.failed_patches)
        text = tr("incomplete", sections=failed, sections_count=sections, **counts)
    summary = top_level_message(text)
    summary.elements = downloads(result.rewritten_content, result.model_dump(mode="json"))
    await summary.send()
    await persist_thread_state()


async def keep_partial(
    progress: ChainlitProgress,
    partial: DocumentStructure | None,
    note: str,
    run_key: str,
) -> None:
    """A stop or a failure: what was written stays on screen and can be downloaded, and the
    run can be resumed from its last saved step."""
    markdown = partial.to_markdown() if partial is not None else progress.draft_markdown()
    message = top_level_message(note)
    if markdown.strip():
        structure = (
            (partial or progress.document).model_dump(mode="json")
            if (partial or progress.document)
            else {}
        )
        message.elements = downloads(markdown, structure, stem="rewritten-partial")
    message.actions = [resume_action(run_key)]
    await message.send()


def resume_action(run_key: str) -> cl.Action:
    return cl.Action(name="rewrite_resume", payload={"run": run_key}, label=tr("resume"))


@cl.action_callback("rewrite_resume")
async def on_resume_action(action: cl.Action) -> None:
    await action.remove()
    run_key = action.payload.get("run") or cl.user_session.get("rewrite_active_run")
    if run_key:
        await render_rewrite(None, resume_key=run_key)


# (browser session, run) pairs already offered: restoring a thread reconnects the browser,
# which runs on_chat_resume a second time.
_OFFERED: set[tuple[str, str]] = set()


async def on_rewrite_resume(thread: dict) -> None:
    # Chainlit sends the stored thread after this handler returns; a task's message comes later.
    asyncio.get_running_loop().create_task(offer_resume())


async def offer_resume() -> None:
    run_key = cl.user_session.get("rewrite_active_run")
    offer_key = (cl.context.session.id, str(run_key))
    if not run_key or offer_key in _OFFERED:
        return
    _OFFERED.add(offer_key)
    async with open_checkpointer(runtime().settings) as saver:
        pending = await rewrite_chain().pending(saver, run_key)
    if pending:
        await cl.Message(content=tr("resume_offer"), actions=[resume_action(run_key)]).send()


REWRITE_MODE = ModeSpec(
    id="Rewrite",
    title={"zh": "重写", "en": "Rewrite"},
    description={
        "zh": "上传一份粗糙的 PRD 或 SRS，回答几个澄清问题，按“大纲 → 逐节撰写 → 评审修订”"
        "重写成结构清晰的新文档。",
        "en": "Upload a rough PRD or SRS, answer a few clarifying questions, and get it "
        "rewritten outline first, section by section, then reviewed and patched.",
    },
    on_message=on_rewrite_message,
    on_start=on_rewrite_start,
    on_resume=on_rewrite_resume,
    starters=[
        StarterSpec(
            label={"zh": "重写一份粗糙的 PRD", "en": "Rewrite a rough PRD"},
            message={
                "zh": "# 宠物医院预约\n\n主人可以在线预约就诊，兽医查看当天日程，系统发送提醒。"
                "支付方式待定，可能支持在线支付。需要手机上能用。",
                "en": "# Pet clinic booking\n\nOwners book visits online, vets see their day, "
                "reminders are sent. Payment to be decided, maybe online. Must work on phones.",
            },
        ),
        StarterSpec(
            label={"zh": "重写一份需求草稿", "en": "Rewrite a requirements draft"},
            message={
                "zh": "# 员工报销系统\n\n员工提交报销单并上传发票，经理审批，财务打款。"
                "金额大的要多级审批（多大算大？）。要能导出报表。",
                "en": "# Expense claims\n\nStaff submit claims with receipts, managers approve, "
                "finance pays. Large amounts need more approvals (how large?). Reports export.",
            },
        ),
    ],
)
