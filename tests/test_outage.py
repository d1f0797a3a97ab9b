"""The truth while the database is away, with a real app process on a real
PostgreSQL server that the test stops and starts:

- an SRS run whose checkpoint cannot be written says which step is lost and which are saved,
  and the Resume it promises is there once the database is back, continuing from the last
  saved step; a run that cannot start says that nothing ran;
- signing in says, in the browser's language, that the database is away (503, and the login
  form's own translation), instead of a bare error; so does the history list of a signed-in
  user (before: an English "Not Found" toast)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx

from tests.apps import AppProcess
from tests.browser_support import provider_env
from tests.postgres_support import PostgresServer
from tests.socket_tabs import ScriptedLLMServer, Tab
from tests.test_srs_instances import (
    DESCRIPTION,
    instances_env,
    leases,
    requests_for,
    resume_offer,
    script_the_rest,
)
from tests.test_srs_support import E_STORE, EXPLORE, PARSE, explore_reply, parse_reply

SHARED_SECRET = "test-shared-secret-" + "x" * 40


def stored_state(database_url: str, thread_id: str) -> str:
    """What the database holds for a thread's SRS run (shown when a check fails)."""
    import psycopg

    from reqstudio.persistence import libpq_conninfo

    with psycopg.connect(libpq_conninfo(database_url)) as conn:
        metadata = conn.execute(
            "SELECT metadata FROM threads WHERE id = %s", (thread_id,)
        ).fetchone()
        checkpoints = conn.execute(
            "SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id"
        ).fetchall()
    return f"thread metadata: {metadata}; checkpoints: {checkpoints}"


def test_srs_run_cut_by_the_database_says_what_is_saved_and_resumes_once_it_is_back(
    llm_server: ScriptedLLMServer, postgres_server: PostgresServer, postgres_url: str,
    tmp_path: Path,
):  # fmt: skip
    env = instances_env(llm_server, postgres_url) | {"REQSTUDIO_DB_POOL_TIMEOUT": "5"}
    app = AppProcess(tmp_path / "a", env).start()

    async def scenario() -> None:
        llm_server.script(
            parse_reply(("FR-01", "Readers search books."), ("FR-02", "Readers reserve books.")),
            # answered once the database is gone: this step's result cannot be saved
            explore_reply(("FR-01", "Readers search by title."), delay=3),
        )
        tab = await Tab(app).open()
        await tab.until_shown("mode is on")
        await tab.send(DESCRIPTION, attach=E_STORE / "reference.md")
        await tab.until(lambda: requests_for(llm_server, EXPLORE) == 1)
        await asyncio.to_thread(postgres_server.stop)
        try:
            await tab.until_shown("The database could not be reached", timeout=60)
            [said] = [t for t in tab.texts() if "The database could not be reached" in t]
            assert "the step that was running (ReqExplore) is not saved" in said
            assert "The steps completed before it are saved (the last one: ReqParse)" in said
            assert "reopen this thread and click Resume" in said
            assert "Completed steps are saved." not in said  # the old, partly untrue line

            await tab.close()
            # a run that cannot even start (a new chat) says that nothing ran
            other = await Tab(app).open()
            await other.until_shown("mode is on")
            await other.send("Another system: a shop.", attach=E_STORE / "reference.md")
            await other.until_shown("The run did not go ahead", timeout=60)
            await other.close()
        finally:
            await asyncio.to_thread(postgres_server.start)

        started = time.monotonic()
        while leases(postgres_url):  # not released while the database was away: it lapses
            assert time.monotonic() - started < 10
            await asyncio.sleep(0.1)
        script_the_rest(llm_server)
        again = await Tab(app, thread_id=tab.thread_id).open()
        try:
            try:
                offer = await resume_offer(again)  # the Resume the message promised
            except AssertionError as error:
                raise AssertionError(
                    f"{stored_state(postgres_url, tab.thread_id)}\n{error}"
                ) from None
            assert again.shows("last completed node: ReqParse")
            finished = again.click(offer)
            await again.until_shown("✅ Done", timeout=120)
            assert (await finished).status_code == 200
        finally:
            await again.close()
        assert requests_for(llm_server, PARSE) == 1  # the saved step was not run again
        assert requests_for(llm_server, EXPLORE) == 2  # the lost one was

    try:
        asyncio.run(scenario())
    finally:
        if not postgres_server.running:
            postgres_server.start()
        app.stop()


def test_sign_in_and_history_list_say_the_database_is_away_in_the_users_language(
    llm_server: ScriptedLLMServer, postgres_server: PostgresServer, postgres_url: str,
    tmp_path: Path,
):  # fmt: skip
    env = provider_env(llm_server) | {
        "REQSTUDIO_DATABASE_URL": postgres_url,
        "CHAINLIT_AUTH_SECRET": SHARED_SECRET,
        "REQSTUDIO_USERS": "alice:alice-pass",
    }
    app = AppProcess(tmp_path / "a", env).start()
    form = {"username": "alice", "password": "alice-pass"}
    listing = {"pagination": {"first": 20}, "filter": {}}
    try:
        with httpx.Client(base_url=app.url, timeout=60) as signed_in:
            assert signed_in.post("/login", data=form).status_code == 200
            assert signed_in.post("/project/threads", json=listing).status_code == 200

            postgres_server.stop()
            try:
                for language, expected in (
                    ("zh-CN,zh;q=0.9", "数据库暂时无法访问，现在无法登录"),
                    ("en-US,en;q=0.9", "The database cannot be reached just now, so signing in"),
                ):
                    refused = httpx.post(
                        f"{app.url}/login", data=form, headers={"Accept-Language": language}
                    )
                    assert refused.status_code == 503, refused.text
                    assert expected in refused.json()["detail"]
                threads = signed_in.post(
                    "/project/threads", json=listing, headers={"Accept-Language": "zh-CN"}
                )
                assert threads.status_code == 503  # was 404 "User not found": "Not Found"
                assert "历史对话列表暂时无法显示" in threads.json()["detail"]
            finally:
                postgres_server.start()

            # the login form shows its own translation of a 503, in the user's language
            for language, expected in (
                ("zh-CN", "数据库暂时无法访问"),
                ("en-US", "cannot be reached"),
            ):
                translation = signed_in.get(
                    "/project/translations", params={"language": language}
                ).json()["translation"]
                assert expected in translation["auth"]["login"]["errors"]["service unavailable"]

            assert httpx.post(f"{app.url}/login", data=form).status_code == 200  # back
            assert signed_in.post("/project/threads", json=listing).status_code == 200
        assert "sign-in of 'alice' refused: the database is unavailable" in app.log()
        assert "failed sign-in" not in app.log()  # not counted against alice's password
    finally:
        if not postgres_server.running:
            postgres_server.start()
        app.stop()
