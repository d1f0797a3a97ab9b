"""A walk through one mode's run in the browser, as a user follows it (no tests here): sample
the page while the run goes on (tests/page_reading.py tells silence from progress), then open
every step, read the page and photograph its end state. Used by the walks with the scripted
provider and with the offline model."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.page_reading import SilenceWatch, TextNode, findings, visible_text

MODE_TITLES = {
    "chat": {"zh-CN": "Chat 对话", "en-US": "Chat"},
    "agent": {"zh-CN": "Agent 智能体", "en-US": "Agent"},
    "srs": {"zh-CN": "SRS 生成", "en-US": "SRS"},
    "review": {"zh-CN": "Review 审阅", "en-US": "Review"},
    "rewrite": {"zh-CN": "Rewrite 重写", "en-US": "Rewrite"},
    "team": {"zh-CN": "Team 团队", "en-US": "Team"},
}
MODE_ON = {
    mode: {"zh-CN": f"已启用 {titles['zh-CN']} 模式", "en-US": f"{titles['en-US']} mode is on"}
    for mode, titles in MODE_TITLES.items()
}
SCROLL_TO_END_JS = """
() => { for (const e of document.querySelectorAll('*')) {
  const style = getComputedStyle(e);
  if (e.scrollHeight > e.clientHeight + 10 && /auto|scroll/.test(style.overflowY)) {
    e.scrollTop = e.scrollHeight; } } }
"""
SILENCE_LIMIT = 15.0  # seconds a user may look at an unchanged page while a run goes on


def running(page: Page) -> bool:
    return page.locator("#stop-button").count() > 0


def page_text(page: Page) -> str:
    return "\n".join(node.text for node in visible_text(page))


def run_until(page: Page, end: str, timeout: float = 120.0) -> SilenceWatch:
    """Sample the page about once a second until `end` shows and the run is over."""
    watch = SilenceWatch()
    start = time.monotonic()
    target = page.get_by_text(end, exact=False)
    while True:
        now = time.monotonic() - start
        is_running = running(page)
        watch.add(now, page_text(page), is_running)
        if not is_running and target.count() and target.first.is_visible():
            return watch
        if now > timeout:
            raise AssertionError(f"no end state ({end!r}) after {timeout:.0f} s")
        page.wait_for_timeout(1000)


def run_until_over(page: Page, timeout: float) -> SilenceWatch:
    """Sample the page about once a second until a run that started is over (the stop button
    gone for 3 s), whatever it ended with."""
    watch = SilenceWatch()
    start = time.monotonic()
    seen, idle = False, 0
    while True:
        now = time.monotonic() - start
        is_running = running(page)
        watch.add(now, page_text(page), is_running)
        seen = seen or is_running
        idle = 0 if is_running else idle + 1
        if (seen or now > 10) and idle >= 3:
            return watch
        if now > timeout:
            raise AssertionError(f"the run did not end within {timeout:.0f} s")
        page.wait_for_timeout(1000)


def open_every_step(page: Page, rounds: int = 4) -> None:
    """Open each folded step, and the steps inside it, as a user reading the run would."""
    for _ in range(rounds):
        folded = page.locator("[id^='step-'] button[aria-expanded='false']")
        if not folded.count():
            return
        for index in range(folded.count() - 1, -1, -1):
            button = folded.nth(index)
            if button.is_visible():
                button.click()
        page.wait_for_timeout(300)


@dataclass
class Walk:
    page: Page
    locale: str
    content: set[str] = field(default_factory=set)  # others' words shown as they are
    allowed: set[str] = field(default_factory=set)  # more names (the model's, the tools')
    code_is_content: bool = False  # code is tools' calls and results (Agent mode)
    frame_only: bool = False  # only the app's frame is its words (the offline model's walk)
    timeout: float = 120.0
    watches: list[SilenceWatch] = field(default_factory=list)
    early: list[TextNode] = field(default_factory=list)  # read before the end

    def follow(self, end: str, during: Callable[[Page], None] | None = None) -> None:
        if during:
            during(self.page)
        self.watches.append(run_until(self.page, end, self.timeout))

    def read(self) -> list[TextNode]:
        return visible_text(self.page)

    def check_now(self) -> None:
        """Read what is on screen now (a dialog about to close), checked with the end state."""
        self.early.extend(self.read())


def finish_walk(walk: Walk, screenshot: Path) -> None:
    """Photograph the end state, open every step and read the page: fail on other-language
    text, internals and silences longer than SILENCE_LIMIT."""
    page = walk.page
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    page.evaluate(SCROLL_TO_END_JS)  # the end state is at the end of the chat
    page.wait_for_timeout(300)
    # the chat only: the history beside it lists the walks' other threads, in either language
    history = page.locator("#thread-history")
    box = history.bounding_box() if history.count() and history.is_visible() else None
    if box:
        viewport = page.viewport_size
        left = box["x"] + box["width"]
        clip = {"x": left, "y": 0, "width": viewport["width"] - left, "height": viewport["height"]}
        page.screenshot(path=screenshot, clip=clip)
    else:
        page.screenshot(path=screenshot)
    open_every_step(page)
    found = findings(
        walk.early + walk.read(),
        walk.locale,
        walk.allowed,
        walk.content,
        walk.code_is_content,
        walk.frame_only,
    )
    silences = [watch.longest_silence() for watch in walk.watches]
    longest = max(silences, default=(0.0, ""))
    problems = list(dict.fromkeys(found))
    if longest[0] > SILENCE_LIMIT:
        problems.append(f"nothing changed on screen for {longest[0]:.0f} s: {longest[1][-300:]!r}")
    assert not problems, "\n".join(problems)


def expect_mode(page: Page, mode: str, locale: str) -> None:
    expect(page.get_by_text(MODE_ON[mode][locale], exact=False)).to_be_visible()
