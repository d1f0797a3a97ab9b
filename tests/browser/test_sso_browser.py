"""Single sign-on in a real browser against a real OpenID Connect provider (oidc-provider-mock,
started here on loopback) and the app started as users start it with Chainlit's generic
OAuth provider: sign in, see only one's own threads, sign out; identities from a domain not
allowed, disabled accounts and a forged `state` get no session; with no allowed domain or
group, a new identity is told in the browser's language that it waits for approval."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from oidc_provider_mock import User
from playwright.sync_api import Browser, Page, expect

from tests.apps import AppProcess, running_app
from tests.browser_support import open_page, send, wait_until_idle
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.sso_support import oidc_provider, sso_env, users

pytestmark = pytest.mark.browser

ALICE = User(
    sub="alice-0001",
    claims={"email": "alice@example.com", "name": "王爱丽", "email_verified": True},
)
MALLORY = User(sub="mallory-0002", claims={"email": "mallory@elsewhere.test", "name": "M"})
NEWCOMER = User(
    sub="newcomer-0003",
    claims={"email": "newcomer@elsewhere.test", "name": "N", "email_verified": True},
)


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    with oidc_provider(ALICE, MALLORY, NEWCOMER) as url:
        yield url


@pytest.fixture
def sso_app(provider: str, llm_server: ScriptedLLMServer, tmp_path: Path) -> Iterator[AppProcess]:
    env = sso_env(provider, llm_server) | {"REQSTUDIO_SSO_ALLOWED_DOMAINS": "example.com"}
    with running_app(tmp_path / "data", env) as process:
        yield process


def someone_elses_thread(app: AppProcess) -> str:
    """A thread of bob, stored as the app stores threads."""
    thread, user_id = str(uuid.uuid4()), str(uuid.uuid4())
    with sqlite3.connect(app.data_dir / "history.db") as db:
        db.execute(
            'INSERT INTO users ("id", "identifier", "metadata", "createdAt") VALUES (?, ?, ?, ?)',
            (user_id, "bob@example.com", "{}", "2026-11-01T00:00:00"),
        )
        db.execute(
            'INSERT INTO threads ("id", "name", "userId", "userIdentifier", "createdAt") '
            "VALUES (?, ?, ?, ?, ?)",
            (thread, "鲍勃的秘密项目", user_id, "bob@example.com", "2026-11-01T00:00:00"),
        )
    return thread


def sign_in_through_provider(page: Page, subject: str) -> None:
    """On the app's login page: the provider's button, then the provider's own form."""
    page.get_by_role("button", name="company-sso", exact=False).click()
    page.wait_for_url("**/oauth2/authorize**")
    page.get_by_role("button", name=subject, exact=True).click()


@pytest.mark.failed_requests(r"^401 GET /user$")
def test_sign_in_sees_only_own_threads_and_signs_out(
    browser: Browser, sso_app: AppProcess, llm_server: ScriptedLLMServer
):
    bobs = someone_elses_thread(sso_app)
    llm_server.script(Reply(content="收到：登录后的第一个问题。"))
    page = open_page(browser, sso_app.url, ready=False)
    expect(page.locator("#email")).to_have_count(0)  # no password form: SSO only
    sign_in_through_provider(page, ALICE.sub)
    expect(page.locator("#chat-input")).to_be_visible(timeout=60_000)
    send(page, "登录后的第一个问题")
    expect(page.get_by_text("收到：登录后的第一个问题。")).to_be_visible()
    wait_until_idle(page)

    listing = page.request.post(
        f"{sso_app.url}/project/threads", data={"pagination": {"first": 20}, "filter": {}}
    )
    assert listing.ok
    threads = listing.json()["data"]
    assert threads and {t["userIdentifier"] for t in threads} == {"alice@example.com"}
    assert bobs not in listing.text() and "鲍勃" not in listing.text()
    assert page.request.get(f"{sso_app.url}/project/thread/{bobs}").status in (401, 403, 404)
    expect(page.get_by_text("鲍勃的秘密项目")).to_have_count(0)

    me = page.request.get(f"{sso_app.url}/user").json()
    assert me["identifier"] == "alice@example.com" and me["display_name"] == "王爱丽"
    with sqlite3.connect(sso_app.data_dir / "history.db") as db:
        row = db.execute(
            'SELECT "provider", "subject", "passwordHash" FROM accounts WHERE "identifier" = ?',
            ("alice@example.com",),
        ).fetchone()
    assert row == ("sso:company-sso", ALICE.sub, None)

    token = next(c["value"] for c in page.context.cookies() if c["name"] == "access_token")
    page.locator("#user-nav-button").click()
    page.get_by_text("退出登录").click()
    expect(page.get_by_role("button", name="company-sso", exact=False)).to_be_visible()
    with httpx.Client(base_url=sso_app.url, timeout=10) as replay:
        replay.cookies.set("access_token", token)
        assert (
            replay.post(
                "/project/threads", json={"pagination": {"first": 20}, "filter": {}}
            ).status_code
            == 401
        )


@pytest.mark.failed_requests(r"^401 GET /user$")
def test_identity_from_a_domain_not_allowed_gets_no_session(browser: Browser, sso_app: AppProcess):
    page = open_page(browser, sso_app.url, ready=False)
    sign_in_through_provider(page, MALLORY.sub)
    page.wait_for_url("**/login?error=oauthSignin**")
    expect(page.locator("#chat-input")).to_have_count(0)
    assert not [c for c in page.context.cookies() if c["name"] == "access_token"]
    assert "single sign-on of 'mallory@elsewhere.test' refused: e-mail domain" in sso_app.log()
    with sqlite3.connect(sso_app.data_dir / "history.db") as db:
        assert db.execute("SELECT COUNT(*) FROM accounts").fetchone() == (0,)


@pytest.mark.failed_requests(r"^401 GET /user$")
def test_a_new_identity_is_told_it_waits_for_approval(
    browser: Browser,
    provider: str,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    output_dir: Path,
):
    app = AppProcess(tmp_path / "data", sso_env(provider, llm_server)).start()  # no domain
    try:
        told = {
            "zh-CN": "您的账号正在等待管理员批准，批准后即可登录。",
            "en-US": "Your account is waiting for an administrator's approval. "
            "You can sign in once it is approved.",
        }
        for locale, line in told.items():
            page = open_page(browser, app.url, locale, ready=False)
            sign_in_through_provider(page, NEWCOMER.sub)
            page.wait_for_url("**/login?error=accountPending")
            expect(page.get_by_text(line)).to_be_visible()
            expect(page.locator("#chat-input")).to_have_count(0)
            assert not [c for c in page.context.cookies() if c["name"] == "access_token"]
            page.screenshot(path=output_dir / f"sso-pending-{locale}.png", full_page=True)
            page.context.close()

        approved = users(app.data_dir, "approve", "newcomer@elsewhere.test")
        assert approved.returncode == 0, approved.stderr
        page = open_page(browser, app.url, "en-US", ready=False)
        sign_in_through_provider(page, NEWCOMER.sub)
        expect(page.locator("#chat-input")).to_be_visible(timeout=60_000)
    finally:
        app.stop()


@pytest.mark.failed_requests(r"^401 GET /user$")
def test_a_disabled_account_cannot_sign_in_again(browser: Browser, sso_app: AppProcess):
    page = open_page(browser, sso_app.url, ready=False)
    sign_in_through_provider(page, ALICE.sub)
    expect(page.locator("#chat-input")).to_be_visible(timeout=60_000)
    page.context.close()

    disabled = users(sso_app.data_dir, "disable", "alice@example.com")
    assert disabled.returncode == 0, disabled.stderr

    again = open_page(browser, sso_app.url, ready=False)
    sign_in_through_provider(again, ALICE.sub)
    again.wait_for_url("**/login?error=oauthSignin**")
    assert not [c for c in again.context.cookies() if c["name"] == "access_token"]


def test_a_forged_state_or_code_gets_no_session(provider: str, sso_app: AppProcess):
    with httpx.Client(base_url=sso_app.url, timeout=10) as client:
        start = client.get("/auth/oauth/company-sso")
        assert start.status_code in (302, 307) and start.headers["location"].startswith(provider)
        forged = client.get(
            "/auth/oauth/company-sso/callback", params={"code": "made-up", "state": "forged"}
        )
        no_state = client.get("/auth/oauth/company-sso/callback", params={"code": "made-up"})
        # the state is right (the cookie's), the code was never issued by the provider
        state = httpx.URL(start.headers["location"]).params["state"]
        bad_code = client.get(
            "/auth/oauth/company-sso/callback", params={"code": "made-up", "state": state}
        )
    for reply in (forged, no_state, bad_code):
        assert reply.status_code in (302, 307)
        assert "error=oauthSignin" in reply.headers["location"]
        assert "access_token" not in reply.headers.get("set-cookie", "")
