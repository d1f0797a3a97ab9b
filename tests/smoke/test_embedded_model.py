"""Smoke: the whole wire against a real model and a server we did not write
(SmolLM2-135M under llama-cpp-python's OpenAI-compatible server)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from reqstudio.llm import Endpoint, ModelFactory, embedded_max_tokens
from reqstudio.local_model import server_environment
from reqstudio.modes.chat import ChatEngine, ChatMemory
from reqstudio.runtime import AppRuntime
from reqstudio.settings import load_settings
from reqstudio.usage import UsageTracker
from tests.apps import AppProcess
from tests.browser_support import click_until, open_page, send

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


def test_a_killed_owner_leaves_no_model_server_behind(tmp_path: Path):
    # A CLI or app killed outright (SIGKILL: no atexit) must not leave llama.cpp burning CPU.
    pid_file = tmp_path / "server.pid"
    owner = subprocess.Popen(
        [
            sys.executable, "-c",
            "import pathlib, sys, time\n"
            "from reqstudio.local_model import EmbeddedModelServer\n"
            "server = EmbeddedModelServer(threads=1, context_size=512)\n"
            "server.start()\n"
            "pathlib.Path(sys.argv[1]).write_text(str(server._process.pid))\n"
            "time.sleep(600)\n",
            str(pid_file),
        ],
        env=server_environment(),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not pid_file.exists() and owner.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pid_file.exists(), "the model server did not start"
        server_pid = int(pid_file.read_text())
        owner.kill()
        owner.wait(timeout=10)
        deadline = time.monotonic() + 20
        while _alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(server_pid), "the model server outlived the process that started it"
    finally:
        if owner.poll() is None:
            owner.kill()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has stopped running


@pytest.mark.browser
def test_stop_ends_generation_at_the_model_server_and_the_next_message_is_answered(
    browser: Browser, tmp_path: Path, output_dir: Path
):
    app = AppProcess(tmp_path / "data").start()
    model_log = tmp_path / "data" / "embedded-model.log"
    try:
        page = open_page(browser, app.url)
        expect(page.get_by_text("离线小模型", exact=False)).to_be_visible()
        send(page, "请写一篇很长的文章，介绍图书馆借阅系统的所有功能，越详细越好。")
        expect(page.locator("#stop-button")).to_be_visible()
        page.wait_for_timeout(2_000)  # the user lets it run for two seconds, then stops it
        click_until(page.locator("#stop-button"), page.get_by_text("已停止生成", exact=False))
        expect(page.get_by_text("Task manually stopped.")).to_have_count(0)
        send(page, "Say hello in one short sentence.")
        # the second answer ends with its statistics line, like the first (stopped) one
        expect(page.get_by_text(re.compile(r"\d+\.\d 秒"))).to_have_count(2, timeout=30_000)
        page.screenshot(path=output_dir / "chat-offline-stop-then-answer.png")
    finally:
        app.stop()
    # the model server saw the client go away, so it stopped generating the first answer
    assert "Disconnected from client" in model_log.read_text(errors="replace")


def test_embedded_answers_are_bounded_and_sampled_against_loops(tmp_path: Path):
    settings = load_settings(REQSTUDIO_DATA_DIR=str(tmp_path))
    factory = ModelFactory(settings, Endpoint("http://127.0.0.1:9/v1", "none", "m", embedded=True))
    body = factory.for_role("chat").extra_body
    assert body["max_tokens"] == embedded_max_tokens("chat") <= 1024
    assert body["repeat_penalty"] > 1.1 and body["frequency_penalty"] > 0
    assert factory.for_role("ReqParse").extra_body["max_tokens"] > 0
    assert "repeat_penalty" not in factory.for_role("ReqParse").extra_body  # grammar-bound JSON
