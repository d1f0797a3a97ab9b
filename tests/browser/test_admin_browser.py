"""Roles in a real browser: an account made with `--admin` administers (users, disabling, usage
per user and mode with its cost); everyone else is refused the admin page and sees only their
own threads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.apps import ROOT, AppProcess
from tests.browser_support import open_page, provider_env, send, wait_until_idle
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser

PASSWORDS = {"alice": "alice-long-pass", "bob": "bob-long-pass"}


def add_user(data_dir: Path, name: str, admin: bool = False) -> None:
    env = {
        k: v for k, v in os.environ.items() if k not in ("REQSTUDIO_DATABASE_URL", "DATABASE_URL")
    }
    added = subprocess.run(
        [sys.executable, "-m", "reqstudio.cli", "users", "add", name, *(["--admin"] if admin else [])],
        cwd=ROOT, env=env | {"REQSTUDIO_DATA_DIR": str(data_dir)},
        input=PASSWORDS[name] + "\n", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr


def data_with_users(tmp_path: Path, *names: str, admins: tuple[str, ...] = ()) -> Path:
    """A data folder whose accounts are `names` (passwords in PASSWORDS), `admins` among them
    made administrators."""
    data = tmp_path / "data"
    for name in names:
        add_user(data, name, admin=name in admins)
    return data


def log_in(browser: Browser, app: AppProcess, name: str) -> Page:
    page = open_page(browser, app.url, ready=False)
    page.locator("#email").fill(name)
    page.locator("#password").fill(PASSWORDS[name])
    page.locator("button[type=submit]").click()
    expect(page.get_by_text("已启用")).to_be_visible()
    return page


@pytest.mark.failed_requests(r"^401 (GET /user|POST /login)$", r"^403 GET /reqstudio/admin")
def test_the_admin_user_administers_and_sees_usage_per_user_and_mode(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path
):
    data = data_with_users(tmp_path, "alice", "bob", admins=("alice",))
    env = provider_env(llm_server) | {"AGENT_PRICES": json.dumps({"scripted-model": [1.0, 2.0]})}
    app = AppProcess(data, env).start()
    try:
        llm_server.script(Reply(content="鲍勃的答复", prompt_tokens=100, completion_tokens=50))
        bob = log_in(browser, app, "bob")
        send(bob, "bob 的报表需求")
        expect(bob.get_by_text("鲍勃的答复")).to_be_visible()
        wait_until_idle(bob)
        refused = bob.request.get(f"{app.url}/reqstudio/admin/users")
        assert refused.status == 403 and "alice" not in refused.text()
        assert bob.request.get(f"{app.url}/reqstudio/admin/usage").status == 403
        assert bob.request.post(f"{app.url}/reqstudio/admin/users/alice/disable").status == 403
        bob.goto(f"{app.url}/reqstudio/admin")
        expect(bob.get_by_text("administrators only")).to_be_visible()
        bob.context.close()

        alice = log_in(browser, app, "alice")
        alice.goto(f"{app.url}/reqstudio/admin")
        users = alice.locator("#users")
        expect(users.get_by_role("row", name="alice")).to_contain_text("管理员 / admin")
        expect(users.get_by_role("row", name="alice").get_by_role("button")).to_have_count(0)
        expect(users.get_by_role("row", name="bob")).to_contain_text("正常 / active")
        usage_row = alice.locator("#usage").get_by_role("row", name="bob")
        # 100 in, 50 out at 1.0 and 2.0 per 1k tokens: $0.2000
        expect(usage_row).to_contain_text("Chat")
        expect(usage_row).to_contain_text("100")
        expect(usage_row).to_contain_text("$0.2000")
        alice.screenshot(path=output_dir / "admin-page.png", full_page=True)
        users.get_by_role("row", name="bob").get_by_role("button").click()
        expect(users.get_by_role("row", name="bob")).to_contain_text("已停用 / disabled")
        usage = alice.request.get(f"{app.url}/reqstudio/admin/usage").json()
        assert usage == [
            {"user": "bob", "mode": "Chat", "model": "scripted-model", "calls": 1,
             "input_tokens": 100, "output_tokens": 50, "total_tokens": 150, "cost": 0.2}
        ]  # fmt: skip
        itself = alice.request.post(
            f"{app.url}/reqstudio/admin/users/alice/disable", headers={"accept": "application/json"}
        )
        assert itself.status == 400
    finally:
        app.stop()
    assert "alice disabled the account 'bob'" in app.log()


@pytest.mark.failed_requests(r"^401 (GET /user|POST /login)$")
def test_a_disabled_user_cannot_sign_in(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path
):
    data = data_with_users(tmp_path, "alice", "bob", admins=("alice",))
    app = AppProcess(data, provider_env(llm_server)).start()
    try:
        listing = {"pagination": {"first": 20}, "filter": {}}
        signed_in_bob = httpx.Client(base_url=app.url, timeout=20)
        signed_in_bob.post("/login", data={"username": "bob", "password": PASSWORDS["bob"]})
        assert signed_in_bob.post("/project/threads", json=listing).status_code == 200
        with httpx.Client(base_url=app.url, timeout=20) as http:
            http.post("/login", data={"username": "alice", "password": PASSWORDS["alice"]})
            disabled = http.post(
                "/reqstudio/admin/users/bob/disable", headers={"accept": "application/json"}
            )
            assert disabled.status_code == 200 and disabled.json()["disabled"] is True
        # the session he already had is refused too, REST and socket
        assert signed_in_bob.post("/project/threads", json=listing).status_code == 401
        socket = signed_in_bob.get("/ws/socket.io/", params={"EIO": "4", "transport": "polling"})
        assert socket.status_code == 401
        signed_in_bob.close()
        page = open_page(browser, app.url, ready=False)
        page.locator("#email").fill("bob")
        page.locator("#password").fill(PASSWORDS["bob"])
        page.locator("button[type=submit]").click()
        expect(page.get_by_text("无法登录")).to_be_visible()
        expect(page.locator("#chat-input")).to_have_count(0)
        with httpx.Client(base_url=app.url, timeout=20) as http:
            http.post("/login", data={"username": "alice", "password": PASSWORDS["alice"]})
            http.post("/reqstudio/admin/users/bob/enable", headers={"accept": "application/json"})
        assert log_in(browser, app, "bob")  # enabled again, he signs in
    finally:
        app.stop()
