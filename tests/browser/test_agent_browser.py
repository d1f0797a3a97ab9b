"""Agent mode in a real browser: live steps (thinking, search, MCP call, decision, hand-over),
a streamed answer in its own message, and statistics per model.

The search is a deterministic stand-in (REQSTUDIO_SEARCH_BACKEND=tests.fake_search), so the
test means the same on a machine with or without network."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.agent_support import ANSWER, REASONING, one_call_then_answer
from tests.apps import ROOT, AppProcess, running_app
from tests.browser_support import bring_into_view, open_page, open_step, provider_env, send
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript

pytestmark = pytest.mark.browser

FAKE_SEARCH = {
    "REQSTUDIO_SEARCH_BACKEND": "tests.fake_search:five_results",
    "PYTHONPATH": str(ROOT),
}


@pytest.fixture
def agent_app(llm_server: ScriptedLLMServer, tmp_path: Path):
    # A reasoning model's provider (ChatDeepSeek on the scripted server): its separate
    # thinking (reasoning_content) must reach the thinking step.
    reasoning_model = json.dumps(
        {"provider": "deepseek", "model": "scripted-model", "base_url": llm_server.base_url,
         "api_key": "sk-test-not-a-real-key"}
    )  # fmt: skip
    env = (
        provider_env(llm_server)
        | FAKE_SEARCH
        | {
            "AGENT_VERBOSE": "true",
            "AGENT_FUNCTION_CALL_MODEL": reasoning_model,
        }
    )
    with running_app(tmp_path / "data", env) as app:
        yield app


def test_agent_mode_shows_each_step_and_statistics(
    browser: Browser, agent_app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    app = agent_app
    llm_server.script(
        Reply(
            match=REASONING,
            reasoning="推理：用户想知道此刻的 UTC 时间，time 工具最可靠。",
            content="需要当前 UTC 时间，先查时间，同时搜索一下背景。",
            tool_calls=[
                ToolCallScript("get_current_time", {"timezone": "UTC"}),
                ToolCallScript("web_search", {"query": "UTC 时间 标准"}),
            ],
            prompt_tokens=120,
            completion_tokens=30,
        ),
        Reply(match=REASONING, content="已经拿到时间，足够回答。", prompt_tokens=200,
              completion_tokens=10),
        Reply(match=ANSWER, content="现在的 UTC 时间已由 time 工具给出 [1]。", prompt_tokens=90,
              completion_tokens=20, chunk_chars=4, chunk_delay=0.02),
    )  # fmt: skip
    page = open_page(browser, app.url, "zh-CN")
    expect(page.get_by_text("已启用 Chat 对话 模式")).to_be_visible()
    page.locator("#chat-profiles").click()
    page.get_by_role("option", name="Agent 智能体").click()
    expect(page.get_by_text("已启用 Agent 智能体 模式")).to_be_visible()
    expect(page.get_by_text("get_current_time", exact=False).first).to_be_visible(timeout=30_000)

    send(page, "现在 UTC 时间是几点？")
    expect(page.get_by_text("现在的 UTC 时间已由 time 工具给出 [1]。")).to_be_visible(
        timeout=60_000
    )
    expect(page.get_by_text("🔁 切换到回答生成阶段", exact=False)).to_be_visible()
    open_step(
        page.get_by_text("思考 · 第 1 轮", exact=False).first,
        page.get_by_text("推理：用户想知道此刻的 UTC 时间", exact=False).first,
    )
    expect(page.get_by_text("MCP · get_current_time", exact=False)).to_be_visible()
    search_step = page.get_by_text(re.compile(r"搜索 · 完成$")).first
    expect(search_step).to_be_visible()
    open_step(search_step, page.get_by_text("query: UTC 时间 标准", exact=False).first)
    results_step = page.get_by_text(re.compile(r"搜索结果 · 完成$")).first
    open_step(results_step, page.get_by_text("找到 5 条结果", exact=False).first)
    expect(page.get_by_text("UTC 时间 标准 — source 1", exact=False).first).to_be_visible()

    mcp_step = page.get_by_text("MCP · get_current_time", exact=False).first
    open_step(mcp_step, page.get_by_text("timezone: UTC", exact=False).first)

    # statistics per model: the scripted usage, summed per role
    expect(page.get_by_role("cell", name="320")).to_be_visible()  # function-call input tokens
    expect(page.get_by_role("cell", name="90", exact=True)).to_be_visible()  # answer input
    expect(page.get_by_text("2 次工具调用", exact=False)).to_be_visible()
    bring_into_view(page.get_by_text("统计"))
    page.screenshot(path=output_dir / "agent-zh-CN.png")
    assert llm_server.pending == 0
    # AGENT_VERBOSE: the trace (the reasoning model's thinking first) is in the app's log
    assert "agent round 1 thought: 推理：用户想知道此刻的 UTC 时间" in app.log()


def test_mcp_server_connected_from_the_ui_joins_the_agent(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path
):
    env = provider_env(llm_server) | {"REQSTUDIO_MCP_CONFIG": "off"}  # no MCP from mcp.json
    app = AppProcess(tmp_path / "data", env).start()
    try:
        page = open_page(browser, app.url, "zh-CN")
        page.locator("#chat-profiles").click()
        page.get_by_role("option", name="Agent 智能体").click()
        intro = page.get_by_text("Agent 可以使用网页搜索和 MCP 工具", exact=False)
        expect(intro).to_contain_text("web_search")
        expect(intro).not_to_contain_text("get_current_time")

        page.locator("#message-composer button[aria-haspopup=dialog]:has(svg.lucide-plug)").click()
        dialog = page.locator("[role=dialog]")
        # Chainlit's dialog, hard-coded in English, reads in Chinese (public/reqstudio.js)
        expect(dialog.get_by_text("连接 MCP", exact=True).first).to_be_visible()
        dialog.get_by_role("button", name="连接", exact=True).first.click()
        expect(page.get_by_text("已连接 MCP 服务器 time", exact=False)).to_be_visible()
        page.keyboard.press("Escape")

        llm_server.script(
            *one_call_then_answer("查时间。", "够了。", "时间已由界面连接的 MCP 工具给出。")
        )
        send(page, "现在 UTC 几点？")
        expect(page.get_by_text("时间已由界面连接的 MCP 工具给出。")).to_be_visible(timeout=60_000)
        open_step(
            page.get_by_text("MCP · get_current_time", exact=False).first,
            page.get_by_text("timezone: UTC", exact=False).first,
        )
        page.screenshot(path=output_dir / "agent-mcp-from-ui.png")
    finally:
        app.stop()
    tool_results = [
        m for r in llm_server.requests for m in r["messages"] if m.get("role") == "tool"
    ]
    # the real mcp-server-time answered through the UI-made connection
    assert any("datetime" in str(m["content"]) for m in tool_results)


READABLE = {
    "zh-CN": {"profile": "Agent 智能体", "on": "已启用 Agent 智能体 模式", "arguments": "参数",
              "result": "结果", "full": "完整结果（模型读到的原文）", "done": "完成"},
    "en-US": {"profile": "Agent", "on": "Agent mode is on", "arguments": "Arguments",
              "result": "Result", "full": "Full result, as the model read it", "done": "done"},
}  # fmt: skip


@pytest.mark.parametrize("language", sorted(READABLE))
def test_a_tool_step_reads_as_words_not_json(
    browser: Browser, agent_app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path,
    language: str,
):  # fmt: skip
    """The MCP time tool answers JSON: its step shows the arguments and the result as
    "name: value" lines, with the whole JSON folded in a step of its own."""
    texts = READABLE[language]
    llm_server.script(
        *one_call_then_answer(
            "Look up the time.", "Enough to answer.", "It is the time the tool gave."
        )
    )
    page = open_page(browser, agent_app.url, language)
    page.locator("#chat-profiles").click()
    page.get_by_role("option", name=texts["profile"]).click()
    expect(page.get_by_text(texts["on"])).to_be_visible()
    send(page, f"What time is it in UTC? ({language})")
    expect(page.get_by_text("It is the time the tool gave.")).to_be_visible(timeout=60_000)
    open_step(
        page.get_by_text(re.compile(rf"MCP · get_current_time · {texts['done']}$")).first,
        page.get_by_text(texts["arguments"], exact=True).first,
    )
    expect(page.get_by_text("timezone: UTC", exact=False).first).to_be_visible()
    expect(page.get_by_text(texts["result"], exact=True).first).to_be_visible()
    expect(page.get_by_text(re.compile(r"datetime: \d{4}-\d\d-\d\d")).first).to_be_visible()
    # no JSON on screen: no quoted field names, no braces
    expect(page.get_by_text('"timezone"', exact=False)).to_have_count(0)
    expect(page.get_by_text('"datetime"', exact=False)).to_have_count(0)
    page.screenshot(path=output_dir / f"agent-tool-step-{language}.png")
    # the whole result, as the model read it, is one click away
    folded = page.get_by_text(texts["full"], exact=True)
    expect(folded.first).to_be_visible()
    folded.first.click()
    expect(page.get_by_text('"datetime"', exact=False).first).to_be_visible()
