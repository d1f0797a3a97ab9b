"""Prompt injection in a real browser: the Agent reads a hostile document
through a real MCP server and the scripted model obeys it, calling a tool that writes. The
chat asks the user first: refused, nothing is written and the step says why; allowed, the
tool runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.apps import AppProcess
from tests.browser_support import click_until, open_page, provider_env, send, wait_until_idle
from tests.scripted_server import ScriptedLLMServer
from tests.test_tool_confirmation import INJECTED, notes_config, obeying_model

pytestmark = pytest.mark.browser


def test_a_tool_that_writes_asks_the_user_first(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path
):
    config, notes = notes_config(tmp_path)
    env = provider_env(llm_server) | {"REQSTUDIO_MCP_CONFIG": str(config)}
    app = AppProcess(tmp_path / "data", env).start()
    try:
        page = open_page(browser, app.url, "zh-CN")
        page.locator("#chat-profiles").click()
        page.get_by_role("option", name="Agent 智能体").click()
        expect(page.get_by_text("write_note", exact=False).first).to_be_visible(timeout=30_000)

        obeying_model(llm_server)
        send(page, "总结共享需求文档")
        question = page.get_by_text("Agent 想调用 write_note", exact=False)
        expect(question).to_be_visible(timeout=60_000)
        expect(page.get_by_text(INJECTED, exact=False).first).to_be_visible()  # its arguments
        page.screenshot(path=output_dir / "agent-tool-confirmation.png")
        click_until(page.get_by_role("button", name="拒绝"), page.get_by_text("已选择：拒绝"))
        expect(page.get_by_text("文档列出两条需求", exact=False)).to_be_visible(timeout=60_000)
        wait_until_idle(page)
        assert not notes.exists()
        refused = page.get_by_text(re.compile(r"MCP · write_note · 失败$")).first
        refused.click()
        expect(page.get_by_text("was NOT run", exact=False).first).to_be_visible()

        obeying_model(llm_server)
        send(page, "再总结一次")
        expect(page.get_by_role("button", name="允许调用")).to_be_visible(timeout=60_000)
        click_until(
            page.get_by_role("button", name="允许调用"), page.get_by_text("已选择：允许调用")
        )
        expect(page.get_by_text("文档列出两条需求", exact=False).nth(1)).to_be_visible(
            timeout=60_000
        )
        wait_until_idle(page)
        assert notes.read_text(encoding="utf-8") == INJECTED + "\n"
    finally:
        app.stop()
