"""Agent mode with a provider that gives back its last user message: the answer is the
user's question given back, never the hand-over the app wrote for the answer model, in zh-CN and en-US."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.apps import AppProcess
from tests.browser_support import open_page, provider_env, send, wait_until_idle
from tests.mode_walk import MODE_TITLES
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser

APP_WORDING = (
    "Research results",
    "No research results",
    "Research notes",
    "Write the final answer",
)


@pytest.mark.parametrize(
    ("locale", "question"),
    [("zh-CN", "哪个标准取代了 IEEE 830？"), ("en-US", "Which standard replaced IEEE 830?")],
)
def test_an_echoing_provider_gives_back_the_question_not_the_app_s_wording(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path,
    locale: str, question: str,
):  # fmt: skip
    app = AppProcess(tmp_path / "data", provider_env(llm_server) | {"REQSTUDIO_MCP_CONFIG": "off"})
    app.start()
    try:
        # the function-call model writes notes; the answer model echoes (nothing scripted)
        llm_server.script(Reply(content="IEEE 830 was superseded by ISO/IEC/IEEE 29148."))
        page = open_page(browser, app.url, locale)
        page.locator("#chat-profiles").click()
        page.get_by_role("option", name=MODE_TITLES["agent"][locale], exact=True).click()
        send(page, question)
        expect(page.get_by_text(f"Echo: {question}")).to_be_visible()
        wait_until_idle(page)
        answers = page.locator('[data-step-type="assistant_message"]').all_inner_texts()
        shown = "\n".join(answers)
        for wording in APP_WORDING:
            assert wording not in shown
        page.screenshot(path=output_dir / f"agent-echo-{locale}.png")
    finally:
        app.stop()
