"""Smoke: the whole wire against a real model and a server we did not write
(SmolLM2-135M under llama-cpp-python's OpenAI-compatible server)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from agents.chat import ChatEngine, ChatMemory
from reqstudio.runtime import AppRuntime
from reqstudio.settings import load_settings
from reqstudio.usage import UsageTracker
from tests.apps import AppProcess
from tests.browser_support import open_page, send

pytestmark = pytest.mark.smoke


@pytest.fixture(autouse=True)
def no_provider(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


async def test_chat_engine_streams_from_the_embedded_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # `PORT=9000 ./scripts/run.sh` is for the app; llama_cpp.server must not take it too.
    monkeypatch.setenv("PORT", "1")
    monkeypatch.setenv("HOST", "203.0.113.1")
    settings = load_settings(REQSTUDIO_DATA_DIR=str(tmp_path))
    assert settings.uses_embedded_model
    tracker = UsageTracker()
    with AppRuntime(settings) as runtime:
        assert runtime.endpoint.embedded
        engine = ChatEngine(runtime.factory(), callbacks=[tracker])
        tokens: list[str] = []
        await engine.reply(ChatMemory(), "Name one fruit.", on_token=tokens.append)
        process = runtime.embedded._process
    answer = "".join(tokens)
    assert len(tokens) > 1  # it streamed
    assert answer.strip()
    assert tracker.calls == 1
    assert process.poll() is not None  # the server stopped with the runtime


@pytest.mark.browser
def test_app_without_provider_answers_with_the_offline_model(
    browser: Browser, tmp_path: Path, output_dir: Path
):
    app = AppProcess(tmp_path / "data").start()
    try:
        page = open_page(browser, app.url)
        expect(page.get_by_text("离线小模型", exact=False)).to_be_visible()
        send(page, "Say hello in one short sentence.")
        expect(page.get_by_text("秒", exact=False).last).to_be_visible(timeout=90_000)
        page.screenshot(path=output_dir / "chat-offline-model.png")
    finally:
        app.stop()
    assert "offline demo model answers" in app.log()


@pytest.mark.browser
def test_app_explains_when_the_offline_model_cannot_start(
    browser: Browser, tmp_path: Path, output_dir: Path
):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"this is not a GGUF model")
    app = AppProcess(tmp_path / "data", {"REQSTUDIO_LOCAL_MODEL_FILE": str(broken)}).start()
    try:
        page = open_page(browser, app.url, "en-US")
        expect(page.get_by_text("No model is available", exact=False)).to_be_visible()
        send(page, "hello?")
        expect(page.get_by_text("No model is available", exact=False).nth(1)).to_be_visible()
        expect(page.get_by_text("OPENAI_API_KEY", exact=False).first).to_be_visible()
        page.screenshot(path=output_dir / "chat-no-model.png")
    finally:
        app.stop()
    assert "offline model unavailable" in app.log()
