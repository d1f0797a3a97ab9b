"""Several app instances on one PostgreSQL database, in a real browser: a thread made on one
instance shows and resumes on another (memory and mode), logins stay private, an SRS run
stopped on one instance resumes on another, and the database going away mid-conversation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.apps import AppProcess, shared_database_env, two_instances
from tests.browser.test_srs_browser import SRS
from tests.browser_support import (
    bring_into_view,
    click_until,
    failed_requests,
    open_page,
    provider_env,
    send,
    stop_srs_run_in_explore,
    wait_until_idle,
    wait_until_loaded,
)
from tests.postgres_support import PostgresServer
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.test_srs_support import E_STORE, clarify_reply, doc_reply, explore_reply, parse_reply

pytestmark = pytest.mark.browser


def shared_env(llm_server: ScriptedLLMServer, database_url: str, **extra: str) -> dict[str, str]:
    return shared_database_env(provider_env(llm_server), database_url) | extra


def login(page: Page, user: str, password: str) -> Page:
    page.locator("#email").fill(user)
    page.locator("#password").fill(password)
    page.locator("button[type=submit]").click()
    expect(page.get_by_text("已启用")).to_be_visible()
    return page


# The login form: the browser asks who is signed in (401 until someone is) and a wrong
# password is refused.
@pytest.mark.failed_requests(r"^401 (GET /user|POST /login)$")
def test_two_instances_share_threads_and_logins_stay_private(
    browser: Browser, llm_server: ScriptedLLMServer, postgres_url: str, tmp_path: Path,
    output_dir: Path,
):  # fmt: skip
    env = shared_env(llm_server, postgres_url, REQSTUDIO_USERS="alice:alice-pass,bob:bob-pass")
    with two_instances(tmp_path, env) as (first, second):
        llm_server.script(Reply(content="已记录：审批流程需要两级审核。"))
        alice = login(open_page(browser, first.url, ready=False), "alice", "alice-pass")
        send(alice, "审批流程需要两级审核")
        expect(alice.get_by_text("已记录：审批流程需要两级审核。")).to_be_visible()

        # the same browser goes to the other instance: still signed in (shared secret), and
        # the thread written through the first instance is in its history
        alice.goto(second.url)
        thread = alice.locator("#thread-history").get_by_text("审批流程需要两级审核")
        expect(thread).to_be_visible()

        first.stop()  # the instance that wrote the thread is gone
        thread.click()
        expect(alice.get_by_text("已记录：审批流程需要两级审核。")).to_be_visible()
        expect(alice.get_by_text("已启用 Chat 对话 模式")).to_be_visible()  # the mode came back
        llm_server.script(Reply(content="需要两级审核。"))
        send(alice, "审批需要几级审核？")
        expect(alice.get_by_text("需要两级审核。", exact=True)).to_be_visible()
        contents = [m["content"] for m in llm_server.requests[-1]["messages"]]
        assert "审批流程需要两级审核" in contents  # the memory came back too
        assert "已记录：审批流程需要两级审核。" in contents
        alice.screenshot(path=output_dir / "pg-two-instances-resumed.png")
        alice.context.close()

        bob = login(open_page(browser, second.url, ready=False), "bob", "bob-pass")
        send(bob, "bob 的报表需求")
        expect(bob.locator("#thread-history").get_by_text("bob 的报表需求")).to_be_visible()
        expect(bob.locator("#thread-history").get_by_text("审批流程需要两级审核")).to_have_count(0)
        bob.screenshot(path=output_dir / "pg-bob-threads.png")


def test_srs_run_stopped_on_one_instance_resumes_on_another(
    browser: Browser, llm_server: ScriptedLLMServer, postgres_url: str, tmp_path: Path,
    output_dir: Path,
):  # fmt: skip
    env = shared_env(llm_server, postgres_url)
    with two_instances(tmp_path, env) as (first, second):
        llm_server.script(
            parse_reply(("FR-01", "读者可以检索图书"), ("FR-02", "读者可以预约图书")),
            explore_reply(("FR-01", "读者可以按书名检索图书"), delay=30),  # running at stop
        )
        page = open_page(browser, first.url)
        stop_srs_run_in_explore(
            page, "图书馆借阅系统：读者检索、预约图书。", E_STORE / "reference.md"
        )
        page.context.close()
        first.stop()

        llm_server.reset()
        llm_server.script(
            explore_reply(("FR-01", "读者可以按书名检索图书"), ("FR-02", "读者可以预约图书")),
            clarify_reply(FR_01=2, FR_02=2),
            doc_reply(SRS),
        )
        page = open_page(browser, second.url)
        page.locator("#thread-history").get_by_text("图书馆借阅系统", exact=False).click()
        expect(page.get_by_text("最后完成的节点：ReqParse", exact=False)).to_be_visible()
        expect(page.locator("#chat-profiles")).to_contain_text("SRS 生成")
        wait_until_loaded(page)
        click_until(
            page.get_by_role("button", name="继续运行"),
            page.get_by_text("✅ 完成", exact=False),
            timeout=60_000,
        )
        page.screenshot(path=output_dir / "pg-srs-resumed-elsewhere.png")
    parse_calls = [r for r in llm_server.requests if "Requirement Parsing Agent" in str(r)]
    assert parse_calls == []  # ReqParse was not run again on the second instance


# While the database is away the browser cannot list the threads: the app answers 503 with a
# sentence in the user's language (Chainlit's own answer was 404, an English "Not Found").
# What the page says, by the browser's language.
AWAY_TEXTS = {
    "zh-CN": ("已启用", "本轮结束时历史记录数据库无法访问", "历史对话列表暂时无法显示"),
    "en-US": (
        "mode is on",
        "The history database could not be reached when this turn ended",
        "the list of past threads cannot be shown",
    ),
}


@pytest.mark.failed_requests(r"^503 POST /project/threads$")
@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_database_going_away_mid_conversation(
    browser: Browser, llm_server: ScriptedLLMServer, postgres_server: PostgresServer,
    postgres_url: str, tmp_path: Path, output_dir: Path, locale: str,
):  # fmt: skip
    mode_on, turn_not_saved, list_away = AWAY_TEXTS[locale]
    app = AppProcess(tmp_path / "a", shared_env(llm_server, postgres_url)).start()
    try:
        llm_server.script(
            Reply(content="第一轮：已记录库存需求。"),
            Reply(content="第二轮：数据库不在时的回答。"),
            Reply(content="第三轮：数据库回来了。"),
        )
        page = open_page(browser, app.url, locale)
        expect(page.get_by_text(mode_on)).to_be_visible()
        send(page, "库存需要每日盘点")
        expect(page.get_by_text("第一轮：已记录库存需求。")).to_be_visible()
        wait_until_idle(page)  # the turn has ended: its history is written (the app waits)

        postgres_server.stop()
        try:
            send(page, "数据库停了还能回答吗")
            expect(page.get_by_text("第二轮：数据库不在时的回答。")).to_be_visible()
            notice = page.get_by_text(turn_not_saved, exact=False)
            expect(notice).to_be_visible()  # told plainly; the app keeps serving
            if failed_requests():  # the sidebar asked for the history list meanwhile
                expect(page.get_by_text(list_away, exact=False).first).to_be_visible()
            page.screenshot(path=output_dir / f"pg-database-away-{locale}.png")
        finally:
            postgres_server.start()

        send(page, "数据库回来了吗")
        expect(page.get_by_text("第三轮：数据库回来了。")).to_be_visible()
        wait_until_idle(page)
        expect(notice).to_have_count(1)  # this turn was saved: no new notice
        page.context.close()

        page = open_page(browser, app.url, locale)  # what the history holds now
        page.locator("#thread-history").get_by_text("库存需要每日盘点").click()
        expect(page.get_by_text("第一轮：已记录库存需求。")).to_be_visible()  # nothing lost
        # the turn made while the database was away was held and written once it was back,
        # in its place
        turns = page.get_by_text(
            re.compile("^(数据库停了还能回答吗|第二轮：数据库不在时的回答。)$")
        )
        expect(turns).to_have_count(2)
        expect(page.get_by_text("第三轮：数据库回来了。")).to_be_visible()  # saved once back
        texts = page.locator("body").inner_text()
        assert texts.index("第一轮") < texts.index("第二轮") < texts.index("第三轮")
        bring_into_view(page.get_by_text("第一轮：已记录库存需求。"))  # the outage turn in view
        page.screenshot(path=output_dir / f"pg-database-back-{locale}.png")
    finally:
        app.stop()


# The login page asks who is signed in (401), and signing in while the database is away is
# refused with 503.
@pytest.mark.failed_requests(r"^401 GET /user$", r"^503 POST /login$")
def test_signing_in_while_the_database_is_away_says_so_in_the_users_language(
    browser: Browser, llm_server: ScriptedLLMServer, postgres_server: PostgresServer,
    postgres_url: str, tmp_path: Path, output_dir: Path,
):  # fmt: skip
    env = shared_env(llm_server, postgres_url, REQSTUDIO_USERS="alice:alice-pass")
    app = AppProcess(tmp_path / "a", env).start()
    try:
        page = open_page(browser, app.url, ready=False)
        postgres_server.stop()
        try:
            page.locator("#email").fill("alice")
            page.locator("#password").fill("alice-pass")
            page.locator("button[type=submit]").click()
            # the form's own line (the app's translation of a 503), not "wrong password"
            expect(
                page.get_by_text("数据库暂时无法访问，现在无法登录。请稍后再试。")
            ).to_be_visible()
            expect(page.get_by_text("登录失败。请检查您提供的信息是否正确")).to_have_count(0)
            page.screenshot(path=output_dir / "pg-sign-in-database-away.png")
        finally:
            postgres_server.start()
        page.locator("button[type=submit]").click()
        expect(page.get_by_text("已启用")).to_be_visible()  # signed in once it is back
    finally:
        app.stop()
