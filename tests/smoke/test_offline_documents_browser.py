"""Smoke, in the browser: SRS and Rewrite with the bundled offline model end honestly.

The 135M model, asked for documents, gives back its prompts ("IEEE Std 830-1998 [JSON] [FR-01,
…]", "Title of the new document", "你是一位资深的技术文档作者…"). The run must end
with a failure line naming the stage and why, never "✅" over such junk; a real document may
come instead (the model varies): then it must not be the prompt given back, and it is marked
as the demo model's result, never ticked."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.apps import AppProcess
from tests.browser_support import attach, click_until, open_page, send, switch_mode
from tests.cli_support import require_offline_model
from tests.rewrite_support import ORIGINAL_EN

pytestmark = [pytest.mark.smoke, pytest.mark.browser]

JUNK = (
    "[JSON]",
    "Title of the new document",
    "<section written so far>",
    "你是一位资深的技术文档作者",
)


@pytest.fixture
def offline_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    require_offline_model()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    app = AppProcess(tmp_path / "data").start()
    try:
        yield app
    finally:
        app.stop()


def go_on_without(page: Page, button: str, first_step: str) -> None:
    """Decline what the run offers first (a reference, questions) and see its first step
    begin (the offline model takes a while to load)."""
    click_until(
        page.get_by_role("button", name=button),
        page.get_by_text(first_step, exact=False).first,
        timeout=60_000,
    )


def ends_honestly(page: Page, done: str, failed: str, why: str, screenshot: Path) -> None:
    """The run's last word is the done line or the failure line, whichever comes: done, the
    page holds no junk and no tick; failed, it says why and shows no done line."""
    either = page.get_by_text(done, exact=False).or_(page.get_by_text(failed, exact=False))
    expect(either.first).to_be_visible(timeout=600_000)
    page.screenshot(path=screenshot, full_page=True)
    if page.get_by_text(done, exact=False).count() > 0:
        body = page.locator("body").inner_text()
        assert not any(junk in body for junk in JUNK), body[-3000:]
        assert "✅" not in body, body[-3000:]
    else:
        expect(page.get_by_text(why, exact=False).first).to_be_visible()
        expect(page.get_by_text(done, exact=False)).to_have_count(0)


def test_srs_with_the_offline_model_never_ticks_junk(
    browser: Browser, offline_app: AppProcess, output_dir: Path
):
    page = open_page(browser, offline_app.url, "zh-CN")
    switch_mode(page, "SRS 生成")
    expect(page.get_by_text("已启用 SRS 生成 模式")).to_be_visible()
    send(page, "一个网上书店：顾客浏览图书、下单并在线支付。")
    go_on_without(page, "不用参考，继续", "ReqParse")
    ends_honestly(
        page, "🧪 离线演示模型的结果", "SRS 生成失败", "DocGenerate：模型的回答不是 SRS 文档",
        output_dir / "srs-offline-model-end.png",
    )  # fmt: skip


def test_rewrite_with_the_offline_model_never_ticks_junk(
    browser: Browser, offline_app: AppProcess, tmp_path: Path, output_dir: Path
):
    original = tmp_path / "clinic.md"
    original.write_text(ORIGINAL_EN, encoding="utf-8")
    page = open_page(browser, offline_app.url, "en-US")
    switch_mode(page, "Rewrite")
    expect(page.get_by_text("Upload the original document to rewrite", exact=False)).to_be_visible()
    attach(page, str(original))
    send(page, "Rewrite this document")
    expect(page.get_by_text("Original document “clinic.md” read", exact=False)).to_be_visible()
    go_on_without(page, "Rewrite without", "Outline")
    ends_honestly(
        page, "🧪 The offline demo model's result", "❌ The rewrite failed", "is not a document",
        output_dir / "rewrite-offline-model-end.png",
    )  # fmt: skip
