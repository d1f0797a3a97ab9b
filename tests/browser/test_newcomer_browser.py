"""What a newcomer sees: starters on a new chat, steps that say whether they run, one language,
no internal text as an answer, honest numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.agent_support import ANSWER, REASONING, one_call_then_answer
from tests.apps import AppProcess
from tests.browser_support import (
    attach,
    bring_into_view,
    click_until,
    failed_requests,
    open_page,
    send,
    start_srs_run,
    stop_srs_run_in_explore,
    switch_mode,
    switch_to_mode,
    wait_until_idle,
    wait_until_loaded,
)
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.test_srs_support import (
    E_STORE,
    EVALUATE,
    UPLOADS,
    doc_reply,
    explore_reply,
    one_requirement_run,
    parse_reply,
    without_matrix,
)

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(
    ("locale", "chat_on", "chat_starter", "agent", "agent_on", "agent_starter", "srs", "srs_on",
     "srs_starter"),
    [
        ("zh-CN", "已启用 Chat 对话 模式", "什么是好的需求？", "Agent 智能体",
         "已启用 Agent 智能体 模式", "搜索 IEEE 830", "SRS 生成", "已启用 SRS 生成 模式",
         "图书馆借阅系统"),
        ("en-US", "Chat mode is on", "What makes a good requirement?", "Agent",
         "Agent mode is on", "Search IEEE 830", "SRS", "SRS mode is on",
         "A library lending system"),
    ],
)  # fmt: skip
def test_each_mode_shows_its_starters_and_confirms_the_mode(
    browser: Browser, app: AppProcess, output_dir: Path, locale: str, chat_on: str,
    chat_starter: str, agent: str, agent_on: str, agent_starter: str, srs: str, srs_on: str,
    srs_starter: str,
):  # fmt: skip
    page = open_page(browser, app.url, locale)
    expect(page.get_by_text(chat_on)).to_be_visible()
    expect(page.locator("#starters").get_by_text(chat_starter)).to_be_visible()
    page.screenshot(path=output_dir / f"starters-chat-{locale}.png")
    switch_mode(page, agent)
    expect(page.get_by_text(agent_on)).to_be_visible()
    expect(page.locator("#starters").get_by_text(agent_starter)).to_be_visible()
    switch_mode(page, srs)
    expect(page.get_by_text(srs_on)).to_be_visible()
    expect(page.locator("#starters").get_by_text(srs_starter)).to_be_visible()
    page.screenshot(path=output_dir / f"starters-srs-{locale}.png")


def test_a_starter_sends_its_message(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer
):
    llm_server.script(Reply(content="可测试、无歧义。"))
    page = open_page(browser, app.url, "zh-CN")
    page.locator("#starters").get_by_text("什么是好的需求？").click()
    expect(page.get_by_text("可测试、无歧义。")).to_be_visible()
    assert "一条好的软件需求" in llm_server.requests[-1]["messages"][-1]["content"]
    expect(page.locator("#starters")).to_have_count(0)


def test_running_step_is_open_and_streams_then_folds_with_its_outcome(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    reasoning = "先想一想：需要查询时间。" * 6
    llm_server.script(
        *one_call_then_answer(
            reasoning, "够了。", "现在是 UTC 时间。", chunk_chars=3, chunk_delay=0.15
        )
    )
    page = open_page(browser, app.url, "zh-CN")
    switch_mode(page, "Agent 智能体")
    expect(page.get_by_text("已启用 Agent 智能体 模式")).to_be_visible()
    expect(page.get_by_text("get_current_time", exact=False).first).to_be_visible()
    send(page, "现在几点？")
    running = page.get_by_text(re.compile(r"^进行中\s*思考 · 第 1 轮"))
    expect(running).to_be_visible()
    # open while it runs: its reasoning streams in view
    expect(page.get_by_text("先想一想：需要查询时间。", exact=False).first).to_be_visible()
    # no lone loading dot above the steps: the only one ends the streaming text
    stray = page.locator(".loading-cursor:not(.message-content .loading-cursor)")
    assert all(not dot.is_visible() for dot in stray.all())
    page.screenshot(path=output_dir / "step-running-zh-CN.png")
    expect(page.get_by_text("现在是 UTC 时间。")).to_be_visible()
    expect(page.locator("#stop-button")).to_have_count(0)
    finished = page.get_by_text(re.compile(r"思考 · 第 1 轮 · .* · 完成"))
    expect(finished).to_be_visible()
    expect(page.get_by_text(re.compile("进行中|已使用|使用中"))).to_have_count(0)
    # folded when done; a click opens it again
    expect(page.get_by_text("先想一想：需要查询时间。", exact=False)).to_have_count(0)
    finished.click()
    expect(page.get_by_text("先想一想：需要查询时间。", exact=False).first).to_be_visible()
    page.screenshot(path=output_dir / "step-done-zh-CN.png")


@pytest.mark.parametrize(
    ("locale", "said"),
    [("zh-CN", "模型没能回答这个问题"), ("en-US", "The model could not answer this question")],
)
def test_the_apps_own_instructions_are_never_shown_as_the_answer(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path,
    locale: str, said: str,
):  # fmt: skip
    echoed = ("No research results: no tool was needed. Answer from what you know, without "
              "citation numbers. Research notes: the user asks about IEEE 830.")  # fmt: skip
    llm_server.script(
        Reply(match=REASONING, content="I know this."),
        Reply(match=ANSWER, content=echoed, chunk_chars=5, chunk_delay=0.03),
    )
    page = open_page(browser, app.url, locale)
    switch_to_mode(page, "agent", locale)
    expect(page.locator("#starters")).to_be_visible()
    send(page, "What is IEEE 830?")
    expect(page.get_by_text(said, exact=False)).to_be_visible()
    expect(page.locator("#stop-button")).to_have_count(0)
    expect(page.get_by_text("No research results", exact=False)).to_have_count(0)
    expect(page.get_by_text("Answer from what you know", exact=False)).to_have_count(0)
    page.screenshot(path=output_dir / f"agent-echo-refused-{locale}.png")


SRS = "# Software Requirements Specification\n\n## 1. Introduction\n\nReaders borrow books.\n"
OUT_OF_RANGE = {"metrics": {
    "coverage": 8, "completeness": 6, "consistency": 9, "testability": 7, "clarity": 8,
    "traceability": 4, "scope_discipline": 9,
    "by_category": {"functional": 6, "non_functional": 5, "constraints": 3}}}  # fmt: skip


def test_srs_in_english_counts_rounds_shows_base_names_and_refuses_scores_out_of_range(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    llm_server.script(
        *one_requirement_run("Readers borrow books", "Readers borrow up to five books", SRS),
        # OPENAI_MAX_RETRIES=1: the answer out of range is asked once more, then refused
        Reply(match=EVALUATE, content=json.dumps(OUT_OF_RANGE)),
        Reply(match=EVALUATE, content=json.dumps(OUT_OF_RANGE)),
    )
    page = open_page(browser, app.url, "en-US")
    switch_mode(page, "SRS")
    expect(page.get_by_text("SRS mode is on")).to_be_visible()
    attach(page,
        {"name": "../../evil.md", "mimeType": "text/markdown",
         "buffer": (E_STORE / "reference.md").read_bytes()}
    )  # fmt: skip
    send(page, "A library lending system: readers borrow and return books.")
    expect(page.get_by_text("Reference SRS “evil.md” read", exact=False)).to_be_visible()
    expect(page.get_by_text("../../evil.md", exact=False)).to_have_count(0)
    expect(page.get_by_text("✅ Done", exact=False)).to_be_visible(timeout=60_000)
    expect(
        page.get_by_text("Done: 1 round · 1 requirement in the list", exact=False)
    ).to_be_visible()
    expect(page.get_by_text("ReqClarify · round 1 · done")).to_be_visible()
    wait_until_idle(page)  # action buttons are disabled while a run goes on
    click_until(
        page.get_by_role("button", name="Evaluate", exact=True),
        page.get_by_text("Evaluation failed", exact=False),
        timeout=30_000,
    )
    expect(page.get_by_text(re.compile(r"Evaluation · failed$"))).to_be_visible()
    expect(page.get_by_text("scores outside 0-1", exact=False)).to_be_visible()
    expect(page.get_by_text("范围")).to_have_count(0)  # the seed's Chinese error, said in English
    expect(page.get_by_text("Overall score", exact=False)).to_have_count(0)
    expect(page.get_by_text("4.0000")).to_have_count(0)
    expect(page.locator("#stop-button")).to_have_count(0)
    page.screenshot(path=output_dir / "srs-evaluation-refused-en-US.png")
    assert llm_server.pending == 0


def test_srs_without_reference_reads_chinese_and_a_too_big_file_is_refused_in_chinese(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path,
    tmp_path: Path,
):  # fmt: skip
    llm_server.script(
        parse_reply(("FR-01", "读者可以借书")),
        explore_reply(("FR-01", "读者最多可借五本书")),
        doc_reply(SRS),
    )
    page = open_page(browser, app.url, "zh-CN")
    switch_mode(page, "SRS 生成")
    expect(page.get_by_text("已启用 SRS 生成 模式")).to_be_visible()
    big = tmp_path / "大文件.md"
    big.write_bytes(b"# SRS\n" + b"x" * (11 * 1024 * 1024))  # over the 10 MB limit
    attach(page, str(big))
    page.locator("#chat-input").fill("图书馆借阅系统")
    expect(page.locator("#chat-submit")).to_be_enabled(timeout=60_000)  # 11 MB take a while
    page.locator("#chat-submit").click()
    expect(page.get_by_text("超过 10 MB 的上限", exact=False)).to_be_visible()
    expect(page.get_by_text("larger than", exact=False)).to_have_count(0)

    send(page, "图书馆借阅系统：读者借书还书。")
    click_until(
        page.get_by_role("button", name="不用参考，继续"),
        page.get_by_text("已选择：不用参考，继续"),
    )
    expect(page.get_by_text("Selected", exact=False)).to_have_count(0)
    expect(page.get_by_text("✅ 完成", exact=False)).to_be_visible(timeout=60_000)
    # no-clarify: one ReqExplore round, and the summary says one round too
    expect(page.get_by_text("ReqExplore · 第 1 轮 · 完成")).to_be_visible()
    expect(page.get_by_text("完成：1 轮", exact=False)).to_be_visible()
    page.screenshot(path=output_dir / "srs-no-reference-zh-CN.png")
    page.reload()  # the history names the thread by the system it specifies
    expect(page.locator("#thread-history").get_by_text("SRS · 图书馆借阅系统")).to_be_visible()


def test_stop_is_said_once_in_the_users_language(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer
):
    llm_server.script(Reply(content="慢慢地回答。" * 200, chunk_chars=6, chunk_delay=0.1))
    page = open_page(browser, app.url, "zh-CN")
    expect(page.get_by_text("已启用")).to_be_visible()
    send(page, "写一篇长文")
    expect(page.get_by_text("慢慢地回答。", exact=False).first).to_be_visible()
    click_until(page.locator("#stop-button"), page.get_by_text("已停止生成", exact=False).first)
    expect(page.get_by_text("已停止生成", exact=False)).to_have_count(1)
    expect(page.get_by_text("Task manually stopped", exact=False)).to_have_count(0)


def open_thread(browser: Browser, app: AppProcess, title: str) -> Page:
    """Open a thread from the history, as a user does, and let it finish loading: the browser
    reconnects as it restores the thread's mode, then shows the stored thread again, which
    replaced whatever a button clicked in between had shown."""
    page = open_page(browser, app.url, "zh-CN")
    page.locator("#thread-history").get_by_text(title, exact=False).first.click()
    wait_until_loaded(page)
    return page


def test_a_reopened_srs_thread_has_its_files_reference_and_evaluate_button(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    llm_server.script(
        *one_requirement_run("读者可以借书", "读者最多可借五本书", SRS),
    )
    page = open_page(browser, app.url, "zh-CN")
    start_srs_run(page, "图书馆借阅系统：读者借书还书。", E_STORE / "reference.md")
    expect(page.get_by_text("✅ 完成", exact=False)).to_be_visible(timeout=60_000)
    wait_until_idle(page)  # the turn is stored before the tab goes, as a user's would be
    page.context.close()

    page = open_thread(browser, app, "图书馆借阅系统")
    expect(page.get_by_text("Readers borrow books.")).to_be_visible()
    expect(page.get_by_text("srs.md", exact=True)).to_be_visible()
    expect(page.get_by_text("srs-log.json", exact=True)).to_be_visible()
    expect(page.get_by_text("reference.md", exact=True)).to_be_visible()
    page.screenshot(path=output_dir / "srs-reopened-zh-CN.png")
    with page.expect_download() as download_info:
        page.get_by_text("srs.md", exact=True).click()
    assert without_matrix(Path(download_info.value.path()).read_text(encoding="utf-8")) == SRS
    llm_server.script(
        Reply(match=EVALUATE, content=json.dumps({"metrics": {
            "coverage": 0.5, "completeness": 0.6, "consistency": 0.9, "testability": 0.7,
            "clarity": 0.8, "traceability": 0.4, "scope_discipline": 0.9,
            "by_category": {"functional": 0.6, "non_functional": 0.5, "constraints": 0.3}}})),
    )  # fmt: skip
    wait_until_idle(page)  # action buttons are disabled while a run goes on
    click_until(
        page.get_by_role("button", name="评估", exact=True),
        page.get_by_text("综合得分（加权）"),
        timeout=30_000,
    )


def test_an_unfinished_thread_offers_resume_once_and_the_resumed_run_can_be_stopped(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    llm_server.script(
        parse_reply(("FR-01", "读者可以检索图书")),
        explore_reply(("FR-01", "读者可以按书名检索图书"), delay=30),  # still running at stop
    )
    page = open_page(browser, app.url, "zh-CN")
    stop_srs_run_in_explore(page, "图书馆检索系统：读者检索图书。", E_STORE / "reference.md")
    page.context.close()

    for _ in range(3):  # each opening shows the offer once, not once more than the last
        page = open_thread(browser, app, "图书馆检索系统")
        offer = page.get_by_text("上次的 SRS 运行没有完成", exact=False)
        expect(offer).to_have_count(1)
        page.context.close()

    llm_server.reset()
    llm_server.script(explore_reply(("FR-01", "读者可以按书名检索图书"), delay=30))
    page = open_thread(browser, app, "图书馆检索系统")
    expect(page.get_by_text("reference.md", exact=True)).to_be_visible()  # the thread is shown
    expect(page.get_by_text("上次的 SRS 运行没有完成", exact=False)).to_have_count(1)
    wait_until_loaded(page)
    # The browser reconnects as the thread's mode is restored, possibly after the click: the
    # run keeps its stop button and running step, and the offer does not come back.
    click_until(
        page.get_by_role("button", name="继续运行"), page.locator("#stop-button"), timeout=30_000
    )
    running = page.get_by_text(re.compile(r"进行中\s*ReqExplore · 第 1 轮"))
    expect(running).to_be_visible(timeout=30_000)
    expect(page.get_by_role("button", name="继续运行")).to_have_count(0)
    click_until(
        page.locator("#stop-button"),
        page.get_by_text("已停止。已完成的步骤已保存", exact=False).last,
    )
    expect(page.locator("#stop-button")).to_have_count(0)
    expect(page.get_by_text("ReqExplore · 第 1 轮 · 已停止").last).to_be_visible()
    page.screenshot(path=output_dir / "srs-resumed-stopped-zh-CN.png")


def test_unknown_token_counts_are_shown_as_unknown_and_reasoning_time_as_reasoning(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    llm_server.script(
        Reply(match=REASONING, content="我知道答案。", sends_usage=False, chunk_delay=0.2),
        Reply(match=ANSWER, content="IEEE 830 是 SRS 的推荐实践。", sends_usage=False),
    )
    page = open_page(browser, app.url, "zh-CN")
    switch_mode(page, "Agent 智能体")
    expect(page.locator("#starters")).to_be_visible()
    send(page, "IEEE 830 是什么？")
    expect(page.get_by_text("IEEE 830 是 SRS 的推荐实践。")).to_be_visible()
    expect(page.get_by_text("token 数未知", exact=False)).to_be_visible()
    # in and out, for both models: the one word every mode uses for a count not known
    expect(page.get_by_role("cell", name="未知", exact=True)).to_have_count(4)
    expect(page.get_by_role("cell", name="0", exact=True)).to_have_count(0)
    expect(page.get_by_text("共 未知 tokens", exact=False)).to_be_visible()
    phases = page.get_by_text("阶段耗时", exact=False)
    expect(phases).to_contain_text(re.compile(r"推理 [1-9]\d*\.\d 秒|推理 0\.[1-9] 秒"))
    expect(phases).to_contain_text("0 次工具调用")
    bring_into_view(phases)
    page.screenshot(path=output_dir / "agent-unknown-usage-zh-CN.png")


def test_the_page_loads_and_runs_without_failed_requests(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    # The browser console showed a 401 on every page load (GET /user before the local login)
    # and a 400 per step during runs (the avatar named after the step, which Chainlit refuses
    # for names such as "ReqParse · 完成"; a grey dot sat where the picture failed).
    page = open_page(browser, app.url, "zh-CN")
    llm_server.script(Reply(content="你好，这是回答。"))
    send(page, "你好")
    expect(page.get_by_text("你好，这是回答。")).to_be_visible()
    page.reload()
    expect(page.locator("#chat-input")).to_be_visible(timeout=60_000)
    expect(page.locator("#thread-history").get_by_text("你好")).to_be_visible()

    page.goto(app.url)
    switch_mode(page, "SRS 生成")
    expect(page.get_by_text("已启用 SRS 生成 模式")).to_be_visible()  # the new chat is ready
    attach(page, str(E_STORE / "reference.md"))
    llm_server.script(
        *one_requirement_run("读者可以借书", "读者最多可借五本书", SRS),
    )
    send(page, "图书馆借阅系统：读者借书还书。")
    expect(page.get_by_text("✅ 完成", exact=False)).to_be_visible(timeout=60_000)
    for icon in ("file-search", "compass", "list-checks", "file-text"):  # one per agent
        expect(page.locator(f"svg.lucide-{icon}").first).to_be_visible()
    page.screenshot(path=output_dir / "srs-step-icons-zh-CN.png")
    wait_until_idle(page)

    page.goto(app.url)
    switch_mode(page, "Agent 智能体")
    expect(page.get_by_text("已启用 Agent 智能体 模式")).to_be_visible()
    llm_server.script(*one_call_then_answer("查一下时间。", "够了。", "现在是 UTC 时间。"))
    send(page, "现在几点？")
    expect(page.get_by_text("现在是 UTC 时间。")).to_be_visible(timeout=60_000)
    for icon in ("brain", "wrench", "git-branch"):  # thinking, the tool, the decisions
        expect(page.locator(f"svg.lucide-{icon}").first).to_be_visible()
    wait_until_idle(page)
    assert failed_requests() == []


def test_attached_pdfs_show_as_files_without_english_errors_or_password_prompts(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    # Chainlit previewed an attached PDF with pdf.js: a damaged one showed "Failed to load
    # PDF file." beside the app's Chinese refusal, an encrypted one opened the browser's
    # English password prompt, again each time it was dismissed.
    page = open_page(browser, app.url, "zh-CN")
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    switch_mode(page, "SRS 生成")
    expect(page.get_by_text("已启用 SRS 生成 模式")).to_be_visible()
    for name, refusal in (
        ("corrupt.pdf", "无法读取该 PDF（文件损坏或不是 PDF）"),
        ("encrypted.pdf", "该 PDF 受密码保护"),
    ):
        attach(page, str(UPLOADS / name))
        send(page, f"图书馆借阅系统，参考：{name}")
        expect(page.get_by_text(refusal, exact=False)).to_be_visible()
        wait_until_idle(page)
        chip = page.get_by_role("link", name=name, exact=True)  # a file to download
        expect(chip).to_be_visible()
    page.screenshot(path=output_dir / "srs-unreadable-pdfs-zh-CN.png")

    llm_server.script(
        *one_requirement_run("读者可以借书", "读者最多可借五本书", SRS),
    )
    attach(page, str(UPLOADS / "reference.pdf"))
    send(page, "图书馆借阅系统：读者借书还书。")
    expect(page.get_by_text("已读取参考 SRS《reference.pdf》", exact=False)).to_be_visible()
    expect(page.get_by_text("✅ 完成", exact=False)).to_be_visible(timeout=60_000)
    expect(page.get_by_role("link", name="reference.pdf", exact=True).first).to_be_visible()
    expect(page.get_by_text("Failed to load PDF", exact=False)).to_have_count(0)
    expect(page.get_by_text("Loading", exact=False)).to_have_count(0)
    assert dialogs == []
