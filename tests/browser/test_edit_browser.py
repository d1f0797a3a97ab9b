"""Edit a sent message and regenerate an answer, in Chat and Agent: the later turns go from the
page, from the history and from the model's memory alike, after a restart too (a reopened
thread's answers have their Regenerate button again)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.apps import AppProcess
from tests.browser_support import (
    click_until,
    open_page,
    provider_env,
    reopen_thread,
    send,
    wait_until_idle,
    wait_until_loaded,
)
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser


def sent_contents(server: ScriptedLLMServer) -> list[str]:
    """What the model was sent in the last request (system prompt left out)."""
    return [m["content"] for m in server.requests[-1]["messages"] if m["role"] != "system"]


def edit(page: Page, old: str, new: str) -> None:
    """Edit a sent message as a user does: hover it, the pencil, type, confirm."""
    wait_until_idle(page)
    bubble = page.locator('[data-step-type="user_message"]').filter(has_text=old).last
    bubble.hover()
    bubble.locator(".edit-message").click()
    page.locator("#edit-chat-input").fill(new)
    page.locator(".confirm-edit").click()


def test_edit_and_regenerate_rewind_the_memory(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path
):
    data_dir = tmp_path / "data"
    first = AppProcess(data_dir, provider_env(llm_server)).start()
    try:
        llm_server.script(
            Reply(content="第一个回答：系统叫 e-Store。"),
            Reply(content="第二个回答：有三个角色。"),
            Reply(content="改后的回答：系统叫 Library。"),
            Reply(content="重新生成的回答：系统名为 Library。"),
        )
        page = open_page(browser, first.url, "zh-CN")
        send(page, "系统叫 e-Store")
        expect(page.get_by_text("第一个回答：系统叫 e-Store。")).to_be_visible()
        send(page, "有哪些角色？")
        expect(page.get_by_text("第二个回答：有三个角色。")).to_be_visible()

        edit(page, "系统叫 e-Store", "系统叫 Library")
        expect(page.get_by_text("改后的回答：系统叫 Library。")).to_be_visible()
        for gone in ("第一个回答：系统叫 e-Store。", "有哪些角色？", "第二个回答：有三个角色。"):
            expect(page.get_by_text(gone)).to_have_count(0)
        assert sent_contents(llm_server) == ["系统叫 Library"]  # nothing the user discarded

        wait_until_idle(page)
        click_until(
            page.get_by_role("button", name="重新生成").last,
            page.get_by_text("重新生成的回答：系统名为 Library。"),
        )
        expect(page.get_by_text("改后的回答：系统叫 Library。")).to_have_count(0)
        assert sent_contents(llm_server) == ["系统叫 Library"]
        wait_until_idle(page)
        page.screenshot(path=output_dir / "chat-edited-zh-CN.png")
        page.context.close()
    finally:
        first.stop()

    second = AppProcess(data_dir, provider_env(llm_server)).start()
    try:
        page = open_page(browser, second.url, "en-US")
        page.locator("#thread-history").get_by_text(
            "系统叫 e-Store"
        ).first.click()  # its first name
        wait_until_loaded(page)
        expect(page.get_by_text("重新生成的回答：系统名为 Library。")).to_be_visible()
        for gone in ("第一个回答：系统叫 e-Store。", "第二个回答：有三个角色。",
                     "改后的回答：系统叫 Library。"):  # fmt: skip
            expect(page.get_by_text(gone)).to_have_count(0)
        llm_server.script(
            Reply(content="Regenerated after the restart."),
            Reply(content="Edited after the restart."),
            Reply(content="It is Library."),
        )
        # the old answer has its Regenerate button again, once (the thread is restored on two
        # connections), and it asks the old question again
        wait_until_idle(page)
        regenerate = page.get_by_role("button", name="Regenerate")
        expect(regenerate).to_have_count(1)
        page.screenshot(path=output_dir / "chat-reopened-regenerate-en-US.png")
        click_until(regenerate, page.get_by_text("Regenerated after the restart."))
        expect(page.get_by_text("重新生成的回答：系统名为 Library。")).to_have_count(0)
        assert sent_contents(llm_server) == ["系统叫 Library"]
        # an old message of the reopened thread can be edited too
        edit(page, "系统叫 Library", "The system is called Library")
        expect(page.get_by_text("Edited after the restart.")).to_be_visible()
        expect(page.get_by_text("Regenerated after the restart.")).to_have_count(0)
        assert sent_contents(llm_server) == ["The system is called Library"]
        send(page, "What is it called?")
        expect(page.get_by_text("It is Library.")).to_be_visible()
        assert sent_contents(llm_server) == [
            "The system is called Library",
            "Edited after the restart.",
            "What is it called?",
        ]
        expect(page.get_by_role("button", name="Regenerate").first).to_be_visible()
        page.screenshot(path=output_dir / "chat-edited-en-US.png")
    finally:
        second.stop()


REASONING = "research agent"  # reqstudio/prompts/agent/react_system.md
ANSWER = "Write the final answer now"  # reqstudio/prompts/agent/answer_context.md
THOUGHT_ZH = '[id^="step-思考 · 第 1 轮"]'  # a reasoning step, by its title
THOUGHT_EN = '[id^="step-Reasoning · round 1"]'


def test_agent_answer_regenerated_and_question_edited(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path
):
    env = provider_env(llm_server) | {"REQSTUDIO_MCP_CONFIG": "off"}
    app = AppProcess(tmp_path / "data", env).start()
    try:
        llm_server.script(
            Reply(match=REASONING, content="不需要工具。"),
            Reply(match=ANSWER, content="答案一：IEEE 830。"),
            Reply(match=REASONING, content="不需要工具。"),
            Reply(match=ANSWER, content="答案二：IEEE 29148。"),
            Reply(match=REASONING, content="不需要工具。"),
            Reply(match=ANSWER, content="答案三：关于测试。"),
        )
        page = open_page(browser, app.url, "zh-CN")
        page.locator("#chat-profiles").click()
        page.get_by_role("option", name="Agent 智能体").click()
        expect(page.get_by_text("已启用 Agent 智能体 模式")).to_be_visible()
        send(page, "哪个标准定义了 SRS？")
        expect(page.get_by_text("答案一：IEEE 830。")).to_be_visible()
        wait_until_idle(page)
        click_until(
            page.get_by_role("button", name="重新生成").last,
            page.get_by_text("答案二：IEEE 29148。"),
        )
        expect(page.get_by_text("答案一：IEEE 830。")).to_have_count(0)
        # the discarded turn's steps went with its answer: one reasoning step, this turn's
        expect(page.locator(THOUGHT_ZH)).to_have_count(1)
        edit(page, "哪个标准定义了 SRS？", "哪个标准讲测试？")
        expect(page.get_by_text("答案三：关于测试。")).to_be_visible()
        expect(page.get_by_text("答案二：IEEE 29148。")).to_have_count(0)
        expect(page.locator(THOUGHT_ZH)).to_have_count(1)
        sent = json.dumps(llm_server.requests[-1]["messages"], ensure_ascii=False)
        assert "哪个标准讲测试？" in sent
        for discarded in ("答案一", "答案二", "哪个标准定义了 SRS？"):
            assert discarded not in sent
        wait_until_idle(page)
        thread_url = page.url
        page.context.close()

        # after a restart, the reopened thread's answer has its Regenerate button again
        app.stop()
        app.start()
        llm_server.script(
            Reply(match=REASONING, content="No tool needed."),
            Reply(match=ANSWER, content="Answer four: about testing."),
        )
        page = reopen_thread(browser, app.url, thread_url, "en-US")
        expect(page.get_by_text("答案三：关于测试。")).to_be_visible()
        regenerate = page.get_by_role("button", name="Regenerate")
        expect(regenerate).to_have_count(1)
        click_until(regenerate, page.get_by_text("Answer four: about testing."))
        expect(page.get_by_text("答案三：关于测试。")).to_have_count(0)
        sent = json.dumps(llm_server.requests[-1]["messages"], ensure_ascii=False)
        assert "哪个标准讲测试？" in sent and "答案三" not in sent
        # the question stays; of the steps, only the new turn's
        expect(page.get_by_text("哪个标准讲测试？")).to_be_visible()
        expect(page.locator(THOUGHT_ZH)).to_have_count(0)
        expect(page.locator(THOUGHT_EN)).to_have_count(1)
        wait_until_idle(page)
        page.screenshot(path=output_dir / "agent-reopened-regenerated-en-US.png")
        page.context.close()
        # as the thread is stored, in the other language: the button is worded for this page
        page = reopen_thread(browser, app.url, thread_url, "zh-CN")
        expect(page.get_by_text("Answer four: about testing.")).to_be_visible()
        expect(page.get_by_text("哪个标准讲测试？")).to_be_visible()
        expect(page.locator(THOUGHT_ZH)).to_have_count(0)
        expect(page.locator(THOUGHT_EN)).to_have_count(1)
        expect(page.get_by_role("button", name="重新生成")).to_have_count(1)
        wait_until_idle(page)
        page.screenshot(path=output_dir / "agent-reopened-zh-CN.png")
    finally:
        app.stop()
