"""Password accounts: `reqstudio users` over a real database, and the app started as users
start it signing people in from that store over real HTTP."""

from __future__ import annotations

import fcntl
import os
import signal
import sqlite3
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.apps import ROOT, AppProcess, running_app
from tests.browser_support import provider_env
from tests.scripted_server import ScriptedLLMServer

PASSWORDS = {"alice": "alice-long-pass", "bob": "bob-long-pass", "carol": "carol-long-pass"}


def users(
    data_dir: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    environment = {
        k: v
        for k, v in os.environ.items()
        if k not in ("REQSTUDIO_DATABASE_URL", "DATABASE_URL", "REQSTUDIO_ADMINS")
    }
    return subprocess.run(
        [sys.executable, "-m", "reqstudio.cli", "users", *args],
        cwd=ROOT, env=environment | {"REQSTUDIO_DATA_DIR": str(data_dir)} | (env or {}),
        input=stdin, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def accounts(data_dir: Path) -> dict[str, tuple]:
    with sqlite3.connect(data_dir / "history.db") as db:
        rows = db.execute(
            'SELECT "identifier", "provider", "passwordHash", "isAdmin", "disabled" FROM accounts'
        ).fetchall()
    return {row[0]: row[1:] for row in rows}


def test_users_command_stores_argon2_hashes_never_the_password(tmp_path: Path):
    data = tmp_path / "data"
    for name in ("alice", "bob"):
        admin = ["--admin"] if name == "alice" else []
        added = users(data, "add", name, *admin, stdin=PASSWORDS[name] + "\n")
        assert added.returncode == 0, added.stderr
        assert ("administrator" in added.stderr) == (name == "alice")
    stored = accounts(data)
    assert set(stored) == {"alice", "bob"}
    assert stored["alice"][0] == "password" and stored["alice"][1].startswith("$argon2id$")
    assert stored["alice"][2] and not stored["bob"][2]
    raw = b"".join(p.read_bytes() for p in data.iterdir() if p.name.startswith("history.db"))
    assert not any(password.encode() in raw for password in PASSWORDS.values())
    assert (data / "history.db").stat().st_mode & 0o077 == 0

    duplicate = users(data, "add", "alice", stdin="another-long-pass\n")
    assert duplicate.returncode == 2 and "exists already" in duplicate.stderr
    too_short = users(data, "add", "carol", stdin="short\n")
    assert too_short.returncode == 2 and "at least 8" in too_short.stderr

    old_hash = stored["bob"][1]
    assert users(data, "passwd", "bob", stdin="bob-new-long-pass\n").returncode == 0
    assert accounts(data)["bob"][1] != old_hash
    assert users(data, "disable", "bob").returncode == 0
    listing = users(data, "list").stdout.splitlines()
    assert listing[1].split("\t")[:4] == ["alice", "password", "admin", "active"]
    assert listing[2].split("\t")[:4] == ["bob", "password", "user", "disabled"]
    assert users(data, "remove", "bob").returncode == 0
    missing = users(data, "remove", "bob")
    assert missing.returncode == 2 and "no user 'bob'" in missing.stderr
    assert set(accounts(data)) == {"alice"}


def test_an_administrator_is_made_explicitly_never_by_being_first(tmp_path: Path):
    data = tmp_path / "data"
    first = users(data, "add", "dora", stdin="dora-long-pass\n")  # the very first account
    assert first.returncode == 0 and "administrator" not in first.stderr
    made = users(data, "add", "erin", "--admin", stdin="erin-long-pass\n")
    assert made.returncode == 0 and "added erin (administrator)" in made.stderr
    assert {name: row[2] for name, row in accounts(data).items()} == {"dora": 0, "erin": 1}

    def roles(**env: str) -> dict[str, str]:
        rows = users(data, "list", env=env).stdout.splitlines()[1:]
        return {row.split("\t")[0]: row.split("\t")[2] for row in rows}

    assert roles() == {"dora": "user", "erin": "admin"}
    assert roles(REQSTUDIO_ADMINS="dora") == {"dora": "admin", "erin": "admin"}  # the list

    # a password account is never pending; approve --admin makes an existing user administer
    promoted = users(data, "approve", "dora", "--admin")
    assert promoted.returncode == 0 and "approved dora (administrator)" in promoted.stderr
    assert roles() == {"dora": "admin", "erin": "admin"}


def run_on_a_terminal(data_dir: Path, typed: list[str], *args: str) -> tuple[int, str]:
    """`reqstudio users ...` with a pseudo-terminal as its controlling terminal, so getpass
    asks there, as it does for a person."""
    leader, follower = os.openpty()

    def take_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    env = {
        k: v for k, v in os.environ.items() if k not in ("REQSTUDIO_DATABASE_URL", "DATABASE_URL")
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "reqstudio.cli", "users", *args],
        cwd=ROOT, env=env | {"REQSTUDIO_DATA_DIR": str(data_dir)},
        stdin=follower, stdout=follower, stderr=follower, preexec_fn=take_terminal,
    )  # fmt: skip
    os.close(follower)
    screen = b""
    given = 0
    while True:
        try:
            chunk = os.read(leader, 1024)
        except OSError:  # the program ended and closed the terminal
            break
        if not chunk:
            break
        screen += chunk
        asked = screen.count("密码: ".encode()) + screen.count("再次输入: ".encode())
        while given < asked:  # answer each prompt once, as it appears
            os.write(leader, (typed[given] + "\n").encode())
            given += 1
    os.close(leader)
    return process.wait(timeout=60), screen.decode(errors="replace")


def test_on_a_terminal_the_password_is_asked_twice(tmp_path: Path):
    data = tmp_path / "data"
    code, screen = run_on_a_terminal(data, ["first-long-pass", "other-long-pass"], "add", "dora")
    assert code == 2 and "differ" in screen and "密码" in screen
    assert "first-long-pass" not in screen  # not echoed
    code, screen = run_on_a_terminal(data, ["dora-long-pass", "dora-long-pass"], "add", "dora")
    assert code == 0, screen
    assert accounts(data)["dora"][1].startswith("$argon2id$")


@pytest.fixture(scope="module")
def store_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    data = tmp_path_factory.mktemp("accounts") / "data"
    for name in ("alice", "bob", "carol"):
        assert users(data, "add", name, stdin=PASSWORDS[name] + "\n").returncode == 0
    assert users(data, "disable", "carol").returncode == 0
    with ScriptedLLMServer() as server, running_app(data, provider_env(server)) as process:
        yield process


def sign_in(app: AppProcess, name: str, password: str, **client) -> httpx.Response:
    with httpx.Client(base_url=app.url, timeout=20, **client) as http:
        return http.post("/login", data={"username": name, "password": password})


def test_the_app_signs_in_from_the_store(store_app: AppProcess):
    good = sign_in(store_app, "alice", PASSWORDS["alice"])
    assert good.status_code == 200 and "access_token" in good.headers["set-cookie"]
    assert sign_in(store_app, "bob", "not-bobs-password").status_code == 401
    assert sign_in(store_app, "nobody", PASSWORDS["bob"]).status_code == 401
    disabled = sign_in(store_app, "carol", PASSWORDS["carol"])  # right password, disabled
    assert disabled.status_code == 401 and "access_token" not in disabled.headers.get(
        "set-cookie", ""
    )
    with sqlite3.connect(store_app.data_dir / "history.db") as db:
        (last,) = db.execute(
            'SELECT "lastSignIn" FROM accounts WHERE "identifier" = ?', ("alice",)
        ).fetchone()
    assert last  # the sign-in was recorded
    log = store_app.log()
    assert "failed sign-in for 'bob' from 127.0.0.1" in log
    assert not any(password in log for password in PASSWORDS.values())
    assert "not-bobs-password" not in log
    assert "deprecated" not in log  # no REQSTUDIO_USERS here


def test_failed_sign_ins_against_the_store_are_still_limited(store_app: AppProcess):
    # alice has no failure before this (her one sign-in above succeeded)
    elsewhere = {"transport": httpx.HTTPTransport(local_address="127.0.0.3")}
    codes = [sign_in(store_app, "alice", f"guess-{n}", **elsewhere).status_code for n in range(6)]
    assert codes == [401] * 5 + [429]
    # her right password is refused too, until the wait has passed
    assert sign_in(store_app, "alice", PASSWORDS["alice"], **elsewhere).status_code == 429


def test_plain_passwords_in_the_environment_still_work_with_a_deprecation_line(tmp_path: Path):
    data = tmp_path / "data"
    with ScriptedLLMServer() as server:
        env = provider_env(server) | {"REQSTUDIO_USERS": "erin:erin-plain-pass"}
        app = AppProcess(data, env).start()
        try:
            assert sign_in(app, "erin", "erin-plain-pass").status_code == 200
            assert sign_in(app, "erin", "wrong-pass").status_code == 401
        finally:
            app.stop()
    assert "REQSTUDIO_USERS (plain-text passwords) is deprecated" in app.log()
    assert accounts(data)["erin"][:2] == ("env", None)  # known, without any password
    # moving her to a hashed password keeps her account (and its role)
    assert users(data, "add", "erin", stdin="erin-hashed-pass\n").returncode == 0
    assert accounts(data)["erin"][0] == "password"


def test_accounts_on_postgresql_are_shared_by_every_instance(postgres_url: str, tmp_path: Path):
    env = {
        k: v for k, v in os.environ.items() if k not in ("REQSTUDIO_DATABASE_URL", "DATABASE_URL")
    }
    for name in ("alice", "bob"):
        admin = ["--admin"] if name == "alice" else []
        added = subprocess.run(
            [sys.executable, "-m", "reqstudio.cli", "users", "add", name, *admin],
            cwd=ROOT, input=PASSWORDS[name] + "\n", capture_output=True, text=True, timeout=60,
            env=env | {"REQSTUDIO_DATA_DIR": str(tmp_path / "cli"),
                       "REQSTUDIO_DATABASE_URL": postgres_url},
        )  # fmt: skip
        assert added.returncode == 0, added.stderr
    with ScriptedLLMServer() as server:
        shared = provider_env(server) | {
            "REQSTUDIO_DATABASE_URL": postgres_url,
            "CHAINLIT_AUTH_SECRET": "one-secret-for-both-instances-0123456789abcdef",
        }
        first = AppProcess(tmp_path / "one", shared).start()
        second = AppProcess(tmp_path / "two", shared).start()
        try:
            assert sign_in(second, "bob", PASSWORDS["bob"]).status_code == 200
            with httpx.Client(base_url=first.url, timeout=20) as admin:
                assert (
                    admin.post(
                        "/login", data={"username": "alice", "password": PASSWORDS["alice"]}
                    ).status_code
                    == 200
                )
                accounts_seen = admin.get("/reqstudio/admin/users").json()
                assert [a["identifier"] for a in accounts_seen] == ["alice", "bob"]
                assert (
                    admin.post(
                        "/reqstudio/admin/users/bob/disable", headers={"accept": "application/json"}
                    ).status_code
                    == 200
                )
            # disabled on the first instance, refused on the second
            assert sign_in(second, "bob", PASSWORDS["bob"]).status_code == 401
        finally:
            first.stop()
            second.stop()


def test_sso_identities_are_checked_by_domain_verification_and_group():
    from reqstudio.web.sign_in import sso_refusal

    domains, groups = frozenset({"example.com"}), frozenset({"requirements"})
    alice = {"email": "alice@example.com", "email_verified": True, "groups": ["requirements"]}
    assert sso_refusal("alice@example.com", alice, domains, groups) is None
    assert sso_refusal("alice@example.com", alice, frozenset(), frozenset()) is None
    assert "domain" in sso_refusal(
        "m@example.com.evil.test",
        {"email": "m@example.com.evil.test", "email_verified": True},
        domains,
        frozenset(),
    )
    # with allowed domains the provider must say the address is verified: missing is not
    for verified in ({}, {"email_verified": False}, {"email_verified": "false"}):
        claims = {"email": "x@example.com"} | verified
        assert "not verified" in sso_refusal("x@example.com", claims, domains, frozenset())
    for verified in ({"email_verified": "true"}, {"verified_email": True}):  # Google's v2 name
        claims = {"email": "x@example.com"} | verified
        assert sso_refusal("x@example.com", claims, domains, frozenset()) is None
    # groups alone ask no e-mail at all
    assert sso_refusal("r", {"groups": ["requirements"]}, frozenset(), groups) is None
    assert "groups" in sso_refusal("alice@example.com", {"groups": ["staff"]}, frozenset(), groups)
    assert sso_refusal("r", {"roles": "viewer requirements"}, frozenset(), groups) is None
    assert "groups" in sso_refusal("r", {}, frozenset(), groups)


@pytest.mark.parametrize("sign_in_way", ["password account", "single sign-on"])
def test_beyond_loopback_an_account_or_sso_counts_as_sign_in(sign_in_way: str, tmp_path: Path):
    """Bound to 0.0.0.0 the app starts when sign-in is configured either way (it is reached
    here only through 127.0.0.1)."""
    data = tmp_path / "data"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("REQSTUDIO_USERS", "CI", "REQSTUDIO_DATABASE_URL", "DATABASE_URL")
    }
    if sign_in_way == "password account":
        assert users(data, "add", "alice", stdin=PASSWORDS["alice"] + "\n").returncode == 0
    else:
        env |= {
            f"OAUTH_GENERIC_{key}": value
            for key, value in {
                "CLIENT_ID": "reqstudio", "CLIENT_SECRET": "s",
                "AUTH_URL": "http://127.0.0.1:9/authorize", "TOKEN_URL": "http://127.0.0.1:9/token",
                "USER_INFO_URL": "http://127.0.0.1:9/userinfo", "SCOPES": "openid email",
            }.items()
        }  # fmt: skip
    from reqstudio.local_model import free_port

    port = free_port()
    data.mkdir(parents=True, exist_ok=True)
    env |= {"OPENAI_API_KEY": "sk-x", "REQSTUDIO_DATA_DIR": str(data)}
    with open(data / "app.log", "wb") as log:
        process = subprocess.Popen(
            [str(Path(sys.executable).parent / "chainlit"), "run", "app.py", "--headless",
             "--host", "0.0.0.0", "--port", str(port)],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        config = None
        for _ in range(600):  # up to 60 s for the first answer
            if process.poll() is not None:
                break
            try:
                config = httpx.get(f"http://127.0.0.1:{port}/auth/config", timeout=1.0)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        assert config is not None, (data / "app.log").read_text()
        # The bind check runs once the server listens: it has run, and the app still serves.
        for _ in range(600):
            if "listening on 0.0.0.0" in (data / "app.log").read_text():
                break
            time.sleep(0.1)
        assert "listening on 0.0.0.0" in (data / "app.log").read_text()
        assert process.poll() is None, (data / "app.log").read_text()
        answer = config.json()
        assert answer["requireLogin"] is True and answer["headerAuth"] is False
        assert answer["passwordAuth"] is (sign_in_way == "password account")
        assert answer["oauthProviders"] == (
            [] if sign_in_way == "password account" else ["generic"]
        )
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=40)


def test_a_burst_of_sign_ins_hashes_one_at_a_time_behind_the_event_loop(tmp_path: Path):
    """Argon2 takes 64 MiB and four threads per hash. Twenty sign-ins at once ran six hashes
    at once on the default executor and stalled the event loop (the streams of everyone
    already signed in) for 150-200 ms; hashes now run one at a time, at a lower priority
    than the loop (the load benchmark's burst: longest stall 146-214 ms -> 21-38 ms)."""
    import asyncio
    import threading

    from reqstudio import accounts as module
    from reqstudio.accounts import AccountStore

    real = module._HASHER
    running, seen = [0], {"most_at_once": 0, "priorities": set(), "threads": set()}
    lock = threading.Lock()

    class Watched:  # the real hasher, watched
        def __getattr__(self, name: str):
            method = getattr(real, name)

            def call(*args: str):
                with lock:
                    running[0] += 1
                    seen["most_at_once"] = max(seen["most_at_once"], running[0])
                seen["threads"].add(threading.get_ident())
                seen["priorities"].add(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
                try:
                    return method(*args)
                finally:
                    with lock:
                        running[0] -= 1

            return call

    async def burst() -> list:
        store = AccountStore(f"sqlite+aiosqlite:///{tmp_path}/history.db")
        await store.create_table()
        try:
            for name in ("alice", "bob"):
                await store.add_password_user(name, PASSWORDS[name])
            tries = [("alice", PASSWORDS["alice"]), ("bob", "wrong-long-pass"), ("nobody", "x")]
            return await asyncio.gather(*(store.verify_password(n, p) for n, p in tries * 3))
        finally:
            await store.aclose()

    loop_priority = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    module._HASHER = Watched()
    try:
        results = asyncio.run(burst())
    finally:
        module._HASHER = real
    assert [r.identifier if r else None for r in results] == ["alice", None, None] * 3
    assert seen["most_at_once"] == 1
    assert threading.get_ident() not in seen["threads"]  # never on the event loop's thread
    assert min(seen["priorities"]) > loop_priority  # nice: the loop is scheduled first


async def test_a_sign_in_behind_too_many_others_is_told_to_retry_at_once(monkeypatch):
    """Checks run one at a time: past `MAX_IN_LINE` waiting, a sign-in is not put in a line
    without a bound (a flood of tries would make every sign-in wait) but answered 429 at once,
    with Retry-After and a sentence in the browser's language."""
    from fastapi import FastAPI
    from httpx import ASGITransport, AsyncClient

    from reqstudio import accounts
    from reqstudio.web import login_guard

    app = FastAPI()
    app.include_router(login_guard.router)
    monkeypatch.setattr(accounts, "hashes_in_line", lambda: accounts.MAX_IN_LINE)
    async with AsyncClient(transport=ASGITransport(app=app), base_url="http://app") as http:
        answers = {
            language: await http.post(
                "/login",
                data={"username": "alice", "password": PASSWORDS["alice"]},
                headers={"Accept-Language": language},
            )
            for language in ("zh-CN,zh;q=0.9", "en-US")
        }
    assert {a.status_code for a in answers.values()} == {429}
    assert all(a.headers["retry-after"] == "5" for a in answers.values())
    assert answers["zh-CN,zh;q=0.9"].json()["detail"] == "此刻登录的人太多，请几秒后再试。"
    assert answers["en-US"].json()["detail"].startswith("Too many people are signing in")
    assert login_guard.ATTEMPTS.refusal("alice", "127.0.0.1") == 0  # not counted as a failure


def test_the_hash_an_unknown_name_is_checked_against_costs_what_a_real_one_costs():
    # The written-out hash must be one the hasher would make (its kind and parameters):
    # else an unknown name answers faster than a wrong password and tells which names exist.
    from pwdlib.hashers.argon2 import Argon2Hasher

    from reqstudio import accounts

    made = accounts._HASHER.hash("any password")
    assert accounts._DUMMY_HASH.rsplit("$", 2)[0] == made.rsplit("$", 2)[0]  # argon2id, m, t, p
    assert Argon2Hasher().identify(accounts._DUMMY_HASH)
    assert accounts._HASHER.verify_and_update("not it", accounts._DUMMY_HASH) == (False, None)
