"""Browser fixtures: Debian's chromium driven by Playwright against the app as users run it."""

from __future__ import annotations

import contextlib
import re
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


# Budget for a condition to become true. Under load (other processes on the 2 cores) the app
# needs more than Playwright's default 5 s to render a step; every wait below is still on a
# condition, never a sleep.
expect.set_options(timeout=20_000)


FAILURE_SHOTS = Path(__file__).resolve().parent.parent / "test-output" / "failures"
_PAGES: list[Page] = []  # the pages of the running test, photographed if it fails


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """A failed browser test leaves a screenshot of each page it still had open, so that a
    failure in CI can be seen, not only read."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed and _PAGES:
        FAILURE_SHOTS.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^\w.-]+", "_", item.name)[:120]
        for number, page in enumerate(_PAGES, start=1):
            if not page.is_closed():
                with contextlib.suppress(Exception):  # a crashed page: the report stands
                    page.screenshot(path=FAILURE_SHOTS / f"{name}-{number}.png", full_page=True)
    if report.when == "teardown":
        _PAGES.clear()


def open_page(browser: Browser, url: str, locale: str = "zh-CN", *, ready: bool = True) -> Page:
    """A new browser page on the app. `ready`: wait until a user could type (the header-auth
    round trip through /login is over and the composer is there); pass False for a page
    that stops at the login form."""
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 860})
    page = context.new_page()
    _PAGES.append(page)
    page.set_default_timeout(30_000)
    page.goto(url)
    if ready:
        expect(page.locator("#chat-input")).to_be_visible(timeout=60_000)
    return page


def wait_until_idle(page: Page) -> None:
    """Until the running task has ended: an answer shows in the browser before its handler
    has stored the turn (memory, thread metadata); closing the page or stopping the app
    earlier loses what the next session should find."""
    expect(page.locator("#stop-button")).to_have_count(0, timeout=60_000)


def send(page: Page, text: str) -> None:
    """Type and send as a user does: once the previous answer's task has ended.

    The submit button is enabled only when the app is idle and connected and the composer's
    own state holds text. The previous task may still be saving the thread after its answer
    was shown, and a fill that races a re-render of the composer reaches the page but not
    the composer's state (the button then stays disabled): a user would type again, and so
    does this, up to three times, saving a screenshot if the text is still not taken."""
    composer = page.locator("#chat-input")
    submit = page.locator("#chat-submit")
    wait_until_idle(page)
    for attempt in range(1, 4):
        composer.fill(text)
        try:
            expect(composer).to_have_text(text.strip(), timeout=5_000)
            expect(submit).to_be_enabled(timeout=20_000)
            break
        except AssertionError:
            if attempt == 3:
                shots = Path(__file__).resolve().parent.parent / "test-output"
                shots.mkdir(exist_ok=True)
                page.screenshot(path=shots / "send-not-taken.png")
                raise
            composer.fill("")
    submit.click()
    expect(composer).to_have_text("")  # taken: the message is on its way
