"""Every mode walked to its end in both languages against the bundled offline model
(SmolLM2-135M under llama.cpp), as a new user without a provider would: its answers are junk,
so what is checked is that the end state is honest (the run ends, with a result or a failure
line), that the app's own frame (step titles, column headers, buttons, dialogs, closing lines)
reads in the page's language with no raw JSON or field names, and that no wait goes on for
more than 15 s with nothing changing on screen. The smallest settings: one round, one
iteration, one review round, small documents.

Slow (minutes on 2 cores): selected with `-m offline_walk`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.apps import AppProcess, running_app
from tests.browser_support import attach, open_page, send, switch_to_mode
from tests.mode_walk import Walk, finish_walk, run_until_over
from tests.test_srs_support import E_STORE

pytestmark = [pytest.mark.browser, pytest.mark.smoke, pytest.mark.offline_walk]

SMALLEST = {
    "REVIEW_MAX_ROUNDS": "1",
    "SRS_MAX_ITERATIONS": "1",
    "REWRITE_MAX_REVIEW_ROUNDS": "1",
    "REWRITE_MAX_QUESTIONS": "1",
    "AGENT_MAX_ITERATIONS": "1",
    "TEAM_MAX_MESSAGES": "5",
    "TEAM_MAX_AGENTS": "2",
    "TEAM_MAX_EXECUTION_TIME": "60",
}
MESSAGES = {
    "chat": {"zh-CN": "好的需求有什么特征？", "en-US": "What makes a good requirement?"},
    "agent": {"zh-CN": "现在 UTC 几点？", "en-US": "What time is it in UTC?"},
    "srs": {"zh-CN": "图书馆借阅系统：读者借书、还书。", "en-US": "A library: readers borrow books."},
    "review": {"zh-CN": "请审阅这份文档", "en-US": "Review this document"},
    "rewrite": {"zh-CN": "请重写这份文档", "en-US": "Rewrite this document"},
    "team": {"zh-CN": "列出座位预约系统的一条性能需求", "en-US": "List one performance requirement for seat booking"},
}  # fmt: skip
DOCUMENTS = {
    "zh-CN": "# 预约需求\n\n## 1. 预约\n\n主人在线预约兽医，查询要快。\n",
    "en-US": "# Booking\n\n## 1. Booking\n\nOwners book a vet online; search is fast.\n",
}
NO_CLARIFY = {"zh-CN": "不澄清，直接重写", "en-US": "Rewrite without clarifying"}
TIMINGS: list[tuple[str, float]] = []


@pytest.fixture(scope="module")
def offline_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    with running_app(tmp_path_factory.mktemp("offline") / "data", SMALLEST) as app:
        yield app
    print("\noffline walk times: " + ", ".join(f"{name} {s:.0f} s" for name, s in TIMINGS))


def rewrite_choice(page: Page, locale: str) -> None:
    """Rewrite asks how to clarify: it is told to rewrite without questions."""
    button = page.get_by_role("button", name=NO_CLARIFY[locale])
    expect(button).to_be_visible(timeout=60_000)
    button.click()


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
@pytest.mark.parametrize("mode", list(MESSAGES))
def test_every_mode_ends_honestly_with_the_offline_model(
    browser: Browser,
    offline_app: AppProcess,
    tmp_path: Path,
    output_dir: Path,
    mode: str,
    locale: str,
):
    started = time.monotonic()
    page = open_page(browser, offline_app.url, locale)
    if mode != "chat":
        switch_to_mode(page, mode, locale)
    if mode == "srs":
        attach(page, str(E_STORE / "reference.md"))
    if mode in ("review", "rewrite"):
        document = tmp_path / ("预约.md" if locale == "zh-CN" else "booking.md")
        document.write_text(DOCUMENTS[locale], encoding="utf-8")
        attach(page, str(document))
    send(page, MESSAGES[mode][locale])
    walk = Walk(page, locale, code_is_content=True, frame_only=True)
    walk.allowed |= {"time", "web_search", "get_current_time", "convert_time"}
    if mode == "rewrite":
        rewrite_choice(page, locale)
    walk.watches.append(run_until_over(page, timeout=600))
    # an honest end: the last message says how the run ended, or is the answer itself
    last = page.locator("[data-step-type=assistant_message]").last
    expect(last).to_be_visible()
    finish_walk(walk, output_dir / "offline" / f"{mode}-end-{locale}.png")
    TIMINGS.append((f"{mode}-{locale}", time.monotonic() - started))
