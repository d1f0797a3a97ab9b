"""Browser fixtures: Debian's chromium driven by Playwright against the app as users run it."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.apps import AppProcess, running_app
from tests.mode_walk import MODE_ON, MODE_TITLES
from tests.scripted_server import ScriptedLLMServer

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
    with running_app(tmp_path / "data", provider_env(llm_server)) as process:
        yield process


# Budget for a condition to become true. Under load (other processes on the 2 cores) the app
# needs more than Playwright's default 5 s to render a step; every wait below is still on a
# condition, never a sleep.
expect.set_options(timeout=20_000)


FAILURE_SHOTS = Path(__file__).resolve().parent.parent / "test-output" / "failures"
_PAGES: list[Page] = []  # the pages of the running test, photographed if it fails
_EVENTS: list[str] = []  # what their consoles and networks said went wrong, shown if it fails


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """A failed browser test leaves a screenshot of each page it still had open, so that a
    failure in CI can be seen, not only read."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed and _EVENTS:
        report.sections.append(("browser events", "\n".join(_EVENTS)))
    if report.when == "call" and report.failed:
        for name, value in item.funcargs.items():  # what the apps under test logged
            log_path = getattr(value, "log_path", None)
            if isinstance(log_path, Path) and log_path.is_file():
                lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
                report.sections.append((f"{name} log (last 80 lines)", "\n".join(lines[-80:])))
    if report.when == "call" and report.failed and _PAGES:
        FAILURE_SHOTS.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^\w.-]+", "_", item.name)[:120]
        for number, page in enumerate(_PAGES, start=1):
            if not page.is_closed():
                with contextlib.suppress(Exception):  # a crashed page: the report stands
                    page.screenshot(path=FAILURE_SHOTS / f"{name}-{number}.png", full_page=True)
    if report.when == "teardown":
        # Pages a test left open would go on reconnecting to its stopped app for the rest of
        # the module: load on the machine and noise in the next failure's events.
        for page in _PAGES:
            with contextlib.suppress(Exception):
                page.context.close()
        _PAGES.clear()
        _EVENTS.clear()


_FAILED_REQUESTS: list[str] = []  # the app's answers of 400 and above, in the running test


@pytest.fixture(autouse=True)
def no_failed_requests(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every page a test opens watches the app's answers: a 4xx or 5xx from the app is an
    error in the browser's console (seen before: a 401 on each page load, a 400 per step), so a
    test whose pages met one fails, unless it is marked as expecting such answers (a login
    form, a database outage) with `@pytest.mark.failed_requests(pattern, ...)`."""
    _FAILED_REQUESTS.clear()
    yield
    marker = request.node.get_closest_marker("failed_requests")
    expected = [re.compile(p) for p in marker.args] if marker else []
    unexpected = [f for f in _FAILED_REQUESTS if not any(p.search(f) for p in expected)]
    _FAILED_REQUESTS.clear()
    assert not unexpected, "the app answered the browser with errors:\n" + "\n".join(unexpected)


def failed_requests() -> list[str]:
    """The app's error answers to the pages of the running test so far."""
    return list(_FAILED_REQUESTS)


def watch_page(page: Page, url: str) -> None:
    """Record the app's error answers (checked after the test) and what the browser saw go
    wrong or happen (shown if the test fails)."""
    origin = re.match(r"https?://[^/]+", url).group(0)
    start = time.monotonic()

    def note(text: str) -> None:
        _EVENTS.append(f"{time.monotonic() - start:7.2f}s {text}")

    page.on("console", lambda m: m.type == "error" and note(f"console: {m.text}"))
    page.on("requestfailed", lambda r: note(f"{r.failure} {r.method} {r.url}"))
    page.on("framenavigated", lambda f: f == page.main_frame and note(f"at {f.url}"))

    def socket(ws) -> None:  # Socket.IO events by name: what the app told the browser, when
        sid = re.search(r"sid=([^&]+)", ws.url)
        name = sid.group(1)[:6] if sid else "?"
        note(f"ws {name} open")
        ws.on("close", lambda _: note(f"ws {name} closed"))
        for direction in ("framereceived", "framesent"):
            arrow = "<" if direction == "framereceived" else ">"
            ws.on(
                direction,
                lambda payload, arrow=arrow: (
                    isinstance(payload, str)
                    and payload.startswith(("40", "42"))
                    and note(f"ws {name} {arrow} {payload[:90]}")
                ),
            )

    page.on("websocket", socket)

    def answered(response) -> None:
        if response.request.method != "GET" and response.url.startswith(origin):
            sent = (response.request.post_data or "")[:120] if "socket.io" in response.url else ""
            note(f"{response.status} {response.request.method} {response.url} {sent}")
        if response.status >= 400 and response.url.startswith(origin):
            failed = f"{response.status} {response.request.method} "
            failed += response.url.removeprefix(origin)
            _FAILED_REQUESTS.append(failed)
            note(failed)

    page.on("response", answered)


def open_page(browser: Browser, url: str, locale: str = "zh-CN", *, ready: bool = True) -> Page:
    """A new browser page on the app. `ready`: wait until a user could type (the header-auth
    round trip through /login is over and the composer is there); pass False for a page
    that stops at the login form."""
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 860})
    page = context.new_page()
    _PAGES.append(page)
    watch_page(page, url)
    page.set_default_timeout(30_000)
    page.goto(url)
    if ready:
        expect(page.locator("#chat-input")).to_be_visible(timeout=60_000)
    return page


def wait_until_loaded(page: Page) -> None:
    """Until a reopened thread has settled: the browser connects for the thread, then again
    (sometimes twice) once it has restored the thread's mode; a button clicked in between
    belongs to a session the browser is leaving. Waits on the network going quiet (the
    socket is a WebSocket by then, which does not count), as a user waits for a page to
    finish loading before using it."""
    page.wait_for_load_state("networkidle", timeout=60_000)


def reopen_thread(browser: Browser, app_url: str, thread_url: str, locale: str) -> Page:
    """Open a thread by its page's address, as the app at `app_url` serves it (a restarted app
    listens on a port of its own), once its messages are loaded."""
    page = open_page(browser, thread_url.replace(thread_url.split("/thread/")[0], app_url), locale)
    wait_until_loaded(page)
    return page


def open_thread(browser: Browser, url: str, first_message: str) -> Page:
    """Open the app at `url` (zh-CN) and, from the history, the thread whose name holds
    `first_message`, once its messages are loaded."""
    page = open_page(browser, url)
    page.locator("#thread-history").get_by_text(first_message, exact=False).click()
    wait_until_loaded(page)
    return page


def wait_until_idle(page: Page) -> None:
    """Until the running task has ended: an answer shows in the browser before its handler
    has stored the turn (memory, thread metadata); closing the page or stopping the app
    earlier loses what the next session should find."""
    expect(page.locator("#stop-button")).to_have_count(0, timeout=60_000)


def bring_into_view(target: Locator) -> None:
    """Scroll `target` into view (before a screenshot). A message the app updates as a run
    ends (its buttons, its ending line) is drawn anew, and Playwright's scroll does not look
    again for an element that was replaced while it waited for it to be stable: so this looks
    again, at most three times, and only for that error."""
    for attempt in range(3):
        try:
            target.scroll_into_view_if_needed()
            return
        except PlaywrightError as error:
            if "not attached to the DOM" not in str(error) or attempt == 2:
                raise


def top_of(target: Locator) -> float:
    """Where `target`'s top is on the page now, found and measured in one step in the page: a
    message the app draws anew (a reconnect's replay, a run's end) may be replaced between
    finding it and measuring it, and `bounding_box()` of the one gone is None (seen in CI).
    Playwright waits for an element to measure."""
    return target.evaluate("e => e.getBoundingClientRect().top + window.scrollY")


def attach(page: Page, files: Any) -> None:
    """Attach files as a user does, and see them taken: the browser uploads each one to the
    session (`POST /project/file`). A file set on the upload input while a new chat replaces
    the composer (just after a mode switch) is never uploaded, or goes to the session being
    left (404); a user would attach it again, and so does this, once."""
    uploader = page.locator("#upload-button-input")
    for attempt in (1, 2):
        try:
            with page.expect_response(
                lambda r: r.request.method == "POST" and "/project/file" in r.url and r.ok,
                timeout=15_000,
            ):
                uploader.set_input_files(files)
            return
        except PlaywrightTimeoutError:
            if attempt == 2:
                raise AssertionError("the browser did not upload the attached file") from None
            _FAILED_REQUESTS[:] = [f for f in _FAILED_REQUESTS if "/project/file" not in f]


THREAD_PAGE = re.compile(r"/thread/[0-9a-f-]{36}$")


def send(page: Page, text: str) -> None:
    """Type and send as a user does: once the previous answer's task has ended.

    The submit button is enabled only when the app is idle and connected and the composer's
    own state holds text. Two things can take the typed text away before the click:
    - a fill that races a re-render of the composer reaches the page but not the
      composer's state (the button stays disabled);
    - after a new chat's first message the browser lists the threads and then moves to
      `/thread/<id>`, which mounts a new composer; under load that comes after the answer.
    A user would type again, and so does this, up to three times, saving a screenshot if
    the text is still not taken. On a new chat it then waits for the thread's page."""
    composer = page.locator("#chat-input")
    submit = page.locator("#chat-submit")
    wait_until_idle(page)
    new_chat = urlparse(page.url).path == "/"
    for attempt in range(1, 4):
        composer.fill(text)
        try:
            expect(composer).to_have_text(text.strip(), timeout=5_000)
            expect(submit).to_be_enabled(timeout=20_000)
            submit.click(timeout=5_000)
            expect(composer).to_have_text("")  # taken: the message is on its way
            break
        except (AssertionError, PlaywrightTimeoutError):
            if attempt == 3:
                shots = Path(__file__).resolve().parent.parent / "test-output"
                shots.mkdir(exist_ok=True)
                page.screenshot(path=shots / "send-not-taken.png")
                raise
            if page.locator("#stop-button").count():
                raise  # the message was taken after all: sending it again would send two
            composer.fill("")
    if new_chat:  # the move to the thread's page is over before the test goes on
        expect(page).to_have_url(THREAD_PAGE, timeout=60_000)


def switch_mode(page: Page, title: str, *, confirm: bool = False) -> None:
    """Pick the mode `title` in the profile menu. `confirm`: the chat has messages, so the app
    asks before it starts a new chat in that mode."""
    page.locator("#chat-profiles").click()
    page.get_by_role("option", name=title).click()
    if confirm:
        page.get_by_role("dialog").get_by_role("button", name="确认").click()


def switch_to_mode(page: Page, mode: str, locale: str, *, confirm: bool = False) -> None:
    """Pick `mode` (a key of MODE_TITLES: "chat", "agent", "srs", …) in the profile menu by its
    title in `locale` and see the line that says it is on; `confirm` as in switch_mode."""
    switch_mode(page, MODE_TITLES[mode][locale], confirm=confirm)
    expect(page.get_by_text(MODE_ON[mode][locale], exact=False)).to_be_visible()


def turn_on(page: Page, switch_id: str, confirm: str = "Confirm") -> None:
    """Turn a switch on in the settings panel (⚙) and confirm (`confirm`: the button's label in
    the page's language)."""
    page.locator("#chat-settings-open-modal").click()
    page.locator(f"#{switch_id}").click()
    page.get_by_role("button", name=confirm).click()


def start_paused_review(page: Page, document: Path) -> None:
    """In a chat with no messages yet (en-US): switch to Review mode, turn on its pause after
    each round, attach the document, see it taken and ask for the review."""
    switch_to_mode(page, "review", "en-US")
    turn_on(page, "review_pause")
    attach(page, str(document))
    composer = page.locator("#chat-input").locator("xpath=../../..")
    expect(composer.get_by_text(document.name)).to_be_visible()
    send(page, "Review this")


def start_review(page: Page, message: str, locale: str = "zh-CN") -> None:
    """In a chat with no messages yet: switch to Review mode and send the message (the
    document's text)."""
    switch_to_mode(page, "review", locale)
    send(page, message)


def sees_the_pause(page: Page, line: str, item: str, *whole: str) -> None:
    """A run paused for the user's word (within a minute): the pause's line, and in its table
    the cell holding an item's text and the cells that are `whole` words (an id, a score, a
    status)."""
    expect(page.get_by_text(line, exact=False)).to_be_visible(timeout=60_000)
    expect(page.get_by_role("cell", name=item).last).to_be_visible()
    for cell in whole:
        expect(page.get_by_role("cell", name=cell, exact=True).last).to_be_visible()


def start_paused_srs_run(page: Page, description: str, reference: Path) -> None:
    """In a chat with no messages yet (en-US): switch to SRS mode, turn on its pause after each
    ReqClarify round, attach the reference SRS and send the system's description."""
    switch_to_mode(page, "srs", "en-US")
    turn_on(page, "srs_pause")
    attach(page, str(reference))
    send(page, description)


def start_srs_run(page: Page, description: str, reference: Path) -> None:
    """In a chat with no messages yet (zh-CN): switch to SRS mode, attach the reference SRS and
    send the system's description."""
    switch_to_mode(page, "srs", "zh-CN")
    expect(page.get_by_text("请描述要构建的系统")).to_be_visible()
    attach(page, str(reference))
    send(page, description)


def stop_srs_run_in_explore(page: Page, description: str, reference: Path) -> None:
    """Start an SRS run as start_srs_run does (zh-CN) and, once ReqExplore's first round runs
    (scripted to take long), stop it: the stop says the steps done are kept."""
    start_srs_run(page, description, reference)
    expect(page.get_by_text("ReqExplore · 第 1 轮")).to_be_visible(timeout=30_000)
    click_until(
        page.locator("#stop-button"),
        page.get_by_text("已停止。已完成的步骤已保存", exact=False).first,
    )


def click_until(button: Locator, effect: Locator, timeout: float = 10_000) -> None:
    """Click as a user does and look for what the click does (`effect` visible).

    Under load a click can land while Chainlit re-renders the chat (it fetches the thread
    list again and remounts the page after a new thread's first message, or as a question's
    buttons arrive) and then does nothing: no event leaves the browser. A user who sees
    nothing happen clicks again, and so does this, up to three times, while the button is
    still there and enabled. A button that went away or is disabled (Chainlit disables
    action buttons while a run goes on) took the click: its effect is then only awaited
    again, never clicked for twice. So did a click whose effect is on the page more than once
    (Playwright's strict mode refuses two): clicking again would only do it once more (seen:
    a second evaluation); the test's own checks say whether two are wrong."""
    for attempt in range(1, 4):
        button.click()
        try:
            expect(effect).to_be_visible(timeout=timeout)
            return
        except AssertionError:
            if attempt == 3:
                raise
            if effect.count() > 1:
                expect(effect.first).to_be_visible(timeout=timeout)
                return
            if not button.count() or not button.first.is_visible() or button.first.is_disabled():
                expect(effect).to_be_visible(timeout=timeout)
                return


def open_step(step: Locator, shows: Locator) -> None:
    """Open a folded step and see what is in it (`shows`), once the run is over.

    As a run ends Chainlit draws the chat anew (it fetches the thread list again after a new
    thread's first message, the answer gets its buttons), and a step opened just before is
    folded again: seen in CI, the click landed and the step showed nothing. So the chat is
    idle first, and the step is clicked again if it shows nothing, as `click_until` does."""
    wait_until_idle(step.page)
    click_until(step, shows)


def answer_when_asked(button: Locator, asked: Locator, text: str) -> None:
    """Click a button that asks for a line of text (a pause's changes, an answer to a
    question, a name), see the question (`asked`, as click_until does) and send the text. Not
    `send`: the run waits for this answer, so the app is not idle."""
    click_until(button, asked)
    button.page.locator("#chat-input").fill(text)
    expect(button.page.locator("#chat-submit")).to_be_enabled()
    button.page.locator("#chat-submit").click()
