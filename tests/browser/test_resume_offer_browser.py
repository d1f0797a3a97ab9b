"""A failed Review's thread, reopened after the app restarted, offers Resume only where the
failed run's own ending offered it, in zh-CN and en-US.

Round 1 in which no reviewer's answer can be read (every answer prose, never the JSON its
role must give, on the only model configured): resuming would fail the same way, so the
ending offers no Resume, and neither does the thread reopened after a restart. A run whose
provider was away (every answer a 500) may go otherwise when resumed: its ending offers
Resume and so does its reopened thread (which also shows how soon a reopened thread's offer
comes). Screenshots in test-output/resume-offer-*.png."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests import review_support as review
from tests.apps import AppProcess, running_app
from tests.browser_support import (
    open_page,
    provider_env,
    reopen_thread,
    start_review,
    wait_until_idle,
)
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser

TEXTS = {
    "zh-CN": {
        "failed": "❌ 审阅未能完成",
        "resume": "继续审阅",
        "offer": "上次的审阅没有完成",
    },
    "en-US": {
        "failed": "❌ The review could not finish",
        "resume": "Resume the review",
        "offer": "The last review did not finish",
    },
}
PANEL = (review.RED, review.BLUE, review.CLIENT, review.JUDGE)


@pytest.fixture
def resume_app(llm_server: ScriptedLLMServer, tmp_path: Path) -> Iterator[AppProcess]:
    # one model configured: none other to pick in the settings
    env = provider_env(llm_server) | {"REQSTUDIO_RETRY_BACKOFF_SCALE": "0.01"}
    with running_app(tmp_path / "data", env) as process:
        yield process


def fail_a_review(browser: Browser, app: AppProcess, language: str, token: str) -> Page:
    """A review of a document carrying `token`, ended failed in round 1: its page."""
    page = open_page(browser, app.url, language)
    start_review(page, review.DOCUMENT.replace("Pet Clinic", token), language)
    expect(page.get_by_text(TEXTS[language]["failed"]).last).to_be_visible(timeout=90_000)
    wait_until_idle(page)
    return page


def reopen(browser: Browser, app: AppProcess, url: str, language: str) -> Page:
    page = reopen_thread(browser, app.url, url, language)
    expect(page.get_by_text(TEXTS[language]["failed"]).last).to_be_visible(timeout=30_000)
    return page


def test_a_review_that_cannot_start_offers_no_resume_when_reopened(
    browser: Browser, resume_app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    threads: dict[tuple[str, str], str] = {}
    prose = "I read the document; it looks fine to me overall."
    for language in TEXTS:
        token = f"UNREADABLE{language[:2].upper()}"
        llm_server.script(
            *[Reply(content=prose, match=(m, token)) for m in PANEL for _ in range(8)]
        )
        page = fail_a_review(browser, resume_app, language, token)
        # the live ending says what to change first, and offers no Resume
        expect(page.get_by_role("button", name=TEXTS[language]["resume"])).to_have_count(0)
        page.screenshot(path=output_dir / f"resume-offer-unreadable-{language}-live.png")
        threads["unreadable", language] = page.url
        page.context.close()
    # the control: a provider away (500) may pass, so its ending offers Resume
    token = "OUTAGE"
    llm_server.script(*[Reply(fault="500", match=(m, token)) for m in PANEL for _ in range(8)])
    page = fail_a_review(browser, resume_app, "zh-CN", token)
    expect(page.get_by_role("button", name=TEXTS["zh-CN"]["resume"])).to_be_visible()
    threads["outage", "zh-CN"] = page.url
    page.context.close()

    resume_app.stop()
    resume_app.start()

    page = reopen(browser, resume_app, threads["outage", "zh-CN"], "zh-CN")
    began = time.monotonic()
    expect(page.get_by_role("button", name=TEXTS["zh-CN"]["resume"]).last).to_be_visible(
        timeout=30_000
    )
    offered_after = time.monotonic() - began
    page.screenshot(path=output_dir / "resume-offer-outage-zh-CN-reopened.png")
    page.context.close()

    for language in TEXTS:
        page = reopen(browser, resume_app, threads["unreadable", language], language)
        # as long as the control's offer took to come, five times over (at least 5 s)
        page.wait_for_timeout(max(5.0, 5 * offered_after) * 1000)
        expect(page.get_by_text(TEXTS[language]["offer"])).to_have_count(0)
        expect(page.get_by_role("button", name=TEXTS[language]["resume"])).to_have_count(0)
        page.screenshot(path=output_dir / f"resume-offer-unreadable-{language}-reopened.png")
        page.context.close()
