"""Team mode in a real browser: three agents over scripted replies; their messages with
authors, the spawn's brief, a refusal, an introduction, the society picture, the streamed
answer, statistics per agent and the record for download."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.apps import AppProcess
from tests.browser_support import open_page, send
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.test_team_run import answer, role, spawn, turn
from tests.test_team_run import send as say

pytestmark = pytest.mark.browser


def test_a_team_of_three_works_in_the_browser(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    need = {"reason": "需要功能需求", "required_capability": "功能需求分析"}
    llm_server.script(
        *turn("root", role("分析师"), role("写作者"), spawn("分析师"), spawn("写作者")),
        *turn("agent-1", then="等待请求。"),
        *turn("agent-2", say("agent-1", "collaboration_request", "请给功能需求"),
              say("root", "introduction_request", "", need)),
        *turn("root", say("agent-2", "introduction_response", "", {"target_id": "agent-1",
              "usage_advice": "向他要 FR 列表"})),
        *turn("agent-2", say("agent-1", "collaboration_request", "请给 FR 列表", reason="写 SRS 初稿")),
        *turn("agent-1", say("agent-2", "collaboration_response", "FR-1 发布商品；FR-2 搜索商品")),
        *turn("agent-2", say("root", "status_report", "SRS 初稿已完成", {"status": "done"})),
        answer("SRS 初稿：FR-1 发布商品（Python 后端）；FR-2 搜索商品。"),
    )  # fmt: skip
    page = open_page(browser, app.url, "zh-CN")
    expect(page.get_by_text("已启用 Chat 对话 模式")).to_be_visible(timeout=30_000)
    page.locator("#chat-profiles").click()
    page.get_by_role("option", name="团队 Team").click()
    expect(page.get_by_text("已启用 团队 Team 模式")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("把需求工程任务交给团队", exact=False)).to_be_visible()

    send(page, "为校园二手交易平台组建团队，写出 SRS 初稿；约束：静态网页前端 + Python 后端")
    expect(
        page.get_by_text("SRS 初稿：FR-1 发布商品（Python 后端）；FR-2 搜索商品。")
    ).to_be_visible(timeout=60_000)
    # messages carry their sender as author, and their type
    expect(page.get_by_text("FR-1 发布商品；FR-2 搜索商品").first).to_be_visible()
    reply = (
        page.locator("[data-step-type=assistant_message]")
        .filter(has_text="FR-1 发布商品；FR-2 搜索商品")
        .last
    )
    expect(reply).to_contain_text("分析师 (agent-1) → 写作者 (agent-2) · collaboration_response")
    first = page.locator("[data-step-type=assistant_message]").filter(has_text="请给 FR 列表").last
    expect(first).to_contain_text("首次联系")
    # the spawn shows the brief, refusals and introductions are visible events
    expect(page.get_by_text("创建了 agent-1", exact=False).first).to_be_visible()
    expect(page.get_by_text("Python 后端", exact=False).first).to_be_visible()
    expect(page.get_by_text("unknown_contact", exact=False).first).to_be_visible()
    expect(page.get_by_text("root 把 agent-1 介绍给 agent-2", exact=False).first).to_be_visible()
    expect(page.get_by_text("我是 写作者（agent-2）", exact=False).first).to_be_visible()
    # the society picture, updated to the end: tree and who knows whom
    picture = page.get_by_text("团队结构（实时更新）", exact=False)
    expect(picture.first).to_be_visible()
    expect(page.get_by_text("├─ agent-1 · 分析师", exact=False).last).to_be_visible()
    expect(
        page.get_by_role("cell", name="agent-1 (introduction · root)", exact=False).last
    ).to_be_visible()
    # statistics per agent and the record
    expect(page.get_by_text("统计（每个智能体）")).to_be_visible()
    expect(page.get_by_text("root 已答复用户", exact=False)).to_be_visible()
    expect(page.get_by_text("team-record.json")).to_be_visible()
    picture.first.scroll_into_view_if_needed()
    page.screenshot(path=output_dir / "team-zh-CN.png")
    page.get_by_text("unknown_contact", exact=False).first.scroll_into_view_if_needed()
    page.screenshot(path=output_dir / "team-messages-zh-CN.png")
    page.get_by_text("统计（每个智能体）").scroll_into_view_if_needed()
    page.screenshot(path=output_dir / "team-stats-zh-CN.png")
    assert llm_server.pending == 0


def test_the_stop_button_stops_every_agent_and_keeps_the_record(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    llm_server.script(
        *turn("root", role("分析师"), spawn("分析师"), spawn("分析师")),
        Reply(match="你的 ID：agent-1；", content="想很久", delay=60),
        Reply(match="你的 ID：agent-2；", content="想很久", delay=60),
    )
    page = open_page(browser, app.url, "zh-CN")
    expect(page.get_by_text("已启用 Chat 对话 模式")).to_be_visible(timeout=30_000)
    page.locator("#chat-profiles").click()
    page.get_by_role("option", name="团队 Team").click()
    expect(page.get_by_text("已启用 团队 Team 模式")).to_be_visible(timeout=30_000)
    send(page, "写 SRS 初稿；约束：Python 后端")
    expect(page.get_by_text("创建了 agent-2", exact=False)).to_be_visible(timeout=60_000)
    page.locator("#stop-button").click()
    expect(page.get_by_text("已停止所有智能体；运行记录已保留。", exact=False)).to_be_visible()
    expect(page.get_by_text("team-record.json")).to_be_visible()
    expect(page.locator("#stop-button")).to_have_count(0)
    page.screenshot(path=output_dir / "team-stopped-zh-CN.png")
