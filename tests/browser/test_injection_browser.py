"""A hostile document is shown as text, never run: a real browser gets
`<script>`, `<img onerror>`, a `javascript:` link and raw HTML in the user's message, the
model's answer, the Agent's reasoning and tool steps, and an attachment's name. Each payload
would set a flag on the page or open a dialog if it ran: neither happens, and no element
the payload describes (a script, an image with a handler, a javascript: link, an iframe) is
in the page."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Dialog, Page, expect

from tests.agent_support import one_call_then_answer
from tests.apps import AppProcess
from tests.browser_support import attach, open_page, send, switch_mode, wait_until_idle
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript
from tests.test_srs_support import (
    E_STORE,
    one_requirement_run,
)

pytestmark = pytest.mark.browser

HOSTILE = (
    "# 需求 <b>加粗</b>\n\n"
    "<script>window.__pwned = 'script'; alert('script')</script>\n\n"
    "<img src=\"x\" onerror=\"window.__pwned = 'img'; alert('img')\">\n\n"
    "[点这里](javascript:window.__pwned='link';alert('link'))\n\n"
    "<iframe srcdoc=\"<script>parent.__pwned='iframe'</script>\"></iframe>\n\n"
    '<a href="javascript:alert(1)" id="raw-link">原始链接</a>\n\n'
    "<svg onload=\"window.__pwned='svg'\"></svg> 结束标记 END-OF-DOC"
)
HOSTILE_NAME = "<img src=x onerror=alert('name')>.md"
HOSTILE_REQUIREMENT = (
    "<img src=x onerror=\"window.__pwned='req'\"><script>alert('req')</script>顾客浏览商品"
)


def nothing_ran(page: Page, dialogs: list[Dialog]) -> None:
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []
    for selector in (
        "#root script",
        "img[onerror]",
        "svg[onload]",
        "a[href^='javascript:' i]",
        "iframe",
    ):
        assert page.locator(selector).count() == 0, selector


def run_and_open_steps(page: Page, message: str, ended: str, steps: tuple[str, ...], timeout: int):
    """Send the message, wait for the run's end (its text shown, the chat idle), then open each
    step named."""
    send(page, message)
    expect(page.get_by_text(ended, exact=False)).to_be_visible(timeout=timeout)
    wait_until_idle(page)
    for step in steps:
        page.get_by_text(step, exact=False).first.click()


def test_hostile_markup_is_shown_as_text_in_chat_and_steps(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, tmp_path: Path
):
    dialogs: list[Dialog] = []
    page = open_page(browser, app.url, "zh-CN")
    page.on("dialog", lambda dialog: (dialogs.append(dialog), dialog.dismiss()))
    expect(page.get_by_text("已启用 Chat 对话 模式")).to_be_visible()  # the session is there

    # Chat: the document in the user's message, an attachment with a hostile name, and the
    # model's answer quoting the document
    upload = tmp_path / HOSTILE_NAME
    upload.write_text(HOSTILE, encoding="utf-8")
    llm_server.script(Reply(content=f"你的文档原文：\n\n{HOSTILE}"))
    attach(page, str(upload))
    send(page, HOSTILE)
    expect(page.get_by_text("你的文档原文", exact=False)).to_be_visible()
    wait_until_idle(page)
    expect(page.get_by_text("END-OF-DOC", exact=False).first).to_be_visible()
    expect(page.get_by_text("onerror", exact=False).first).to_be_visible()  # shown as text
    page.get_by_text("点这里", exact=False).first.click()  # a link would run its script
    nothing_ran(page, dialogs)

    # Agent: the document in the reasoning step, a tool call's arguments and the answer
    switch_mode(page, "Agent 智能体", confirm=True)
    expect(page.get_by_text("已启用 Agent 智能体 模式")).to_be_visible()
    hostile_call = ToolCallScript("get_current_time", {"timezone": HOSTILE[:120]})
    llm_server.script(
        *one_call_then_answer(HOSTILE, "够了。", f"结论：\n\n{HOSTILE}", hostile_call)
    )
    run_and_open_steps(
        page, "按这份文档回答", "结论：", ("思考 · 第 1 轮", "MCP · get_current_time"), 60_000
    )
    expect(page.get_by_text("window.__pwned", exact=False).first).to_be_visible()
    nothing_ran(page, dialogs)

    # and after the thread is opened again from the history, as stored
    page.reload()
    expect(page.get_by_text("结论：", exact=False)).to_be_visible(timeout=60_000)
    page.get_by_text("思考 · 第 1 轮", exact=False).first.click()
    nothing_ran(page, dialogs)

    # SRS: requirements in the steps' tables, the document in the chat and its download
    switch_mode(page, "SRS 生成", confirm=True)
    expect(page.get_by_text("请描述要构建的系统")).to_be_visible()
    llm_server.script(
        *one_requirement_run(HOSTILE_REQUIREMENT, HOSTILE_REQUIREMENT, HOSTILE),
    )
    attach(page, str(E_STORE / "reference.md"))
    run_and_open_steps(
        page, "一个在线商店。", "✅ 完成", ("ReqParse", "ReqClarify · 第 1 轮"), 90_000
    )
    expect(page.get_by_text("顾客浏览商品", exact=False).first).to_be_visible()
    with page.expect_download() as download:
        page.get_by_text("srs.md").first.click()
    assert "<script>" in Path(download.value.path()).read_text(encoding="utf-8")  # as written
    nothing_ran(page, dialogs)
