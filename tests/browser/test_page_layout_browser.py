"""What the page draws around the app's texts: a new chat's notice
above the composer, a pasted 200 KB message folded, and Chinese for an unlabelled code block."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, expect

from tests.apps import AppProcess
from tests.browser_support import THREAD_PAGE, open_page, send, top_of, wait_until_idle
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser

USER_TEXT = '.step[data-step-type="user_message"] .message-content'


def height(locator: Locator) -> float:
    # measured in one step in the page (see `top_of`)
    return locator.evaluate("e => e.getBoundingClientRect().height")


def after_label(locator: Locator) -> str:
    return locator.evaluate("e => getComputedStyle(e, '::after').content")


def test_the_mode_notice_reads_above_the_composer_and_its_starters(
    browser: Browser, app: AppProcess
):
    page = open_page(browser, app.url, "zh-CN")
    notice = page.get_by_text("已启用 Chat 对话 模式")
    expect(notice).to_be_visible()
    expect(page.locator("#starters")).to_be_visible()
    tops = {
        "notice": top_of(notice),
        "composer": top_of(page.locator("#message-composer")),
        "starters": top_of(page.locator("#starters")),
    }
    assert tops["notice"] < tops["composer"] < tops["starters"], tops


def test_a_pasted_200_kb_message_folds_and_opens_on_a_click(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    document = "\n".join(
        f"FR-{n:04d} The system shall record every loan of item {n} with its due date."
        for n in range(2800)
    )
    assert len(document.encode()) > 200_000
    llm_server.script(Reply(content="收到这份很长的需求清单。"))
    page = open_page(browser, app.url, "zh-CN")
    expect(page.get_by_text("已启用 Chat 对话 模式")).to_be_visible()
    # pasted, as a user does: one insertion (typing it, as `fill` does, takes minutes)
    page.locator("#chat-input").focus()
    page.keyboard.insert_text(document)
    page.locator("#chat-submit").click()
    expect(page).to_have_url(THREAD_PAGE, timeout=60_000)  # the thread's page, mounted anew
    expect(page.get_by_text("收到这份很长的需求清单。")).to_be_visible()
    wait_until_idle(page)
    message = page.locator(USER_TEXT).last
    expect(message).to_have_attribute("data-reqstudio-fold", "folded")
    assert height(message) < 300
    assert after_label(message) == '"展开全文 ▾"'
    page.screenshot(path=output_dir / "long-message-folded-zh-CN.png")
    message.click()
    expect(message).to_have_attribute("data-reqstudio-fold", "open")
    assert height(message) > 20_000  # every line shows
    expect(message.get_by_text("FR-2799 The system shall record")).to_be_visible()
    assert llm_server.requests[-1]["messages"][-1]["content"] == document  # sent whole


def test_an_unlabelled_code_block_is_headed_in_chinese(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer
):
    llm_server.script(Reply(content="示例：\n\n```\nGET /books?available=true\n```\n"))
    page = open_page(browser, app.url, "zh-CN")
    expect(page.get_by_text("已启用 Chat 对话 模式")).to_be_visible()
    send(page, "给一个查询示例")
    expect(page.get_by_text("GET /books?available=true")).to_be_visible()
    expect(page.get_by_text("代码", exact=True)).to_be_visible()
    expect(page.get_by_text("Raw code", exact=True)).to_have_count(0)


def test_a_file_over_chainlits_upload_gate_is_refused_in_chinese(
    browser: Browser, app: AppProcess, output_dir: Path
):
    # Chainlit's gate sits far above the app's limit (the app refuses in words); past it the
    # browser refuses before any upload, in a toast Chainlit writes in English only.
    page = open_page(browser, app.url, "zh-CN")
    expect(page.get_by_text("已启用 Chat 对话 模式")).to_be_visible()
    gate = page.locator("#upload-button-input").evaluate(
        """input => {
            const big = new File([new Uint8Array(1001 * 1000 * 1000 / 10)], "huge.md", {
                type: "text/markdown",
            });
            const files = new DataTransfer();
            files.items.add(big);
            input.files = files.files;
            input.dispatchEvent(new Event("change", { bubbles: true }));
            return big.size;
        }"""
    )
    assert gate > 100 * 1000 * 1000  # over the gate of 100 MB (REQSTUDIO_REFERENCE_MAX_MB × 10)
    expect(page.get_by_text("文件大于 100 MB，无法上传。")).to_be_visible()
    expect(page.get_by_text("File is larger than", exact=False)).to_have_count(0)
    expect(page.locator("#attachments")).to_have_count(0)  # nothing was taken
    page.screenshot(path=output_dir / "upload-gate-zh-CN.png")
    # a type the app does not read: Chainlit's English "File type must be ..." likewise
    page.locator("#upload-button-input").set_input_files(
        files=[{"name": "photo.png", "mimeType": "image/png", "buffer": b"\x89PNG\r\n"}]
    )
    expect(page.get_by_text("不支持此文件类型。可上传的类型：", exact=False)).to_be_visible()
    expect(page.get_by_text("File type must be", exact=False)).to_have_count(0)
