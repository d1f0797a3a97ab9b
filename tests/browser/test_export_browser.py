"""A thread as Markdown from the header's export button, to its author only."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.apps import AppProcess
from tests.browser.test_admin_browser import data_with_users, log_in
from tests.browser_support import provider_env, send, wait_until_idle
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser


@pytest.mark.failed_requests(r"^401 (GET /user|POST /login)$")
def test_the_author_exports_a_thread_as_markdown_and_nobody_else_can(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path
):
    data = data_with_users(tmp_path, "alice", "bob")
    app = AppProcess(data, provider_env(llm_server)).start()
    try:
        llm_server.script(Reply(content="借阅期限为 30 天。"), Reply(content="可以续借一次。"))
        alice = log_in(browser, app, "alice")
        send(alice, "借阅期限是多久？")
        expect(alice.get_by_text("借阅期限为 30 天。")).to_be_visible()
        send(alice, "可以续借吗？")
        expect(alice.get_by_text("可以续借一次。")).to_be_visible()
        wait_until_idle(alice)
        thread_id = re.search(r"/thread/([0-9a-f-]+)", alice.url).group(1)
        button = alice.locator("#reqstudio-export")
        expect(button).to_have_text("⤓ 导出 Markdown")
        alice.screenshot(path=output_dir / "export-button-zh-CN.png")
        with alice.expect_download() as download:
            button.click()
        markdown = Path(download.value.path()).read_text(encoding="utf-8")
        assert download.value.suggested_filename.endswith(".md")
        assert markdown.startswith("# Chat · 借阅期限是多久？\n")
        order = [markdown.index(t) for t in ("借阅期限是多久？\n", "借阅期限为 30 天。",
                                             "可以续借吗？", "可以续借一次。")]  # fmt: skip
        assert order == sorted(order)
        assert "## 🧑 alice" in markdown and "## ReqStudio" in markdown

        bob = log_in(browser, app, "bob")
        cookies = {c["name"]: c["value"] for c in bob.context.cookies()}
        refused = httpx.get(f"{app.url}/reqstudio/export/{thread_id}", cookies=cookies, timeout=30)
        assert refused.status_code == 404 and "借阅" not in refused.text
        anonymous = httpx.get(f"{app.url}/reqstudio/export/{thread_id}", timeout=30)
        assert anonymous.status_code in (401, 404) and "借阅" not in anonymous.text
    finally:
        app.stop()
