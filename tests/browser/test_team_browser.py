"""Team mode in a real browser: three agents over scripted replies; their messages with
authors, the spawn's brief, a refusal, an introduction, the society picture drawn live and
kept, the streamed answer, statistics per agent and the record for download; the finished
thread reopened after a restart shows the picture and the record once."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.apps import AppProcess
from tests.browser_support import (
    bring_into_view,
    click_until,
    open_page,
    send,
    wait_until_idle,
    wait_until_loaded,
)
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.test_team_run import answer, me, role, spawn, turn
from tests.test_team_run import send as say

pytestmark = pytest.mark.browser


def held(replies: list[Reply], gate: str) -> list[Reply]:
    """An agent's turn whose first reply waits until the test opens `gate`."""
    return [dataclasses.replace(replies[0], hold=gate), *replies[1:]]


def node_labels(plot: Locator) -> Locator:
    """The agents' labels in a Plotly picture (SVG text)."""
    return plot.locator("g.textpoint text")


def is_see_through(plot: Locator) -> None:
    """No white page in the dark theme: no background of its own."""
    paper = plot.locator("svg.main-svg").first.evaluate("svg => svg.style.background")
    assert paper in ("rgba(0, 0, 0, 0)", "transparent"), paper


def shows_the_final_picture_once(page: Page) -> None:
    plot = page.locator(".js-plotly-plot")
    expect(plot).to_have_count(1, timeout=30_000)
    for label in ("root", "agent-1", "agent-2", "分析师", "写作者"):
        expect(node_labels(plot).filter(has_text=label).first).to_be_visible()
    expect(page.get_by_text("团队结构（实时更新）", exact=False)).to_have_count(0)
    expect(page.get_by_text("🗺️ 团队结构", exact=False)).to_have_count(1)
    is_see_through(plot)


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
        *held(turn("agent-1", say("agent-2", "collaboration_response", "FR-1 发布商品；FR-2 搜索商品")),
              "analyst-answers"),
        *turn("agent-2", say("root", "status_report", "SRS 初稿已完成", {"status": "done"})),
        answer("SRS 初稿：FR-1 发布商品（Python 后端）；FR-2 搜索商品。"),
    )  # fmt: skip
    page = open_page(browser, app.url, "zh-CN")
    expect(page.get_by_text("已启用 Chat 对话 模式")).to_be_visible(timeout=30_000)
    page.locator("#chat-profiles").click()
    page.get_by_role("option", name="Team 团队").click()
    expect(page.get_by_text("已启用 Team 团队 模式")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("把需求工程任务交给团队", exact=False)).to_be_visible()

    send(page, "为校园二手交易平台组建团队，写出 SRS 初稿；约束：静态网页前端 + Python 后端")
    # While the analyst's answer is held the run is surely going on: the picture is there
    # live, with both agents the run has so far
    expect(page.get_by_text("请给 FR 列表").first).to_be_visible(timeout=60_000)
    expect(page.locator("#stop-button")).to_be_visible()
    live = page.locator(".js-plotly-plot")
    expect(live).to_have_count(1, timeout=30_000)
    expect(page.get_by_text("团队结构（实时更新）", exact=False)).to_be_visible()
    expect(node_labels(live).filter(has_text="agent-2").first).to_be_visible()
    expect(node_labels(live).filter(has_text="写作者").first).to_be_visible()
    is_see_through(live)
    bring_into_view(live)
    page.screenshot(path=output_dir / "team-live-zh-CN.png")
    llm_server.open_gate("analyst-answers")

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
    expect(reply).to_contain_text(
        "分析师 (agent-1) → 写作者 (agent-2) · 答复协作请求"
    )  # the type in words
    first = page.locator("[data-step-type=assistant_message]").filter(has_text="请给 FR 列表").last
    expect(first).to_contain_text("首次联系")
    # the spawn shows the brief, refusals and introductions are visible events
    expect(page.get_by_text("创建了 agent-1", exact=False).first).to_be_visible()
    expect(page.get_by_text("Python 后端", exact=False).first).to_be_visible()
    expect(page.get_by_text("对方不在联系人注册表中", exact=False).first).to_be_visible()
    expect(page.get_by_text("unknown_contact", exact=False)).to_have_count(0)  # no code
    expect(page.get_by_text("root 把 agent-1 介绍给 agent-2", exact=False).first).to_be_visible()
    expect(page.get_by_text("我是 写作者（agent-2）", exact=False).first).to_be_visible()
    # statistics per agent and the record
    expect(page.get_by_text("统计（每个智能体）")).to_be_visible()
    expect(page.get_by_text("root 已答复用户", exact=False)).to_be_visible()
    expect(page.get_by_text("team-record.json")).to_be_visible()
    # the live picture gave way to the final one, near the answer; who knows whom in text
    shows_the_final_picture_once(page)
    expect(
        page.get_by_role("cell", name="agent-1 (经介绍认识 · root)", exact=False).last
    ).to_be_visible()
    bring_into_view(page.locator(".js-plotly-plot"))
    page.screenshot(path=output_dir / "team-zh-CN.png")
    bring_into_view(page.get_by_text("对方不在联系人注册表中", exact=False).first)
    page.screenshot(path=output_dir / "team-messages-zh-CN.png")
    bring_into_view(page.get_by_text("统计（每个智能体）"))
    page.screenshot(path=output_dir / "team-stats-zh-CN.png")
    # Every scripted answer was asked for, except perhaps the writer's last "done for now":
    # the run ends as root answers the user, and under load that can come first.
    left = llm_server.pending_replies()
    assert all(r.match == me("agent-2") and not r.tool_calls for r in left), left
    assert len(left) <= 1

    # Reopened from the history after a restart: the picture and the record, once each
    wait_until_idle(page)  # the run is stored before the app stops
    page.context.close()
    app.stop()
    app.start()
    page = open_page(browser, app.url, "zh-CN")
    page.locator("#thread-history").get_by_text("为校园二手交易平台", exact=False).first.click()
    wait_until_loaded(page)
    expect(
        page.get_by_text("SRS 初稿：FR-1 发布商品（Python 后端）；FR-2 搜索商品。")
    ).to_be_visible()
    shows_the_final_picture_once(page)
    expect(page.get_by_text("team-record.json")).to_have_count(1)
    expect(page.get_by_text("统计（每个智能体）")).to_have_count(1)
    bring_into_view(page.locator(".js-plotly-plot"))
    page.screenshot(path=output_dir / "team-reopened-zh-CN.png")
    page.locator("#theme-toggle").click()  # and in the light theme
    page.get_by_role("menuitem", name="浅色主题").click()
    expect(page.locator("html")).to_have_class(re.compile(r"\blight\b"))
    is_see_through(page.locator(".js-plotly-plot"))
    page.screenshot(path=output_dir / "team-reopened-light-zh-CN.png")
    with page.expect_download() as download:
        page.get_by_text("team-record.json").click()
    record = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    assert record["reason"] == "answered"
    assert "agent_spawned" in {e["type"] for e in record["events"]}


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
    page.get_by_role("option", name="Team 团队").click()
    expect(page.get_by_text("已启用 Team 团队 模式")).to_be_visible(timeout=30_000)
    send(page, "写 SRS 初稿；约束：Python 后端")
    expect(page.get_by_text("创建了 agent-2", exact=False)).to_be_visible(timeout=60_000)
    click_until(
        page.locator("#stop-button"),
        page.get_by_text("已停止所有智能体；运行记录已保留。", exact=False),
    )
    expect(page.get_by_text("team-record.json")).to_be_visible()
    expect(page.locator("#stop-button")).to_have_count(0)
    page.screenshot(path=output_dir / "team-stopped-zh-CN.png")
