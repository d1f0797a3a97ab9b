"""Browser fixtures: Debian's chromium driven by Playwright against the app as users run it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from reqstudio.scripted_server import ScriptedLLMServer
from tests.apps import AppProcess

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


# Module scope: sync Playwright keeps an event loop running in this thread while it is open,
# which async tests in other modules cannot share.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is not installed; run the README's test command")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


def provider_env(server: ScriptedLLMServer) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-test-not-a-real-key",
        "OPENAI_MODEL": "scripted-model",
        "OPENAI_MAX_RETRIES": "1",
    }


@pytest.fixture
def app(llm_server: ScriptedLLMServer, tmp_path: Path) -> Iterator[AppProcess]:
    """The app on a free port, talking to the scripted server, with a fresh data directory."""
    process = AppProcess(tmp_path / "data", provider_env(llm_server)).start()
    yield process
    process.stop()


def open_page(browser: Browser, url: str, locale: str = "zh-CN") -> Page:
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(url)
    return page


def send(page: Page, text: str) -> None:
    """Type and send as a user does: once the previous answer has finished."""
    expect(page.locator("#stop-button")).to_have_count(0, timeout=60_000)
    page.locator("#chat-input").fill(text)
    expect(page.locator("#chat-submit")).to_be_enabled(timeout=30_000)
    page.locator("#chat-submit").click()
