"""The provider key never reaches the browser or the log: a real browser
runs every mode, Chat, Agent (with an MCP call), SRS (with its download), Review, Rewrite and
Team (with theirs), and a provider error whose text carries the key, with a recognisable key configured; every HTTP answer the page received,
every socket frame, the page itself, the downloads and the app's log are searched for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Response, expect

from tests import browser_support as web
from tests import review_support as review
from tests.agent_support import one_call_then_answer
from tests.apps import AppProcess
from tests.rewrite_support import FILL_ZH, ORIGINAL_ZH, OUTLINE_ZH, outline_reply, review_reply
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.test_srs_support import (
    E_STORE,
    one_requirement_run,
)
from tests.test_team_run import answer, role, spawn, turn

pytestmark = pytest.mark.browser

KEY = "sk-reqstudio-canary-9f3b7e1d5a"


def switch_to(page: Page, title: str, confirm: bool = True) -> None:
    web.switch_mode(page, title, confirm=confirm)  # the chat has messages: confirm the new chat
    expect(page.get_by_text(f"已启用 {title} 模式")).to_be_visible()


def recorded_page(
    browser: Browser, app: AppProcess, responses: list[Response], frames: list[str]
) -> Page:
    """A page on the app whose every HTTP answer and socket frame is kept, from its first
    load on."""
    page = web.open_page(browser, app.url, "zh-CN", ready=False)
    page.on("response", lambda response: responses.append(response))
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(str(f))))
    page.reload()  # the first page load's answers are recorded too
    expect(page.locator("#chat-input")).to_be_visible(timeout=60_000)
    return page


def response_bodies(responses: list[Response]) -> list[str]:
    bodies = []
    for response in responses:
        try:
            bodies.append(response.text())
        except Exception:  # a redirect or a body the browser did not keep
            bodies.append("")
    return bodies


def test_the_provider_key_reaches_no_browser_payload_and_no_log(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path
):
    env = web.provider_env(llm_server) | {"OPENAI_API_KEY": KEY, "OPENAI_MAX_RETRIES": "0"}
    app = AppProcess(tmp_path / "data", env).start()
    responses: list[Response] = []
    frames: list[str] = []
    try:
        page = recorded_page(browser, app, responses, frames)

        # Chat: an answer, then a provider error whose text quotes the key (as some do)
        llm_server.script(
            Reply(content="需求澄清的第一步是确认目标用户。"),
            Reply(fault="400", content=f"Incorrect API key provided: {KEY}. Check your key."),
        )
        web.send(page, "需求澄清从哪里开始？")
        expect(page.get_by_text("需求澄清的第一步是确认目标用户。")).to_be_visible()
        web.send(page, "再说一遍")
        expect(page.get_by_text("模型服务返回错误（400）", exact=False)).to_be_visible()
        web.wait_until_idle(page)

        # Agent: the settings panel, an MCP call and the answer
        switch_to(page, "Agent 智能体")
        expect(page.get_by_text("get_current_time", exact=False).first).to_be_visible()
        page.locator("#chat-settings-open-modal").click()
        expect(page.locator("label[for=agent_fc_model]")).to_be_visible()
        page.keyboard.press("Escape")
        llm_server.script(*one_call_then_answer("查时间。", "够了。", "时间已由 time 工具给出。"))
        web.send(page, "现在 UTC 几点？")
        expect(page.get_by_text("时间已由 time 工具给出。")).to_be_visible(timeout=60_000)
        web.wait_until_idle(page)

        # SRS: a reference upload, the run and its download
        switch_to(page, "SRS 生成")
        llm_server.script(
            *one_requirement_run(
                "顾客可以浏览商品目录",
                "顾客可以按类别浏览商品目录",
                "# SRS\n\n- FR-01 顾客可以按类别浏览商品目录。\n",
            ),
        )
        web.attach(page, str(E_STORE / "reference.md"))
        web.send(page, "我们要做一个在线电子商店，顾客浏览商品目录。")
        expect(page.get_by_text("✅ 完成", exact=False)).to_be_visible(timeout=90_000)
        web.wait_until_idle(page)
        with page.expect_download() as download:
            page.get_by_text("srs.md").first.click()
        downloaded = Path(download.value.path()).read_text(encoding="utf-8")
        assert "FR-01" in downloaded and KEY not in downloaded

        # every thread of the user and every file they hold, as the browser fetches them
        listing = page.request.post(
            f"{app.url}/project/threads", data={"pagination": {"first": 20}, "filter": {}}
        ).json()["data"]
        threads = [page.request.get(f"{app.url}/project/thread/{t['id']}") for t in listing]
        urls = [e["url"] for t in threads for e in t.json().get("elements") or [] if e.get("url")]
        stored = [*threads, *(page.request.get(app.url + url) for url in urls)]
        page_html = page.content()
        bodies = response_bodies(responses)
    finally:
        app.stop()

    assert len(responses) > 20 and len(frames) > 50  # the run was seen
    assert len(threads) == 3 and len(stored) > 3 and all(r.ok for r in stored)
    where = {
        "HTTP answers": "\n".join(bodies),
        "socket frames": "\n".join(frames),
        "the page": page_html,
        "threads and their files": "\n".join(r.text() for r in stored),
        "app log": app.log(),
    }
    leaks = {name: text.count(KEY) for name, text in where.items() if KEY in text}
    assert leaks == {}, leaks
    # and not a recognisable part of it either (a key cut short, or shown masked)
    tail = KEY[-10:]
    assert not any(tail in text for text in where.values())
    assert all(json.dumps(KEY) not in text for text in where.values())
    # the key was really in use: the provider received it
    assert llm_server.requests


def assert_no_key(where: dict[str, str]) -> None:
    leaks = {name: text.count(KEY) for name, text in where.items() if KEY in text}
    assert leaks == {}, leaks
    assert not any(KEY[-10:] in text for text in where.values())


def test_the_provider_key_reaches_no_payload_in_review_rewrite_and_team(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path
):
    """The same search for the other three modes: a Review round with its downloads, a
    Rewrite with its downloads, a Team run with its record."""
    env = web.provider_env(llm_server) | {"OPENAI_API_KEY": KEY, "OPENAI_MAX_RETRIES": "0"}
    app = AppProcess(tmp_path / "data", env).start()
    responses: list[Response] = []
    frames: list[str] = []
    downloads: list[str] = []
    try:
        page = recorded_page(browser, app, responses, frames)

        # Review: one round that revises a section, then its downloads
        document = tmp_path / "预约需求.md"
        document.write_text(review.DOCUMENT_ZH, encoding="utf-8")
        llm_server.script(
            review.red_reply(review.improvement("sec-02", "high", "查询“要快”没有数字", "补充响应时间")),
            review.blue_reply(), review.client_reply(), review.judge_reply(agent_id="sec-02"),
            review.author_reply("sec-02", "主人在线预约兽医；95% 的查询在 2 秒内返回。\n"),
            *review.closing_round(),
        )  # fmt: skip
        switch_to(page, "Review 审阅", confirm=False)  # a fresh chat: nothing to confirm
        web.attach(page, str(document))
        web.send(page, "请审阅这份文档")
        expect(page.get_by_text("improved.md")).to_be_visible(timeout=90_000)
        web.wait_until_idle(page)
        for name in ("improved.md", "reviews.json"):
            with page.expect_download() as download:
                page.get_by_text(name).first.click()
            downloads.append(Path(download.value.path()).read_text(encoding="utf-8"))

        # Rewrite: no questions, one section, reviewed once
        original = tmp_path / "宠物医院.md"
        original.write_text(ORIGINAL_ZH, encoding="utf-8")
        llm_server.script(
            outline_reply([("概述", "说明用途。", 2)], title="宠物医院", match=OUTLINE_ZH),
            Reply(content="本系统供宠物主人在线预约就诊。\n", match=FILL_ZH),
            review_reply(match="文档评审专家"),
        )
        switch_to(page, "Rewrite 重写")
        web.attach(page, str(original))
        web.send(page, "请重写这份文档")
        web.click_until(
            page.get_by_role("button", name="不澄清，直接重写"),
            page.get_by_text("rewritten.md"),
            timeout=90_000,
        )
        web.wait_until_idle(page)
        with page.expect_download() as download:
            page.get_by_text("rewritten.md").first.click()
        downloads.append(Path(download.value.path()).read_text(encoding="utf-8"))

        # Team: a root that spawns one member and answers
        llm_server.script(
            *turn("root", role("分析师"), spawn("分析师")),
            *turn("agent-1", then="等待请求。"),
            answer("团队答复：FR-1 发布商品。"),
        )
        switch_to(page, "Team 团队")
        web.send(page, "为二手交易平台写出功能需求")
        expect(page.get_by_text("团队答复：FR-1 发布商品。")).to_be_visible(timeout=90_000)
        web.wait_until_idle(page)
        with page.expect_download() as download:
            page.get_by_text("team-record.json").first.click()
        downloads.append(Path(download.value.path()).read_text(encoding="utf-8"))
        page_html = page.content()
        bodies = response_bodies(responses)
    finally:
        app.stop()

    assert len(downloads) == 4 and len(frames) > 50  # the runs were seen
    assert_no_key(
        {
            "HTTP answers": "\n".join(bodies),
            "socket frames": "\n".join(frames),
            "the page": page_html,
            "downloads": "\n".join(downloads),
            "app log": app.log(),
        }
    )
    assert llm_server.requests  # the key was in use
