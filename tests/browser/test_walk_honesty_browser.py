"""What the user sees is what the models really produced, once,
walked in a real browser: a Chat answer the provider's content filter cut is replaced by the
whole answer of the retry; a Team root that delivers the same answer twice is heard once; an
agent card shows as a card."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.apps import AppProcess
from tests.browser_support import bring_into_view, open_page, send, wait_until_idle
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.test_team_cards import CARD
from tests.test_team_run import me, role, spawn, turn
from tests.test_team_run import send as say

pytestmark = pytest.mark.browser


def test_a_chat_answer_cut_by_the_content_filter_shows_only_the_whole_retry(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    whole = "一条好的需求应当可测试：例如“搜索结果在 2 秒内返回”。"
    llm_server.script(
        # the filtered try streams slowly, so its fragment is on screen before it ends
        Reply(
            content="一条好的需求应当被过滤的半句",
            finish_reason="content_filter",
            chunk_chars=2,
            chunk_delay=0.1,
        ),
        Reply(content=whole),
    )
    page = open_page(browser, app.url, "zh-CN")
    expect(page.get_by_text("已启用 Chat 对话 模式")).to_be_visible()
    send(page, "好的需求有什么特征？")
    expect(page.get_by_text("一条好的需求应当", exact=False).first).to_be_visible()
    expect(page.get_by_text(whole, exact=False)).to_have_count(1, timeout=30_000)
    wait_until_idle(page)
    answers = page.locator("[data-step-type=assistant_message]")
    expect(answers.filter(has_text="一条好的需求应当")).to_have_count(1)
    expect(page.get_by_text("被过滤的半句", exact=False)).to_have_count(0)
    expect(page.get_by_text("⟳ 回答中途中断", exact=False)).to_have_count(0)
    page.screenshot(path=output_dir / "chat-content-filter-zh-CN.png")
    assert len(llm_server.requests) == 2 and llm_server.pending == 0


def switch_to_team(page: Page) -> None:
    expect(page.get_by_text("已启用 Chat 对话 模式")).to_be_visible()
    page.locator("#chat-profiles").click()
    page.get_by_role("option", name="Team 团队").click()
    expect(page.get_by_text("已启用 Team 团队 模式")).to_be_visible()


def test_a_team_shows_the_agent_card_and_an_answer_sent_twice_once(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    final = "术语表已完成：商品、订单各有定义。"
    twice = say("user", "status_report", final, {"status": "done"})
    llm_server.script(
        *turn("root", role("术语专家", CARD), spawn("术语专家")),
        *turn("agent-1", say("root", "status_report", "术语表已写好", {"status": "done"})),
        Reply(match=me("root"), tool_calls=[twice, twice], chunk_delay=0.001),
    )
    page = open_page(browser, app.url, "zh-CN")
    switch_to_team(page)
    send(page, "为二手交易平台写术语表")
    expect(page.get_by_text(final, exact=True)).to_be_visible(timeout=60_000)
    expect(page.get_by_text("root 已答复用户", exact=False)).to_be_visible()
    wait_until_idle(page)
    # the answer delivered twice is shown once; the copy's refusal went back to root
    expect(page.get_by_text(final, exact=False)).to_have_count(1)
    refusal = page.locator("[data-step-type=assistant_message]").filter(has_text="⛔")
    expect(refusal).to_contain_text("用户已收到同样的消息")
    expect(refusal).not_to_contain_text("duplicate_message")  # the meaning, not the code
    expect(refusal).to_contain_text("告知 root 的原文：")
    # the role's interface spec is shown as its agent card: name, modes, skills with examples
    card = page.locator("[data-step-type=assistant_message]").filter(has_text="🪪 名片：术语专家")
    expect(card).to_have_count(1)
    expect(card.locator("blockquote")).to_have_text("统一 SRS 里的术语")  # the description only
    expect(card).to_contain_text("输入：text/plain · 输出：text/markdown")
    expect(card).not_to_contain_text("请求格式")  # the same modes are not said twice
    expect(card.get_by_role("cell", name="请定义：商品、订单")).to_be_visible()
    expect(card.get_by_role("cell", name="检查第 3 节的用词")).to_be_visible()
    expect(card.get_by_text("```", exact=False)).to_have_count(0)  # no raw JSON
    bring_into_view(card)
    page.screenshot(path=output_dir / "team-card-zh-CN.png")
    bring_into_view(page.get_by_text(final, exact=True))
    page.screenshot(path=output_dir / "team-answer-once-zh-CN.png")
