"""Share a finished thread read-only with another signed-in user: Chainlit's
thread sharing, off by default and on with REQSTUDIO_THREAD_SHARING=true."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.apps import AppProcess
from tests.browser.test_admin_browser import data_with_users, log_in
from tests.browser_support import provider_env, send, wait_until_idle
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser


@pytest.mark.failed_requests(r"^401 (GET /user|POST /login)$")
def test_alice_shares_a_thread_bob_reads_it_and_cannot_write(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path
):
    data = data_with_users(tmp_path, "alice", "bob")
    app = AppProcess(data, provider_env(llm_server) | {"REQSTUDIO_THREAD_SHARING": "true"})
    app.start()
    try:
        llm_server.script(Reply(content="借阅期限为 30 天。"))
        alice = log_in(browser, app, "alice")
        alice.context.grant_permissions(["clipboard-read", "clipboard-write"])
        send(alice, "借阅期限是多久？")
        expect(alice.get_by_text("借阅期限为 30 天。")).to_be_visible()
        wait_until_idle(alice)
        thread_id = re.search(r"/thread/([0-9a-f-]+)", alice.url).group(1)
        alice.locator(f"#thread-{thread_id}").hover()
        alice.locator(f"#thread-{thread_id} #thread-options").click()
        alice.locator("#share-thread").click()
        dialog = alice.get_by_role("dialog")
        dialog.get_by_role("button", name="分享", exact=True).click()
        link = dialog.locator("span[title]")
        expect(link).to_contain_text(f"/share/{thread_id}")
        share_url = link.inner_text().strip()

        bob = log_in(browser, app, "bob")
        bob.goto(share_url)
        expect(bob.get_by_text("借阅期限为 30 天。")).to_be_visible()
        expect(bob.get_by_text("借阅期限是多久？")).to_be_visible()
        expect(bob.locator("#chat-input")).to_have_count(0)  # read-only
        bob.screenshot(path=output_dir / "shared-thread-zh-CN.png")
        # bob's own history does not list alice's thread, and he cannot rename it
        cookies = {c["name"]: c["value"] for c in bob.context.cookies()}
        renamed = httpx.put(
            f"{app.url}/project/thread", json={"threadId": thread_id, "name": "bob was here"},
            cookies=cookies, timeout=30,
        )  # fmt: skip
        assert renamed.status_code in (401, 403, 404)
        # a visitor who is not signed in gets nothing
        anonymous = httpx.get(f"{app.url}/project/share/{thread_id}", timeout=30)
        assert anonymous.status_code in (401, 404) and "借阅" not in anonymous.text
    finally:
        app.stop()


def test_sharing_is_off_by_default(app: AppProcess):
    answer = httpx.get(f"{app.url}/project/share/anything", timeout=30)
    assert answer.status_code in (401, 404)
    settings = httpx.get(f"{app.url}/project/settings", timeout=30)
    assert settings.status_code in (200, 401)
