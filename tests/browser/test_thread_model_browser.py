"""A thread's model and temperature picked in the settings panel, as a user
picks them: the panel, the model list, the switch and the slider; the provider receives them;
a reopened thread keeps them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests import browser_support as web
from tests.apps import AppProcess, running_app
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser


@pytest.fixture
def app(llm_server: ScriptedLLMServer, tmp_path: Path) -> Iterator[AppProcess]:
    env = web.provider_env(llm_server) | {"REQSTUDIO_MODEL_CHOICES": "bigger-model,cheaper-model"}
    with running_app(tmp_path / "data", env) as process:
        yield process


def open_settings(page: Page) -> None:
    page.locator("#chat-settings-open-modal").click()
    expect(page.locator("label[for=thread_model]")).to_have_text("本对话的模型")


def test_a_model_and_temperature_picked_in_the_panel_are_the_threads(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    llm_server.script(Reply(content="用大模型回答。"), Reply(content="重新打开后仍是大模型。"))
    page = web.open_page(browser, app.url, "zh-CN")
    expect(page.get_by_text("已启用 Chat 对话 模式")).to_be_visible()
    open_settings(page)
    page.locator("#thread_model").click()
    options = page.get_by_role("option")
    expect(options).to_have_text(
        ["默认：按配置（scripted-model）", "scripted-model", "bigger-model", "cheaper-model"]
    )
    page.get_by_role("option", name="bigger-model", exact=True).click()
    page.locator("#thread_temperature_on").click()
    slider = page.locator("#thread_temperature [role=slider]")
    slider.focus()
    for _ in range(5):  # 0.7 → 1.2, as a keyboard user moves it
        page.keyboard.press("ArrowRight")
    expect(slider).to_have_attribute("aria-valuenow", "1.2")
    page.screenshot(path=output_dir / "thread-model-zh-CN.png")
    page.locator("#confirm").click()
    web.send(page, "这个对话用哪个模型？")
    expect(page.get_by_text("用大模型回答。")).to_be_visible()
    web.wait_until_idle(page)
    sent = llm_server.requests[-1]
    assert (sent["model"], sent["temperature"]) == ("bigger-model", 1.2)

    page.reload()  # the thread's page: reopened from the history
    web.wait_until_loaded(page)
    expect(page.get_by_text("用大模型回答。")).to_be_visible()
    open_settings(page)
    expect(page.locator("#thread_model")).to_have_text("bigger-model")
    expect(page.locator("#thread_temperature_on")).to_have_attribute("aria-checked", "true")
    expect(page.locator("#thread_temperature [role=slider]")).to_have_attribute(
        "aria-valuenow", "1.2"
    )
    page.keyboard.press("Escape")
    web.send(page, "重新打开后呢？")
    expect(page.get_by_text("重新打开后仍是大模型。")).to_be_visible()
    sent = llm_server.requests[-1]
    assert (sent["model"], sent["temperature"]) == ("bigger-model", 1.2)
