"""What a first-time user meets around uploads and mode switches: the
upload box shows one size limit, the app's; switching mode says the thread stays in the
history, and it does."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.apps import AppProcess
from tests.browser_support import open_page, send, wait_until_idle
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(
    ("locale", "srs", "upload", "limit", "read"),
    [("zh-CN", "SRS 生成", "上传参考 SRS", "最大 10 MB", "已读取参考 SRS"),
     ("en-US", "SRS", "Upload a reference SRS", "at most 10 MB", "Reference SRS “reference.md” read")],
)  # fmt: skip
def test_the_upload_box_shows_the_app_s_limit_only(
    browser: Browser, app: AppProcess, tmp_path: Path, output_dir: Path,
    locale: str, srs: str, upload: str, limit: str, read: str,
):  # fmt: skip
    page = open_page(browser, app.url, locale)
    page.locator("#chat-profiles").click()
    page.get_by_role("option", name=srs, exact=True).click()
    send(page, "A library lending system")
    page.get_by_role("button", name=upload).click()
    # the question stays once answered, the choice below it
    question = "No reference SRS yet" if locale == "en-US" else "还没有参考 SRS"
    answered = page.locator('[data-step-type="assistant_message"]').filter(has_text=question)
    expect(answered.last).to_contain_text(upload)  # "Selected: …" / "已选择：…" below it
    expect(page.get_by_text(limit, exact=False).last).to_be_visible()
    expect(page.get_by_text("100mb", exact=False)).to_be_hidden()  # Chainlit's ceiling
    box = page.locator("#ask-button-input").locator("..")
    expect(box).to_be_visible()
    page.screenshot(path=output_dir / f"upload-box-{locale}.png")
    reference = tmp_path / "reference.md"
    reference.write_text("# SRS\n\n## 1. Introduction\n\nThe library lends books.\n", "utf-8")
    page.locator("#ask-button-input").set_input_files(reference)
    expect(page.get_by_text(read, exact=False).first).to_be_visible()


def test_switching_mode_says_the_thread_stays_and_it_does(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer
):
    llm_server.script(Reply(content="好的，记下了。"))
    page = open_page(browser, app.url, "zh-CN")
    send(page, "审批流程需要两级审核")
    expect(page.get_by_text("好的，记下了。")).to_be_visible()
    wait_until_idle(page)
    page.locator("#chat-profiles").click()
    page.get_by_role("option", name="Agent 智能体").click()
    expect(page.get_by_text("当前对话会保留在历史记录中")).to_be_visible()
    page.locator("#confirm").click()
    expect(page.get_by_text("已启用 Agent 智能体 模式")).to_be_visible()
    thread = page.locator("#thread-history").get_by_text("审批流程需要两级审核")
    expect(thread).to_be_visible()
    thread.click()
    expect(page.get_by_text("好的，记下了。")).to_be_visible()


def test_a_reload_keeps_the_thread_s_mode_and_the_history_names_it(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer
):
    llm_server.script(Reply(content="不需要工具。"), Reply(content="IEEE 830 已被 29148 取代。"))
    page = open_page(browser, app.url, "zh-CN")
    page.locator("#chat-profiles").click()
    page.get_by_role("option", name="Agent 智能体").click()
    send(page, "哪个标准取代了 IEEE 830？\n请简要回答。")
    expect(page.get_by_text("IEEE 830 已被 29148 取代。")).to_be_visible()
    wait_until_idle(page)
    # the history names the thread by its mode and its first line
    expect(
        page.locator("#thread-history").get_by_text("Agent · 哪个标准取代了 IEEE 830？")
    ).to_be_visible()
    page.reload()
    expect(page.locator("#chat-profiles")).to_contain_text("Agent 智能体")
    expect(page.get_by_text("IEEE 830 已被 29148 取代。")).to_be_visible()


@pytest.mark.parametrize(
    ("locale", "review", "starter"),
    [
        ("zh-CN", "Review 审阅", "审阅一份预约系统 SRS"),
        ("en-US", "Review", "Review a booking system SRS"),
    ],
)
def test_review_shows_its_starters_on_a_new_thread(
    browser: Browser, app: AppProcess, locale: str, review: str, starter: str
):
    page = open_page(browser, app.url, locale)
    page.locator("#chat-profiles").click()
    page.get_by_role("option", name=review, exact=True).click()
    expect(page.locator("#starters").get_by_text(starter)).to_be_visible()
