"""Chat mode in a real browser, against the app started as users start it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.apps import AppProcess
from tests.browser_support import click_until, open_page, provider_env, send, wait_until_idle
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(
    ("language", "reply", "mode_on", "placeholder", "question", "tokens"),
    [
        (
            "zh-CN",
            Reply(content="好的需求应当可测试、无歧义、可追溯。", prompt_tokens=21,
                  completion_tokens=9, chunk_chars=3, chunk_delay=0.05),
            "已启用 Chat 对话 模式", "输入", "什么是好的需求？", "30 tokens（输入 21 / 输出 9）",
        ),
        (
            "en-US",
            Reply(content="A good requirement is testable.", prompt_tokens=5, completion_tokens=6),
            "Chat mode is on", "message", "What makes a good requirement?",
            "11 tokens (5 in / 6 out)",
        ),
    ],
)  # fmt: skip
def test_chat_streams_answer_with_stats_in_the_browsers_language(
    browser: Browser,
    app: AppProcess,
    llm_server: ScriptedLLMServer,
    output_dir: Path,
    language: str,
    reply: Reply,
    mode_on: str,
    placeholder: str,
    question: str,
    tokens: str,
):
    llm_server.script(reply)
    page = open_page(browser, app.url, language)
    expect(page.get_by_text(mode_on)).to_be_visible()
    expect(page.locator("#chat-input")).to_have_attribute("placeholder", re.compile(placeholder))
    send(page, question)
    expect(page.get_by_text(reply.content)).to_be_visible()
    expect(page.get_by_text(tokens)).to_be_visible()
    expect(page.get_by_text(mode_on)).to_be_visible()  # the confirmation stays
    page.screenshot(path=output_dir / f"chat-{language}.png")
    sent = llm_server.requests[-1]
    assert sent["stream"] is True
    assert sent["messages"][-1] == {"role": "user", "content": question}


def test_memory_within_a_thread(browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer):
    llm_server.script(Reply(content="记住了：系统叫 e-Store。"), Reply(content="它叫 e-Store。"))
    page = open_page(browser, app.url)
    expect(page.get_by_text("已启用")).to_be_visible()
    send(page, "我们的系统叫 e-Store。")
    expect(page.get_by_text("记住了：系统叫 e-Store。")).to_be_visible()
    send(page, "系统叫什么？")
    expect(page.get_by_text("它叫 e-Store。")).to_be_visible()
    history = [m["content"] for m in llm_server.requests[-1]["messages"]]
    assert history[-3:] == ["我们的系统叫 e-Store。", "记住了：系统叫 e-Store。", "系统叫什么？"]


def test_cut_stream_keeps_partial_answer_and_app_keeps_running(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    cut = Reply(content="第一部分内容已经到达。" + "后续内容永远不会到达。" * 3, fault="cut",
                chunk_chars=11)  # fmt: skip
    llm_server.script(
        cut, cut,  # the try and its one retry (OPENAI_MAX_RETRIES=1) both break off
        Reply(fault="429"), Reply(fault="429"),
        Reply(content="恢复正常。"),
    )  # fmt: skip
    page = open_page(browser, app.url)
    expect(page.get_by_text("已启用")).to_be_visible()
    send(page, "请回答")
    expect(page.get_by_text("第一部分内容已经到达。", exact=False)).to_be_visible()
    expect(page.get_by_text("⟳ 第 2/2 次尝试：上一次连接中断")).to_be_visible()  # the retry
    expect(page.get_by_text("与模型服务的连接中断", exact=False)).to_be_visible()  # the failure
    expect(page.get_by_text("已保留收到的内容", exact=False)).to_be_visible()
    page.screenshot(path=output_dir / "chat-error-kept.png")
    assert len(llm_server.requests) == 2
    send(page, "再试一次")  # 429, one retry (OPENAI_MAX_RETRIES=1), 429 again
    expect(page.get_by_text("限流（429）", exact=False)).to_be_visible()
    send(page, "第三次")
    expect(page.get_by_text("恢复正常。")).to_be_visible()


def test_stop_button_stops_generation_and_keeps_text(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer
):
    llm_server.script(Reply(content="慢慢地回答。" * 200, chunk_chars=6, chunk_delay=0.1))
    page = open_page(browser, app.url)
    expect(page.get_by_text("已启用")).to_be_visible()
    send(page, "写一篇长文")
    expect(page.get_by_text("慢慢地回答。", exact=False).first).to_be_visible()
    click_until(page.locator("#stop-button"), page.get_by_text("已停止生成", exact=False))
    expect(page.locator("#stop-button")).to_have_count(0)


def test_history_survives_restart_and_resumes_memory(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path
):
    data_dir = tmp_path / "data"
    first = AppProcess(data_dir, provider_env(llm_server)).start()
    try:
        llm_server.script(Reply(content="已记录：审批流程需要两级审核。"))
        page = open_page(browser, first.url)
        expect(page.get_by_text("已启用")).to_be_visible()
        send(page, "审批流程需要两级审核")
        expect(page.get_by_text("已记录：审批流程需要两级审核。")).to_be_visible()
        wait_until_idle(page)  # the turn is stored before the app stops
        page.context.close()
    finally:
        first.stop()

    second = AppProcess(data_dir, provider_env(llm_server)).start()
    try:
        page = open_page(browser, second.url)
        thread = page.locator("#thread-history").get_by_text("审批流程需要两级审核")
        expect(thread).to_be_visible()
        thread.click()
        expect(page.get_by_text("已记录：审批流程需要两级审核。")).to_be_visible()
        expect(page.get_by_text("已启用 Chat 对话 模式")).to_be_visible()
        page.screenshot(path=output_dir / "chat-resumed.png")
        llm_server.script(Reply(content="需要两级审核。"))
        send(page, "审批需要几级审核？")
        expect(page.get_by_text("需要两级审核。", exact=True)).to_be_visible()
        contents = [m["content"] for m in llm_server.requests[-1]["messages"]]
        assert "审批流程需要两级审核" in contents
        assert "已记录：审批流程需要两级审核。" in contents
    finally:
        second.stop()


# The login form: the browser asks who is signed in (401 until someone is) and a wrong
# password is refused.
@pytest.mark.failed_requests(r"^401 (GET /user|POST /login)$")
def test_with_users_configured_login_is_required_and_threads_are_private(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path
):
    env = provider_env(llm_server) | {"REQSTUDIO_USERS": "alice:alice-pass,bob:bob-pass"}
    app = AppProcess(tmp_path / "data", env).start()
    try:

        def login(user: str, password: str):
            page = open_page(browser, app.url, ready=False)
            page.locator("#email").fill(user)
            page.locator("#password").fill(password)
            page.locator("button[type=submit]").click()
            expect(page.get_by_text("已启用")).to_be_visible()
            return page

        page = open_page(browser, app.url, ready=False)
        expect(page.locator("#password")).to_be_visible()
        page.screenshot(path=output_dir / "login.png")
        page.locator("#email").fill("alice")
        page.locator("#password").fill("wrong")
        page.locator("button[type=submit]").click()
        expect(page.get_by_text("无法登录")).to_be_visible()  # told so, in Chinese
        expect(page.locator("#password")).to_be_visible()
        expect(page.get_by_text("已启用")).to_have_count(0)  # and not let in
        page.screenshot(path=output_dir / "login-rejected.png")
        page.context.close()

        alice = login("alice", "alice-pass")
        send(alice, "alice 的库存需求")
        expect(alice.get_by_text("Echo: alice 的库存需求")).to_be_visible()
        expect(alice.locator("#thread-history").get_by_text("alice 的库存需求")).to_be_visible()
        alice.context.close()

        bob = login("bob", "bob-pass")
        send(bob, "bob 的报表需求")
        expect(bob.locator("#thread-history").get_by_text("bob 的报表需求")).to_be_visible()
        expect(bob.locator("#thread-history").get_by_text("alice 的库存需求")).to_have_count(0)
        bob.screenshot(path=output_dir / "login-bob-threads.png")
    finally:
        app.stop()


def test_an_answer_that_ends_early_is_retried_and_shown_whole_once(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer
):
    whole = "完整的回答：第一句。第二句。第三句在最后。"
    llm_server.script(
        Reply(content=whole, fault="truncated", chunk_chars=4),  # no finish reason, no [DONE]
        Reply(content=whole, chunk_chars=4),
    )
    page = open_page(browser, app.url)
    expect(page.get_by_text("已启用")).to_be_visible()
    send(page, "请完整回答")
    answer = page.locator(".step").filter(has_text="第三句在最后。").last
    expect(answer).to_be_visible()
    expect(page.locator("#stop-button")).to_have_count(0)
    assert answer.inner_text().count("完整的回答") == 1  # the broken try is not kept beside it
    assert len(llm_server.requests) == 2
