"""Single sign-on is safe by default: the app started as users start it, Chainlit's generic
OAuth provider against a real OpenID Connect provider (oidc-provider-mock on loopback), driven
over real HTTP as a browser follows the redirects.

- With no allowed domain or group, a new identity is added pending and signs in only once an
  administrator approves it (`reqstudio users approve`, or the admin page).
- With allowed domains, the provider must say the e-mail is verified (`email_verified` true).
- Nobody administers by being first; the start-up log says how identities are admitted and,
  with no administrator, which command makes one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from oidc_provider_mock import User

from tests.apps import AppProcess, running_app
from tests.scripted_server import ScriptedLLMServer
from tests.sso_support import oidc_provider, sso_env, users

VERIFIED = {"email_verified": True}
NEWCOMER = User(sub="new-01", claims={"email": "newcomer@elsewhere.test", "name": "N"} | VERIFIED)
VISITOR = User(sub="vis-02", claims={"email": "visitor@elsewhere.test", "name": "V"} | VERIFIED)
BOSS = User(sub="boss-03", claims={"email": "boss@elsewhere.test", "name": "B"} | VERIFIED)
# named in REQSTUDIO_ADMINS, but the provider does not say the address is theirs
CLAIMED_CHIEF = User(sub="chief-04", claims={"email": "chief@elsewhere.test", "name": "C"})
STAFF = User(sub="staff-05", claims={"email": "staff@example.com", "name": "S"} | VERIFIED)
UNSAID = User(sub="unsaid-06", claims={"email": "unsaid@example.com", "name": "U"})
UNVERIFIED = User(
    sub="unverified-07",
    claims={"email": "unverified@example.com", "name": "F", "email_verified": False},
)
ADMIN_PASSWORD = "alice-long-pass"
BOB_PASSWORD = "bob-long-pass"


def account(app: AppProcess, identifier: str) -> tuple | None:
    with sqlite3.connect(app.data_dir / "history.db") as db:
        return db.execute(
            'SELECT "provider", "subject", "isAdmin", "pending" FROM accounts '
            'WHERE "identifier" = ?',
            (identifier,),
        ).fetchone()


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    with oidc_provider(NEWCOMER, VISITOR, BOSS, CLAIMED_CHIEF, STAFF, UNSAID, UNVERIFIED) as url:
        yield url


@pytest.fixture(scope="module")
def approval_app(provider: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    """No allowed domain or group: new identities wait. alice (a password account made with
    --admin) administers, bob (a password account) does not; REQSTUDIO_ADMINS names two
    single sign-on identities."""
    data = tmp_path_factory.mktemp("approval") / "data"
    added = users(data, "add", "alice", "--admin", stdin=ADMIN_PASSWORD + "\n")
    assert added.returncode == 0 and "administrator" in added.stderr, added.stderr
    assert users(data, "add", "bob", stdin=BOB_PASSWORD + "\n").returncode == 0
    with ScriptedLLMServer() as server:
        env = sso_env(provider, server) | {
            "REQSTUDIO_ADMINS": "boss@elsewhere.test,chief@elsewhere.test"
        }
        with running_app(data, env) as process:
            yield process


@pytest.fixture(scope="module")
def domain_app(provider: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    """Allowed domain example.com, and no account at all yet."""
    with ScriptedLLMServer() as server:
        env = sso_env(provider, server) | {"REQSTUDIO_SSO_ALLOWED_DOMAINS": "example.com"}
        with running_app(tmp_path_factory.mktemp("domain") / "data", env) as process:
            yield process


def sso_sign_in(app: AppProcess, subject: str) -> httpx.Response:
    """What a browser does: the app's provider link, the provider's form (the subject's
    button), back to the app's callback. The callback's answer, with its cookies."""
    with httpx.Client(timeout=20) as browser:
        start = browser.get(f"{app.url}/auth/oauth/company-sso")
        assert start.status_code in (302, 307), start.text
        consent = browser.post(start.headers["location"], data={"sub": subject})
        assert consent.status_code == 302 and consent.headers["location"].startswith(app.url)
        return browser.get(consent.headers["location"])


def signed_in(answer: httpx.Response) -> bool:
    return "access_token" in answer.headers.get("set-cookie", "")


def told_to_wait(answer: httpx.Response) -> bool:
    return not signed_in(answer) and answer.headers["location"].endswith(
        "/login?error=accountPending"
    )


def test_a_new_identity_waits_until_approved_on_the_command_line(approval_app: AppProcess):
    first = sso_sign_in(approval_app, NEWCOMER.sub)
    assert told_to_wait(first)
    assert account(approval_app, "newcomer@elsewhere.test") == (
        "sso:company-sso", NEWCOMER.sub, 0, 1
    )  # fmt: skip
    assert told_to_wait(sso_sign_in(approval_app, NEWCOMER.sub))  # still waiting
    assert (
        "single sign-on of 'newcomer@elsewhere.test' refused: waiting for an administrator's "
        "approval" in approval_app.log()
    )
    listing = users(approval_app.data_dir, "list").stdout.splitlines()
    row = next(line.split("\t") for line in listing if line.startswith("newcomer@"))
    assert row[2:4] == ["user", "pending"]

    approved = users(approval_app.data_dir, "approve", "newcomer@elsewhere.test")
    assert approved.returncode == 0 and "approved newcomer@elsewhere.test" in approved.stderr
    after = sso_sign_in(approval_app, NEWCOMER.sub)
    assert signed_in(after) and "error" not in after.headers.get("location", "")
    assert account(approval_app, "newcomer@elsewhere.test")[2:] == (0, 0)  # a user, admitted
    missing = users(approval_app.data_dir, "approve", "nobody@elsewhere.test")
    assert missing.returncode == 2 and "no user 'nobody@elsewhere.test'" in missing.stderr


def test_an_administrator_approves_on_the_admin_page(approval_app: AppProcess):
    assert told_to_wait(sso_sign_in(approval_app, VISITOR.sub))
    with httpx.Client(base_url=approval_app.url, timeout=20) as admin:
        login = admin.post("/login", data={"username": "alice", "password": ADMIN_PASSWORD})
        assert login.status_code == 200
        listed = {a["identifier"]: a for a in admin.get("/reqstudio/admin/users").json()}
        assert listed["visitor@elsewhere.test"]["pending"] is True
        page = admin.get("/reqstudio/admin").text
        assert "待批准 / pending" in page and "批准 / Approve" in page
        assert "/reqstudio/admin/users/visitor%40elsewhere.test/approve" in page

        approve = "/reqstudio/admin/users/visitor@elsewhere.test/approve"
        json_wanted = {"accept": "application/json"}
        foreign = admin.post(approve, headers=json_wanted | {"origin": "https://evil.test"})
        assert foreign.status_code == 403  # a page elsewhere cannot use alice's cookie
        assert account(approval_app, "visitor@elsewhere.test")[3] == 1

        with httpx.Client(base_url=approval_app.url, timeout=20) as bob:
            login = bob.post("/login", data={"username": "bob", "password": BOB_PASSWORD})
            assert login.status_code == 200  # signed in, not an administrator
            assert bob.post(approve, headers=json_wanted).status_code == 403
        assert account(approval_app, "visitor@elsewhere.test")[3] == 1

        done = admin.post(approve, headers=json_wanted)
        assert done.status_code == 200, done.text
        assert done.json()["pending"] is False and done.json()["admin"] is False
    assert signed_in(sso_sign_in(approval_app, VISITOR.sub))
    assert "alice approved the account 'visitor@elsewhere.test'" in approval_app.log()


def test_an_identity_named_administrator_is_admitted_when_its_e_mail_is_verified(
    approval_app: AppProcess,
):
    boss = sso_sign_in(approval_app, BOSS.sub)
    assert signed_in(boss)
    with httpx.Client(base_url=approval_app.url, timeout=20) as http:
        http.cookies.set("access_token", boss.cookies["access_token"])
        assert http.get("/reqstudio/admin/users").status_code == 200  # administers
    # the same list, but the provider does not vouch for the address: it waits like anyone
    assert told_to_wait(sso_sign_in(approval_app, CLAIMED_CHIEF.sub))


def test_the_start_up_log_says_identities_wait_for_approval(approval_app: AppProcess):
    log = approval_app.log()
    assert (
        "single sign-on (company-sso): a new identity waits for an administrator's approval "
        "(/reqstudio/admin or `reqstudio users approve NAME`)" in log
    )
    assert "no administrator" not in log  # alice was made one with --admin


def test_allowed_domains_need_an_e_mail_the_provider_says_is_verified(domain_app: AppProcess):
    for subject in (UNSAID.sub, UNVERIFIED.sub):  # email_verified missing, then false
        refused = sso_sign_in(domain_app, subject)
        assert not signed_in(refused)
        assert refused.headers["location"].endswith("/login?error=oauthSignin")
    log = domain_app.log()
    for name in ("unsaid@example.com", "unverified@example.com"):
        assert f"single sign-on of {name!r} refused: e-mail address not verified" in log
    staff = sso_sign_in(domain_app, STAFF.sub)
    assert signed_in(staff)  # covered by the domain: no approval needed
    assert account(domain_app, "staff@example.com") == ("sso:company-sso", STAFF.sub, 0, 0)
    assert account(domain_app, "unsaid@example.com") is None
    assert account(domain_app, "unverified@example.com") is None


def test_the_first_identity_is_not_made_administrator_and_the_log_says_how(
    domain_app: AppProcess,
):
    first = sso_sign_in(domain_app, STAFF.sub)  # the first account of this database
    assert signed_in(first)
    assert account(domain_app, "staff@example.com")[2] == 0
    with httpx.Client(base_url=domain_app.url, timeout=20) as http:
        http.cookies.set("access_token", first.cookies["access_token"])
        assert http.get("/reqstudio/admin/users").status_code == 403
    log = domain_app.log()
    assert (
        "single sign-on (company-sso): signs in an identity with a verified e-mail in example.com; "
        "any other is refused" in log
    )
    no_admin = [line for line in log.splitlines() if "no administrator" in line]
    assert len(no_admin) == 1
    assert "`reqstudio users add NAME --admin`" in no_admin[0]
    assert "`reqstudio users approve NAME --admin`" in no_admin[0]


async def test_a_pending_identity_the_settings_admit_later_signs_in(tmp_path: Path):
    """Pending means nothing configured admitted it: once an allowed domain or group covers
    it, it signs in (and stays admitted) without an approval."""
    from reqstudio.accounts import AccountStore, AwaitingApproval

    store = AccountStore(f"sqlite+aiosqlite:///{tmp_path}/history.db")
    await store.create_table()
    try:
        who = {"provider": "sso:company-sso", "subject": "s-1", "display_name": "P"}
        for _ in range(2):
            with pytest.raises(AwaitingApproval):
                await store.sign_in_external("p@example.com", **who, needs_approval=True)
        assert (await store.get("p@example.com")).pending
        admitted = await store.sign_in_external("p@example.com", **who, needs_approval=False)
        assert admitted is not None and admitted.identifier == "p@example.com"
        assert not (await store.get("p@example.com")).pending
        # another subject claiming the name is refused, approved or not
        other = who | {"subject": "s-2"}
        assert await store.sign_in_external("p@example.com", **other) is None
    finally:
        await store.aclose()
