"""The provider key never reaches the browser or the log (issue 21, item 8): a real browser
runs Chat, Agent (with an MCP call), SRS (with its download) and a provider error whose text
carries the key, with a recognisable key configured; every HTTP answer the page received,
every socket frame, the page itself, the downloads and the app's log are searched for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Response, expect

from tests.apps import AppProcess
from tests.browser_support import attach, open_page, provider_env, send, wait_until_idle
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript
from tests.test_srs_support import E_STORE, clarify_reply, doc_reply, explore_reply, parse_reply

pytestmark = pytest.mark.browser

KEY = "sk-reqstudio-canary-9f3b7e1d5a"
REASONING = "research agent"  # prompts/agent/react_system.md
ANSWER = "Write the final answer now"  # prompts/agent/answer_user.md


def switch_mode(page: Page, title: str) -> None:
    page.locator("#chat-profiles").click()
    page.get_by_role("option", name=title).click()
    page.get_by_role("dialog").get_by_role("button", name="确认").click()  # a new chat
    expect(page.get_by_text(f"已启用 {title} 模式")).to_be_visible()


def test_the_provider_key_reaches_no_browser_payload_and_no_log(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path
):
    env = provider_env(llm_server) | {"OPENAI_API_KEY": KEY, "OPENAI_MAX_RETRIES": "0"}
    app = AppProcess(tmp_path / "data", env).start()
    responses: list[Response] = []
    frames: list[str] = []
    try:
        page = open_page(browser, app.url, "zh-CN", ready=False)
        page.on("response", lambda response: responses.append(response))
        page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(str(f))))
        page.reload()  # the first page load's answers are recorded too
        expect(page.locator("#chat-input")).to_be_visible(timeout=60_000)

        # Chat: an answer, then a provider error whose text quotes the key (as some do)
        llm_server.script(
            Reply(content="需求澄清的第一步是确认目标用户。"),
            Reply(fault="400", content=f"Incorrect API key provided: {KEY}. Check your key."),
        )
        send(page, "需求澄清从哪里开始？")
        expect(page.get_by_text("需求澄清的第一步是确认目标用户。")).to_be_visible()
        send(page, "再说一遍")
        expect(page.get_by_text("模型服务返回错误（400）", exact=False)).to_be_visible()
        wait_until_idle(page)

        # Agent: the settings panel, an MCP call and the answer
        switch_mode(page, "Agent 智能体")
        expect(page.get_by_text("get_current_time", exact=False).first).to_be_visible()
        page.locator("#chat-settings-open-modal").click()
        expect(page.locator("label[for=agent_fc_model]")).to_be_visible()
        page.keyboard.press("Escape")
        llm_server.script(
            Reply(match=REASONING, content="查时间。",
                  tool_calls=[ToolCallScript("get_current_time", {"timezone": "UTC"})]),
            Reply(match=REASONING, content="够了。"),
            Reply(match=ANSWER, content="时间已由 time 工具给出。"),
        )  # fmt: skip
        send(page, "现在 UTC 几点？")
        expect(page.get_by_text("时间已由 time 工具给出。")).to_be_visible(timeout=60_000)
        wait_until_idle(page)

        # SRS: a reference upload, the run and its download
        switch_mode(page, "SRS 生成")
        llm_server.script(
            parse_reply(("FR-01", "顾客可以浏览商品目录")),
            explore_reply(("FR-01", "顾客可以按类别浏览商品目录")),
            clarify_reply(FR_01=2),
            doc_reply("# SRS\n\n- FR-01 顾客可以按类别浏览商品目录。\n"),
        )
        attach(page, str(E_STORE / "reference.md"))
        send(page, "我们要做一个在线电子商店，顾客浏览商品目录。")
        expect(page.get_by_text("✅ 完成", exact=False)).to_be_visible(timeout=90_000)
        wait_until_idle(page)
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
        bodies = []
        for response in responses:
            try:
                bodies.append(response.text())
            except Exception:  # a redirect or a body the browser did not keep
                bodies.append("")
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
