"""What a newcomer sees: starters on a new chat, steps that say whether they run, one language,
no internal text as an answer, honest numbers (issue 8)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from reqstudio.scripted_server import Reply, ScriptedLLMServer, ToolCallScript
from tests.apps import AppProcess
from tests.browser_support import open_page, send

pytestmark = pytest.mark.browser

REASONING = "research agent"  # prompts/agent/react_system.md
ANSWER = "Write the final answer now"  # prompts/agent/answer_user.md


def switch_mode(page: Page, title: str) -> None:
    page.locator("#chat-profiles").click()
    page.get_by_role("option", name=title).click()


@pytest.mark.parametrize(
    ("locale", "chat_on", "chat_starter", "agent", "agent_on", "agent_starter", "srs", "srs_on",
     "srs_starter"),
    [
        ("zh-CN", "已启用 Chat 对话 模式", "什么是好的需求？", "Agent 智能体",
         "已启用 Agent 智能体 模式", "搜索 IEEE 830", "SRS 生成", "已启用 SRS 生成 模式",
         "图书馆借阅系统"),
        ("en-US", "Chat mode is on", "What makes a good requirement?", "Agent",
         "Agent mode is on", "Search IEEE 830", "SRS", "SRS mode is on",
         "A library lending system"),
    ],
)  # fmt: skip
def test_each_mode_shows_its_starters_and_confirms_the_mode(
    browser: Browser, app: AppProcess, output_dir: Path, locale: str, chat_on: str,
    chat_starter: str, agent: str, agent_on: str, agent_starter: str, srs: str, srs_on: str,
    srs_starter: str,
):  # fmt: skip
    page = open_page(browser, app.url, locale)
    expect(page.get_by_text(chat_on)).to_be_visible()
    expect(page.locator("#starters").get_by_text(chat_starter)).to_be_visible()
    page.screenshot(path=output_dir / f"starters-chat-{locale}.png")
    switch_mode(page, agent)
    expect(page.get_by_text(agent_on)).to_be_visible()
    expect(page.locator("#starters").get_by_text(agent_starter)).to_be_visible()
    switch_mode(page, srs)
    expect(page.get_by_text(srs_on)).to_be_visible()
    expect(page.locator("#starters").get_by_text(srs_starter)).to_be_visible()
    page.screenshot(path=output_dir / f"starters-srs-{locale}.png")


def test_a_starter_sends_its_message(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer
):
    llm_server.script(Reply(content="可测试、无歧义。"))
    page = open_page(browser, app.url, "zh-CN")
    page.locator("#starters").get_by_text("什么是好的需求？").click()
    expect(page.get_by_text("可测试、无歧义。")).to_be_visible()
    assert "一条好的软件需求" in llm_server.requests[-1]["messages"][-1]["content"]
    expect(page.locator("#starters")).to_have_count(0)


def test_running_step_is_open_and_streams_then_folds_with_its_outcome(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    reasoning = "先想一想：需要查询时间。" * 6
    llm_server.script(
        Reply(match=REASONING, content=reasoning, chunk_chars=3, chunk_delay=0.15,
              tool_calls=[ToolCallScript("get_current_time", {"timezone": "UTC"})]),
        Reply(match=REASONING, content="够了。"),
        Reply(match=ANSWER, content="现在是 UTC 时间。"),
    )  # fmt: skip
    page = open_page(browser, app.url, "zh-CN")
    switch_mode(page, "Agent 智能体")
    expect(page.get_by_text("已启用 Agent 智能体 模式")).to_be_visible()
    expect(page.get_by_text("get_current_time", exact=False).first).to_be_visible()
    send(page, "现在几点？")
    running = page.get_by_text(re.compile(r"^进行中\s*思考 · 第 1 轮"))
    expect(running).to_be_visible()
    # open while it runs: its reasoning streams in view
    expect(page.get_by_text("先想一想：需要查询时间。", exact=False).first).to_be_visible()
    page.screenshot(path=output_dir / "step-running-zh-CN.png")
    expect(page.get_by_text("现在是 UTC 时间。")).to_be_visible()
    expect(page.locator("#stop-button")).to_have_count(0)
    finished = page.get_by_text(re.compile(r"思考 · 第 1 轮 · .* · 完成"))
    expect(finished).to_be_visible()
    expect(page.get_by_text(re.compile("进行中|已使用|使用中"))).to_have_count(0)
    # folded when done; a click opens it again
    expect(page.get_by_text("先想一想：需要查询时间。", exact=False)).to_have_count(0)
    finished.click()
    expect(page.get_by_text("先想一想：需要查询时间。", exact=False).first).to_be_visible()
    page.screenshot(path=output_dir / "step-done-zh-CN.png")


@pytest.mark.parametrize(
    ("locale", "agent", "said"),
    [("zh-CN", "Agent 智能体", "模型没能回答这个问题"),
     ("en-US", "Agent", "The model could not answer this question")],
)  # fmt: skip
def test_the_apps_own_instructions_are_never_shown_as_the_answer(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path,
    locale: str, agent: str, said: str,
):  # fmt: skip
    echoed = ("No research results: no tool was needed. Answer from what you know, without "
              "citation numbers. Research notes: the user asks about IEEE 830.")  # fmt: skip
    llm_server.script(
        Reply(match=REASONING, content="I know this."),
        Reply(match=ANSWER, content=echoed, chunk_chars=5, chunk_delay=0.03),
    )
    page = open_page(browser, app.url, locale)
    switch_mode(page, agent)
    expect(page.locator("#starters")).to_be_visible()
    send(page, "What is IEEE 830?")
    expect(page.get_by_text(said, exact=False)).to_be_visible()
    expect(page.locator("#stop-button")).to_have_count(0)
    expect(page.get_by_text("No research results", exact=False)).to_have_count(0)
    expect(page.get_by_text("Answer from what you know", exact=False)).to_have_count(0)
    page.screenshot(path=output_dir / f"agent-echo-refused-{locale}.png")
