"""Writes are the caller's own and the app trusts no origin but its own: the real app over
real HTTP, with two password users (the feedback, origin and unknown-id guards)."""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.apps import AppProcess, running_app
from tests.browser_support import provider_env
from tests.scripted_server import ScriptedLLMServer

TWO_USERS = "alice:alice-pass,bob:bob-pass"


@contextmanager
def scripted_app(folder: Path, **settings: str) -> Iterator[AppProcess]:
    """The app on a scripted provider, with `settings` added to its environment, its data in
    `folder`/data; stopped at the end."""
    with (
        ScriptedLLMServer() as server,
        running_app(folder / "data", provider_env(server) | settings) as process,
    ):
        yield process


@pytest.fixture(scope="module")
def two_user_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    with scripted_app(tmp_path_factory.mktemp("guards"), REQSTUDIO_USERS=TWO_USERS) as process:
        yield process


def signed_in(app: AppProcess, user: str) -> httpx.Client:
    client = httpx.Client(base_url=app.url, timeout=10)
    reply = client.post("/login", data={"username": user, "password": f"{user}-pass"})
    assert reply.status_code == 200, reply.text
    return client


def own_thread(app: AppProcess, user: str) -> tuple[str, str, str]:
    """A thread of `user` with one step and one feedback on it, written as the app stores them."""
    thread, step, feedback = (str(uuid.uuid4()) for _ in range(3))
    with sqlite3.connect(Path(app.data_dir) / "history.db") as db:
        (user_id,) = db.execute('SELECT "id" FROM users WHERE "identifier" = ?', (user,)).fetchone()
        db.execute(
            'INSERT INTO threads ("id", "name", "userId", "userIdentifier") VALUES (?, ?, ?, ?)',
            (thread, f"{user}'s thread", user_id, user),
        )
        db.execute(
            'INSERT INTO steps ("id", "name", "type", "threadId", "output", "streaming") '
            "VALUES (?, ?, ?, ?, ?, 0)",
            (step, "assistant", "assistant_message", thread, "答复"),
        )
        db.execute(
            'INSERT INTO feedbacks ("id", "forId", "threadId", "value", "comment") '
            "VALUES (?, ?, ?, ?, ?)",
            (feedback, step, thread, 1, f"{user} liked it"),
        )
    return thread, step, feedback


def feedback_row(app: AppProcess, feedback: str) -> tuple | None:
    with sqlite3.connect(Path(app.data_dir) / "history.db") as db:
        return db.execute(
            'SELECT "forId", "threadId", "value", "comment" FROM feedbacks WHERE "id" = ?',
            (feedback,),
        ).fetchone()


def test_another_users_feedback_cannot_be_written_overwritten_or_deleted(two_user_app):
    alice, bob = signed_in(two_user_app, "alice"), signed_in(two_user_app, "bob")
    a_thread, a_step, a_feedback = own_thread(two_user_app, "alice")
    b_thread, b_step, _ = own_thread(two_user_app, "bob")
    before = feedback_row(two_user_app, a_feedback)

    attempts = [
        bob.put("/feedback", json={"feedback": {"forId": a_step, "value": 0, "threadId": a_thread}, "sessionId": "s"}),
        # her feedback id, pointed at his own step
        bob.put("/feedback", json={"feedback": {"id": a_feedback, "forId": b_step, "value": 0, "threadId": b_thread}, "sessionId": "s"}),
        # his thread id, her step
        bob.put("/feedback", json={"feedback": {"forId": a_step, "value": 0, "threadId": b_thread}, "sessionId": "s"}),
        bob.request("DELETE", "/feedback", json={"feedbackId": a_feedback}),
    ]  # fmt: skip
    assert [reply.status_code for reply in attempts] == [404, 404, 404, 404]
    assert all(a_step not in reply.text for reply in attempts)
    assert feedback_row(two_user_app, a_feedback) == before

    # Her own writes still work, through Chainlit's own route.
    mine = alice.put(
        "/feedback",
        json={"feedback": {"id": a_feedback, "forId": a_step, "value": 0, "comment": "改了"}, "sessionId": "s"},
    )  # fmt: skip
    assert mine.status_code == 200, mine.text
    assert feedback_row(two_user_app, a_feedback) == (a_step, a_thread, 0, "改了")
    assert alice.request("DELETE", "/feedback", json={"feedbackId": a_feedback}).status_code == 200
    assert feedback_row(two_user_app, a_feedback) is None


def test_unknown_ids_answer_404_not_500(two_user_app):
    alice = signed_in(two_user_app, "alice")
    assert alice.get(f"/project/thread/{uuid.uuid4()}").status_code == 404
    assert alice.put(
        "/feedback", json={"feedback": {"forId": str(uuid.uuid4()), "value": 1}, "sessionId": "s"}
    ).status_code == 404  # fmt: skip
    assert alice.request("DELETE", "/feedback", json={"feedbackId": "nope"}).status_code == 404


def test_a_page_of_another_origin_gets_nothing_with_the_users_cookie(two_user_app):
    alice = signed_in(two_user_app, "alice")
    thread, _, _ = own_thread(two_user_app, "alice")
    foreign = {"Origin": "http://127.0.0.1:1"}  # another port of the same host
    listing = {"pagination": {"first": 20}, "filter": {}}

    refused = [
        alice.post("/project/threads", json=listing, headers=foreign),
        alice.get(f"/project/thread/{thread}", headers=foreign),
        alice.get("/ws/socket.io/", params={"EIO": "4", "transport": "polling"}, headers=foreign),
    ]
    assert [reply.status_code for reply in refused] == [403, 403, 403]
    assert all(thread not in reply.text for reply in refused)
    assert "access-control-allow-origin" not in refused[0].headers

    own = {"Origin": two_user_app.url}
    listed = alice.post("/project/threads", json=listing, headers=own)
    assert listed.status_code == 200 and thread in listed.text
    assert alice.post("/project/threads", json=listing).status_code == 200  # no Origin: not a page


def test_listed_origins_are_accepted(tmp_path: Path):
    allowed = "https://intranet.example.com"
    with (
        scripted_app(tmp_path, REQSTUDIO_ALLOWED_ORIGINS=allowed) as app,
        httpx.Client(base_url=app.url, timeout=10) as client,
    ):
        listed = {"Origin": allowed}
        assert client.get("/project/settings", headers=listed).status_code != 403
        other = {"Origin": "https://evil.example.com"}
        assert client.get("/project/settings", headers=other).status_code == 403


def test_the_data_folder_and_its_files_are_the_owners_alone(two_user_app):
    signed_in(two_user_app, "alice")  # a login writes to the history database
    data = Path(two_user_app.data_dir)
    stored = [data, data / "history.db", data / "auth_secret", data / "uploads"]
    stored += [p for p in data.iterdir() if p.name.startswith(("history.db-", "checkpoints"))]
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in stored if p.exists()}
    assert {"data", "history.db", "auth_secret", "uploads"} <= set(modes)
    assert all(not int(mode, 8) & 0o077 for mode in modes.values()), modes


def test_an_old_world_readable_data_folder_is_tightened_at_start(tmp_path: Path):
    from reqstudio.runtime import keep_data_private

    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    (data / "history.db").write_text("")
    (data / "history.db").chmod(0o644)
    umask = os.umask(0o022)
    try:
        keep_data_private(data)
    finally:
        os.umask(umask)  # the test process's own umask, as it was
    assert oct(data.stat().st_mode & 0o777) == "0o700"
    assert oct((data / "history.db").stat().st_mode & 0o777) == "0o600"


def test_another_users_thread_cannot_be_renamed_shared_or_deleted(two_user_app):
    bob = signed_in(two_user_app, "bob")
    thread, _, feedback = own_thread(two_user_app, "alice")
    attempts = [
        bob.put("/project/thread", json={"threadId": thread, "name": "pwned"}),
        bob.put("/project/thread/share", json={"threadId": thread, "isShared": True}),
        bob.request("DELETE", "/project/thread", json={"threadId": thread}),
    ]
    assert all(reply.status_code in (401, 403, 404) for reply in attempts), attempts
    with sqlite3.connect(Path(two_user_app.data_dir) / "history.db") as db:
        row = db.execute('SELECT "name", "metadata" FROM threads WHERE "id" = ?', (thread,))
        assert row.fetchone() == ("alice's thread", None)
    assert feedback_row(two_user_app, feedback) is not None


@pytest.mark.parametrize(("proto", "secure"), [(None, False), ("https", True), ("http", False)])
def test_the_session_cookie_sticks_over_plain_http_and_is_secure_over_https(
    two_user_app, proto: str | None, secure: bool
):
    # From another address than 127.0.0.1, as a browser reaching the app through a proxy:
    # Chainlit marked the cookie Secure; SameSite=None regardless of the scheme.
    transport = httpx.HTTPTransport(local_address="127.0.0.2")
    with httpx.Client(base_url=two_user_app.url, transport=transport, timeout=10) as client:
        headers = {"X-Forwarded-Proto": proto} if proto else {}
        reply = client.post("/set-session-cookie", json={"session_id": "s-1"}, headers=headers)
    assert reply.status_code == 200
    cookie = reply.headers["set-cookie"].lower()
    assert cookie.startswith("x-chainlit-session-id=s-1")
    assert "samesite=lax" in cookie
    assert ("secure" in cookie.split("; ")) is secure


def test_failed_sign_ins_are_limited_per_user_and_address_and_logged(tmp_path: Path):
    with scripted_app(tmp_path, REQSTUDIO_USERS=TWO_USERS) as app:
        with httpx.Client(base_url=app.url, timeout=10) as client:
            wrong = [
                client.post("/login", data={"username": "alice", "password": f"guess-{n}"})
                for n in range(8)
            ]
            # names guessed from the same address, five tries each: twenty failures
            for name in ("carol", "dave", "erin"):
                for n in range(5):
                    client.post("/login", data={"username": name, "password": f"guess-{n}"})
            good = client.post("/login", data={"username": "alice", "password": "alice-pass"})
            # the address tried twenty times: bob is refused from it too
            bob_here = client.post("/login", data={"username": "bob", "password": "bob-pass"})
        elsewhere = httpx.HTTPTransport(local_address="127.0.0.2")
        with httpx.Client(base_url=app.url, transport=elsewhere, timeout=10) as client:
            bob_elsewhere = client.post("/login", data={"username": "bob", "password": "bob-pass"})
            alice_elsewhere = client.post(
                "/login", data={"username": "alice", "password": "alice-pass"}
            )
    codes = [reply.status_code for reply in wrong]
    assert codes == [401] * 5 + [429] * 3  # five in a row for one name, then refused
    assert good.status_code == 429 and int(good.headers["retry-after"]) > 0
    assert bob_here.status_code == 429
    assert bob_elsewhere.status_code == 200  # another name from another address
    assert alice_elsewhere.status_code == 429  # her name is still waiting
    log = app.log()
    assert "failed sign-in for 'alice' from 127.0.0.1" in log
    assert "sign-in refused for 'alice' from 127.0.0.1" in log
    assert "guess-" not in log and "alice-pass" not in log


def test_a_signed_out_token_is_refused_everywhere_when_replayed(two_user_app):
    alice = signed_in(two_user_app, "alice")
    thread, _, _ = own_thread(two_user_app, "alice")
    token = alice.cookies["access_token"]
    listing = {"pagination": {"first": 20}, "filter": {}}
    assert alice.post("/project/threads", json=listing).status_code == 200
    assert alice.post("/logout").status_code == 200

    with httpx.Client(base_url=two_user_app.url, timeout=10) as replay:
        replay.cookies.set("access_token", token)
        refused = [
            replay.post("/project/threads", json=listing),
            replay.get(f"/project/thread/{thread}"),
            replay.get("/ws/socket.io/", params={"EIO": "4", "transport": "polling"}),
        ]
        bearer = replay.get(
            f"/project/thread/{thread}", headers={"Authorization": f"Bearer {token}"}
        )
    assert [reply.status_code for reply in [*refused, bearer]] == [401] * 4
    assert all(thread not in reply.text for reply in [*refused, bearer])
    # signing in again gives a new token that works
    again = signed_in(two_user_app, "alice")
    assert again.post("/project/threads", json=listing).status_code == 200


@pytest.mark.parametrize(("proto", "secure"), [(None, False), ("https", True)])
def test_the_sign_in_cookie_is_secure_when_served_over_https(
    two_user_app, proto: str | None, secure: bool
):
    headers = {"X-Forwarded-Proto": proto} if proto else {}
    with httpx.Client(base_url=two_user_app.url, timeout=10) as client:
        reply = client.post(
            "/login", data={"username": "bob", "password": "bob-pass"}, headers=headers
        )
    assert reply.status_code == 200
    cookie = next(v for v in reply.headers.get_list("set-cookie") if v.startswith("access_token"))
    assert ("secure" in cookie.lower().split("; ")) is secure
