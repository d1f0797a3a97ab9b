"""SRS mode in the browser: reference upload, one collapsible Step per agent and round,
the SRS streamed into the final message, downloads, evaluation, stop and resume."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from pathlib import Path
from typing import Any

import chainlit as cl
from chainlit.data import get_data_layer
from chainlit.input_widget import Select, Slider

from agents.srs.documents import ReferenceDocumentError, display_name, load_reference
from agents.srs.engine import SrsRequest, pending_resume, run_srs
from agents.srs.evaluation import METRICS, NOT_JSON_ERROR, OUT_OF_RANGE_ERROR, evaluate_srs
from agents.srs.events import (
    DocumentContinued,
    DocumentReset,
    DocumentToken,
    NodeFinished,
    NodeStarted,
    Notice,
    RunFailed,
    RunFinished,
    SrsResult,
)
from reqstudio.errors import (
    DATABASE_UNAVAILABLE,
    describe_failure,
    describe_not_run,
    is_database_failure,
)
from reqstudio.persistence import open_checkpointer
from reqstudio.run_lease import RunBusy, run_lease
from reqstudio.usage import UsageTracker
from ui.modes import ModeSpec, StarterSpec
from ui.session import (
    LocalizedAskAction,
    finish_step,
    open_top_level_step,
    persist_thread_state,
    run_as_task,
    runtime,
    send_notice,
    top_level_message,
    upload_ceiling_mb,
)
from ui.texts import Catalog, counted, lang

log = logging.getLogger("reqstudio.srs")

ACCEPT = {
    "text/markdown": [".md", ".markdown"],
    "text/plain": [".txt", ".md"],
    "application/pdf": [".pdf"],
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": [".docx"],
}
KIND = {"FR": ("功能", "functional"), "NFR": ("非功能", "non-functional"),
        "CON": ("约束", "constraint"), "SUG": ("建议", "suggestion")}  # fmt: skip

TEXT = {
    "intro": {
        "zh": "请描述要构建的系统，并附上一份参考 SRS（.md / .txt / .pdf / .docx，"
        "ReqClarify 以它为评分标准）。轮数与消融模式可在设置（⚙）中调整。",
        "en": "Describe the system to build and attach a reference SRS (.md / .txt / .pdf / "
        ".docx; ReqClarify scores against it). Rounds and ablation are in the settings (⚙).",
    },
    "ask_reference": {
        "zh": "还没有参考 SRS。上传一份，还是不用参考继续（将按 no-clarify 运行）？",
        "en": "No reference SRS yet. Upload one, or continue without (runs as no-clarify)?",
    },
    "upload": {"zh": "上传参考 SRS", "en": "Upload a reference SRS"},
    "continue_without": {"zh": "不用参考，继续", "en": "Continue without"},
    "upload_prompt": {
        "zh": "请上传参考 SRS（.md / .txt / .pdf / .docx，最大 {mb:g} MB）。",
        "en": "Upload the reference SRS (.md / .txt / .pdf / .docx, at most {mb:g} MB).",
    },
    "reference_ok": {
        "zh": "已读取参考 SRS《{name}》：{chars} 个字符（{encoding}）。",
        "en": "Reference SRS “{name}” read: {chars} characters ({encoding}).",
    },
    "need_description": {
        "zh": "请用文字描述要构建的系统（参考 SRS 已保存，可直接发送描述）。",
        "en": "Describe the system to build in words (the reference SRS is kept).",
    },
    "step_name": {"zh": "{agent} · 第 {round} 轮", "en": "{agent} · round {round}"},
    "step_name_single": {"zh": "{agent}", "en": "{agent}"},
    "counts": {
        "zh": "共 {total} 条 · 冻结 {frozen} · 移除 {removed} · 未冻结 {unfrozen} · "
        "{seconds:.1f} 秒 · {tokens} tokens",
        "en": "{total} items · {frozen} frozen · {removed} removed · {unfrozen} unfrozen · "
        "{seconds:.1f} s · {tokens} tokens",
    },
    "frozen_now": {"zh": "本轮冻结：{ids}", "en": "Frozen this round: {ids}"},
    "removed_now": {"zh": "本轮移除：{ids}", "en": "Removed this round: {ids}"},
    "skipped": {"zh": "没有未冻结的条目，跳过。", "en": "Nothing unfrozen left; skipped."},
    "summary": {
        "zh": "✅ 完成：{rounds} 轮 · {items} 条需求 · 冻结 {frozen} · 移除 {removed} · "
        "{tokens} tokens · {seconds:.1f} 秒（{ablation}）",
        "en": "✅ Done: {rounds} · {items} · {frozen} frozen · "
        "{removed} removed · {tokens} tokens · {seconds:.1f} s ({ablation})",
    },
    "continued": {
        "zh": "（文档达到模型的长度上限，已请模型续写 {count} 次）",
        "en": " (the document hit the model's length limit and was continued {count}×)",
    },
    "failed": {
        "zh": "⚠️ SRS 生成失败：{reason} 已完成的步骤已保存。",
        "en": "⚠️ SRS generation failed: {reason} Completed steps are saved.",
    },
    "stopped": {
        "zh": "⏹ 已停止。已完成的步骤已保存，可以从上一个完成的节点继续。",
        "en": "⏹ Stopped. Completed steps are saved; you can resume from the last one.",
    },
    "resume_offer": {
        "zh": "上次的 SRS 运行没有完成（最后完成的节点：{node}）。要从那里继续吗？",
        "en": "The last SRS run did not finish (last completed node: {node}). Resume from there?",
    },
    "resume": {"zh": "继续运行", "en": "Resume"},
    "evaluate": {"zh": "评估", "en": "Evaluate"},
    "review": {"zh": "审阅并改进", "en": "Review & improve"},
    "evaluating": {"zh": "评估", "en": "Evaluation"},
    "selected": {"zh": "已选择：{label}", "en": "Chosen: {label}"},
    "no_choice": {"zh": "等待超时，未做选择。", "en": "Timed out; nothing was chosen."},
    "metric_header": {"zh": "| 指标 | 分数 |", "en": "| Metric | Score |"},
    "evaluation_title": {
        "zh": "📊 与参考 SRS 对比的评估（模型 {model}）",
        "en": "📊 Evaluation against the reference SRS (model {model})",
    },
    "evaluation_failed": {
        "zh": "⚠️ 评估失败：{reason}",
        "en": "⚠️ Evaluation failed: {reason}",
    },
    "srs_file": {"zh": "SRS 文档", "en": "SRS document"},
    "settings_rounds": {"zh": "最大迭代轮数", "en": "Max iterations"},
    "settings_ablation": {"zh": "消融模式", "en": "Ablation"},
}


tr = Catalog(TEXT)
UNKNOWN = "—"  # a count the provider did not send: unknown, never 0


def interaction_log_dir() -> Path:
    return runtime().settings.data_dir / "srs-logs"


async def read_document(path: Path, name: str | None = None):
    """pypdf, python-docx and charset detection are CPU-bound: read off the event loop, so
    other users' sessions keep streaming while a large upload is parsed."""
    return await asyncio.to_thread(
        load_reference, path, name, max_mb=runtime().settings.reference_max_mb
    )


def requirement_table(requirements) -> str:
    index = 0 if lang() == "zh" else 1
    head = "| ID | 类型 | 内容 |" if index == 0 else "| ID | Kind | Text |"
    rows = [head, "|---|---|---|"]
    for item in requirements:
        kind = KIND.get(item.id.split("-")[0], ("", ""))[index]
        rows.append(f"| {item.id} | {kind} | {item.content.replace('|', '/')} |")
    return "\n".join(rows)


def score_table(scores) -> str:
    head = "| ID | 分数 | 理由 |" if lang() == "zh" else "| ID | Score | Reason |"
    rows = [head, "|---|---|---|"]
    rows += [f"| {s.id} | {s.score:+d} | {s.reason.replace('|', '/')} |" for s in scores]
    return "\n".join(rows)


def node_output(event: NodeFinished) -> str:
    parts = []
    if event.skipped:
        parts.append(tr("skipped"))
    if event.scores:
        parts.append(score_table(event.scores))
    if event.frozen_now:
        parts.append(tr("frozen_now", ids=", ".join(event.frozen_now)))
    if event.removed_now:
        parts.append(tr("removed_now", ids=", ".join(event.removed_now)))
    if event.agent != "DocGenerate" and event.requirements:
        parts.append(requirement_table(event.requirements))
    tokens = event.input_tokens + event.output_tokens
    parts.append(
        tr(
            "counts",
            seconds=event.seconds,
            tokens=tokens if tokens or not event.llm_calls else UNKNOWN,
            **{k: event.counts.get(k, 0) for k in ("total", "frozen", "removed", "unfrozen")},
        )
    )
    return "\n\n".join(parts)


def settings_widgets() -> list:
    settings = runtime().settings
    return [
        Slider(
            id="srs_max_iterations",
            label=tr("settings_rounds"),
            initial=settings.srs_max_iterations,
            min=1,
            max=10,
            step=1,
        ),
        Select(
            id="srs_ablation",
            label=tr("settings_ablation"),
            values=["none", "no-clarify", "no-explore-clarify"],
            initial_value="none",
        ),
    ]


async def on_srs_start() -> None:
    await cl.ChatSettings(settings_widgets()).send()
    await send_notice(tr("intro"))


async def read_attachments(message: cl.Message) -> bool:
    """Read attached reference files; report each refusal. False if one was refused."""
    ok = True
    for element in message.elements or []:
        path = getattr(element, "path", None)
        if not path:
            continue
        try:
            document = await read_document(Path(path), element.name)
        except ReferenceDocumentError as error:
            await cl.Message(content=f"⚠️ {error.message(lang())}").send()
            ok = False
            continue
        store_reference(document)  # the attachment's chip is stored by Chainlit
        await cl.Message(
            content=tr(
                "reference_ok",
                name=document.name,
                chars=len(document.text),
                encoding=document.encoding,
            )
        ).send()
    return ok


def store_reference(document) -> None:
    """Keep the reference's text for this thread's runs."""
    cl.user_session.set(
        "srs_reference",
        {"name": document.name, "text": document.text, "encoding": document.encoding},
    )


# --- what a resumed thread must show again --------------------------------------------------
# Files are elements of their messages: Chainlit's data layer keeps them in the configured
# store (ui/storage.py) and shows them again when the thread is opened, on any instance. The
# thread itself keeps only its Evaluate button (actions are not stored).


def thread_file(name: str, content: bytes, mime: str) -> cl.File:
    return cl.File(name=display_name(name), content=content, mime=mime)


async def restore_thread_items() -> None:
    """Show again the Evaluate button the thread had, and the files of a thread written by a
    version before the file store (kept then in this machine's data directory)."""
    for item in cl.user_session.get("srs_files") or []:
        if Path(item["path"]).is_file():
            file = cl.File(
                id=stable_id(item["path"]), name=item["name"], path=item["path"], mime=item["mime"]
            )
            await file.send(for_id=item["for_id"], persist=False)
    last = cl.user_session.get("srs_last_result") or {}
    # The browser keeps actions across its reloads of the thread (not files): once a session.
    shown_key = (cl.context.session.id, "evaluate")
    wanted = last.get("message_id") and cl.user_session.get("srs_reference")
    if wanted and shown_key not in _OFFERED:
        _OFFERED.add(shown_key)
        await evaluate_action(last["message_id"]).send(for_id=last["message_id"])


def evaluate_action(for_id: str) -> cl.Action:
    return cl.Action(
        id=stable_id(f"evaluate:{for_id}"), name="srs_evaluate", payload={}, label=tr("evaluate")
    )


def stable_id(key: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"reqstudio:{key}"))


async def ask_for_reference() -> bool:
    """Ask for the reference when missing. True if one is now stored."""
    answer = await LocalizedAskAction(
        content=tr("ask_reference"),
        actions=[
            cl.Action(name="upload", payload={"choice": "upload"}, label=tr("upload")),
            cl.Action(name="skip", payload={"choice": "skip"}, label=tr("continue_without")),
        ],
        timeout=600,
    ).send()
    if not answer or answer.get("payload", {}).get("choice") != "upload":
        return False
    max_mb = runtime().settings.reference_max_mb
    files = await cl.AskFileMessage(
        content=tr("upload_prompt", mb=max_mb),
        accept=ACCEPT,
        max_size_mb=upload_ceiling_mb(),  # the app refuses bigger files itself, in words
        timeout=600,
    ).send()
    for file in files or []:
        try:
            document = await read_document(Path(file.path), file.name)
        except ReferenceDocumentError as error:
            await cl.Message(content=f"⚠️ {error.message(lang())}").send()
            return False
        read = cl.Message(
            content=tr(
                "reference_ok",
                name=document.name,
                chars=len(document.text),
                encoding=document.encoding,
            )
        )
        store_reference(document)
        # Its chip sits on this message. Chainlit has stored the upload as an element of the
        # question under the same id: sent again here, that one element moves to this message.
        read.elements = [
            cl.File(id=file.id, name=display_name(file.name), path=file.path, mime=file.type)
        ]
        await read.send()
        return True
    return False


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
    )
    sequence = int(cl.user_session.get("srs_run_seq") or 0) + 1
    cl.user_session.set("srs_run_seq", sequence)
    run_key = f"{cl.context.session.thread_id}:{sequence}"
    cl.user_session.set("srs_active_run", run_key)
    await persist_thread_state()
    await render_run(request, run_key, resume=False)


AGENT_ICONS = {
    "ReqParse": "file-search",
    "ReqExplore": "compass",
    "ReqClarify": "list-checks",
    "DocGenerate": "file-text",
}


async def render_run(request: SrsRequest, run_key: str, *, resume: bool) -> None:
    tracker = UsageTracker()
    open_step: cl.Step | None = None
    rounds_shown = 0  # the summary counts rounds as the steps are titled
    offer_removed = False
    document = top_level_message()  # re-created when DocGenerate starts, to sit last
    try:
        # One executor per run across tabs and instances (reqstudio/run_lease.py).
        async with (
            run_lease(runtime().settings, f"srs:{run_key}"),
            open_checkpointer(runtime().settings) as saver,
        ):
            async for event in run_srs(
                request,
                runtime().factory(),
                tracker=tracker,
                checkpointer=saver,
                thread_id=run_key,
                resume=resume,
                log_dir=interaction_log_dir(),
            ):
                if isinstance(event, Notice):
                    text = (
                        event.message_zh if lang() == "zh" and event.message_zh else event.message
                    )
                    await cl.Message(content=f"ℹ️ {text}").send()
                elif isinstance(event, NodeStarted):
                    looping = event.agent in ("ReqExplore", "ReqClarify")
                    if looping:
                        rounds_shown = max(rounds_shown, event.round)
                    open_step = await open_top_level_step(
                        tr(
                            "step_name" if looping else "step_name_single",
                            agent=event.agent,
                            round=event.round,
                        ),
                        "llm",
                        icon=AGENT_ICONS.get(event.agent),
                    )
                    if event.agent == "DocGenerate":
                        document = top_level_message()
                    if resume and not offer_removed:  # once, as the resumed run starts
                        await remove_taken_offer()
                        offer_removed = True
                elif isinstance(event, NodeFinished) and open_step is not None:
                    await finish_step(open_step, output=node_output(event))
                    open_step = None
                elif isinstance(event, DocumentToken):
                    await document.stream_token(event.text)
                elif isinstance(event, DocumentReset):
                    document.content = ""
                    await document.update()
                elif isinstance(event, DocumentContinued):
                    log.info("DocGenerate hit the length limit; continued (%d)", event.count)
                elif isinstance(event, RunFinished):
                    await finish_run(document, event.result, rounds_shown)
                elif isinstance(event, RunFailed):
                    reason = (
                        event.message_zh if lang() == "zh" and event.message_zh else event.message
                    )
                    await finish_step(open_step, "failed", note=reason)
                    open_step = None
                    if event.error_type == "NotADocument":
                        document.content = ""  # what the model wrote is no SRS: not shown as one
                    note = tr("failed", reason=reason)
                    if event.error_type == DATABASE_UNAVAILABLE:  # says itself what is saved
                        note = f"⚠️ {reason}"
                    await show_partial(document, event.partial, note)
    except RunBusy as busy:  # another tab or instance runs it: not started twice
        await cl.Message(content=f"⏳ {busy.message(lang())}").send()
    except asyncio.CancelledError:
        await finish_step(open_step, "stopped", note=tr("stopped"))
        document.content = (document.content + "\n\n" + tr("stopped")).strip()
        await document.send()
        raise
    except Exception as exc:  # keep the app running; completed steps stay in the checkpoint
        log.exception("SRS run failed")
        await finish_step(open_step, "failed", note=describe_failure(exc, lang()))
        text = tr("failed", reason=describe_failure(exc, lang()))
        if is_database_failure(exc):  # before any step ran: nothing changed
            text = f"⚠️ {describe_not_run(exc, lang())}"
        await cl.Message(content=text).send()


async def show_partial(document: cl.Message, partial: SrsResult | None, note: str) -> None:
    body = document.content
    if partial is not None and partial.requirements and not body:
        body = requirement_table(partial.requirements)
    document.content = f"{body}\n\n{note}".strip()
    await document.send()


async def finish_run(document: cl.Message, result: SrsResult, rounds_shown: int = 0) -> None:
    cl.user_session.set("srs_last_result", {"srs": result.srs_markdown, "message_id": document.id})
    summary = tr(
        "summary",
        rounds=counted(max(result.rounds, rounds_shown), "round"),
        items=counted(len(result.requirements), "requirement"),
        frozen=len(result.frozen_ids),
        removed=len(result.removed_ids),
        tokens=result.usage.get("total_tokens") or (UNKNOWN if result.usage.get("calls") else 0),
        seconds=result.seconds,
        ablation=result.ablation_used,
    )
    if result.continuations:
        summary += tr("continued", count=result.continuations)
    document.content = f"{result.srs_markdown}\n\n---\n{summary}"
    log_json = json.dumps(
        {"logs": result.logs, "usage": result.usage}, ensure_ascii=False, indent=2
    )
    document.elements = [
        thread_file("srs.md", result.srs_markdown.encode(), "text/markdown"),
        thread_file("srs-log.json", log_json.encode(), "application/json"),
    ]
    document.actions = [cl.Action(name="srs_review", payload={}, label=tr("review"))]
    if cl.user_session.get("srs_reference"):
        document.actions.append(evaluate_action(document.id))
    await document.send()
    await persist_thread_state()


@cl.action_callback("srs_review")
async def on_review(action: cl.Action) -> None:
    """Review mode's loop on the SRS just written, in this thread; Evaluate then scores the
    improved SRS, so the metrics before and after can be compared."""
    from ui.review import review_generated_srs  # Review mode's adapter; imported on use

    current = (cl.user_session.get("srs_last_result") or {}).get("srs", "")
    if not current:
        return
    improved = await review_generated_srs(current)
    if improved is None:
        return
    offer = cl.Message(content=tr("evaluate"))
    cl.user_session.set(
        "srs_last_result", {"srs": improved, "srs_before_review": current, "message_id": offer.id}
    )
    await persist_thread_state()
    if cl.user_session.get("srs_reference"):
        offer.actions = [evaluate_action(offer.id)]
        await offer.send()


@cl.action_callback("srs_evaluate")
async def on_evaluate(action: cl.Action) -> None:
    await run_as_task(evaluate_last_result)


async def evaluate_last_result() -> None:
    reference = (cl.user_session.get("srs_reference") or {}).get("text", "")
    candidate = (cl.user_session.get("srs_last_result") or {}).get("srs", "")
    if not reference or not candidate:
        return
    step = await open_top_level_step(tr("evaluating"), "llm", icon="gauge")
    try:
        result = await evaluate_srs(reference, candidate, runtime().factory())
    except asyncio.CancelledError:
        await finish_step(step, "stopped")
        raise
    except Exception as exc:
        reason = describe_failure(exc, lang())
        await finish_step(step, "failed", output=reason)
        await cl.Message(content=tr("evaluation_failed", reason=reason)).send()
        return
    details = f"```json\n{json.dumps(result, ensure_ascii=False, indent=2)}\n```"
    await finish_step(step, "failed" if "error" in result else "done", output=details)
    await cl.Message(content=evaluation_table(result)).send()


METRIC_LABELS: dict[str, tuple[str, str]] = {
    "coverage": ("覆盖率", "Coverage"),
    "completeness": ("完整性", "Completeness"),
    "consistency": ("一致性", "Consistency"),
    "testability": ("可测试性", "Testability"),
    "clarity": ("清晰度", "Clarity"),
    "traceability": ("可追溯性", "Traceability"),
    "scope_discipline": ("范围控制", "Scope discipline"),
    "by_category.functional": ("功能需求覆盖", "Functional requirements"),
    "by_category.non_functional": ("非功能需求覆盖", "Non-functional requirements"),
    "by_category.constraints": ("约束覆盖", "Constraints"),
    "Comprehensive_Score_Simple": ("综合得分（简单平均）", "Overall score (simple mean)"),
    "Comprehensive_Score_Weighted": ("综合得分（加权）", "Overall score (weighted)"),
}


def metric_label(key: str) -> str:
    """A readable name in the user's language, with the seed's key in small print."""
    zh, en = METRIC_LABELS.get(key, (key, key))
    return f"{zh if lang() == 'zh' else en} `{key}`"


EVALUATION_ERRORS = {
    NOT_JSON_ERROR: {"zh": NOT_JSON_ERROR, "en": "the model's answer was not valid JSON"},
    OUT_OF_RANGE_ERROR: {
        "zh": "模型给出的评分不在 0-1 范围内（已重新询问），结果不予采用",
        "en": "the model gave scores outside 0-1 (also when asked again); no result is shown",
    },
}


def evaluation_table(result: dict[str, Any]) -> str:
    if "error" in result:
        error = str(result["error"])
        reason = EVALUATION_ERRORS.get(error, {}).get(lang(), error)
        return tr("evaluation_failed", reason=reason)
    metrics = result.get("metrics", {})
    rows = [tr("evaluation_title", model=result.get("model", "")), "", tr("metric_header")]
    rows.append("|---|---|")
    for name in METRICS:
        if name in metrics:
            rows.append(f"| {metric_label(name)} | {float(metrics[name]):.2f} |")
    for name, value in (metrics.get("by_category") or {}).items():
        rows.append(f"| {metric_label('by_category.' + name)} | {float(value):.2f} |")
    for name in ("Comprehensive_Score_Simple", "Comprehensive_Score_Weighted"):
        if name in result:
            rows.append(f"| **{metric_label(name)}** | **{float(result[name]):.2f}** |")
    return "\n".join(rows)


async def on_srs_resume(thread: dict) -> None:
    await cl.ChatSettings(settings_widgets()).send()
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


# (browser session, run) pairs already offered: restoring the thread's mode makes the browser
# reconnect, which runs on_chat_resume a second time.
_OFFERED: set[tuple[str, str]] = set()


async def offer_resume() -> None:
    run_key = cl.user_session.get("srs_active_run")
    offer_key = (cl.context.session.id, str(run_key))
    if not run_key or offer_key in _OFFERED:
        return
    _OFFERED.add(offer_key)
    try:
        async with open_checkpointer(runtime().settings) as saver:
            node = await pending_resume(saver, run_key)
    except Exception:  # the database is away: no offer now, the next resume asks again
        log.exception("could not read the SRS checkpoint")
        _OFFERED.discard(offer_key)
        return
    if node:
        offer = cl.Message(
            content=tr("resume_offer", node=node),
            actions=[cl.Action(name="srs_resume", payload={"run": run_key}, label=tr("resume"))],
        )
        await offer.send()
        cl.user_session.set("srs_offer", {"session": cl.context.session.id, "ids": [offer.id]})
        await persist_thread_state()


@cl.action_callback("srs_resume")
async def on_resume_action(action: cl.Action) -> None:
    # The browser may reconnect while the thread loads and miss this removal: the offer is
    # removed again on every reconnect (restore_and_offer), and a run already going is not
    # started twice.
    cl.user_session.set("srs_offer_taken", action.to_dict())
    await action.remove()
    running = cl.context.session.current_task
    if running is not None and not running.done():
        return
    run_key = action.payload.get("run") or cl.user_session.get("srs_active_run")
    await run_as_task(lambda: render_run(SrsRequest(user_input="(resumed)"), run_key, resume=True))


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


SRS_MODE = ModeSpec(
    id="SRS",
    title={"zh": "SRS 生成", "en": "SRS"},
    description={
        "zh": "描述系统并上传参考 SRS，智能体逐步解析、挖掘、澄清需求并生成 IEEE 830 SRS。",
        "en": "Describe a system and attach a reference SRS; agents parse, explore and clarify "
        "requirements and write an IEEE 830 SRS.",
    },
    on_message=on_srs_message,
    on_start=on_srs_start,
    on_resume=on_srs_resume,
    thread_title=lambda description: f"SRS · {system_name(description)}",
    starters=[
        StarterSpec(
            label={"zh": "在线商店 e-Store", "en": "An e-Store"},
            message={
                "zh": "我们要做一个在线电子商店：顾客浏览商品目录、配置并购买电脑，维护个人资料，"
                "查看订单与发货状态；管理员维护商品与价格。支付使用信用卡，需要 7×24 小时可用。",
                "en": "We want an online e-store: customers browse a catalog, configure and buy "
                "computers, keep a profile, track orders and shipping; admins maintain products "
                "and prices. Payment by credit card; available 24×7.",
            },
        ),
        StarterSpec(
            label={"zh": "图书馆借阅系统", "en": "A library lending system"},
            message={
                "zh": "为高校图书馆设计借阅系统：读者检索、预约、借还图书，逾期自动罚款；"
                "馆员管理馆藏；需对接校园统一身份认证。",
                "en": "A university library lending system: readers search, reserve, borrow and "
                "return books with automatic overdue fines; librarians manage the collection; "
                "sign-in through the campus identity provider.",
            },
        ),
    ],
)
