"""Details a new user saw in the browser: what a failed run claims and offers, one
Regenerate under a retried answer, step titles that say a step is over, the header's buttons,
table headers, the MCP plug, thread names, and the order of a message's files and buttons."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests import review_support as review
from tests.apps import AppProcess
from tests.browser_support import (
    attach,
    bring_into_view,
    click_until,
    open_page,
    send,
    start_review,
    switch_mode,
    wait_until_idle,
)
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser


def test_a_review_whose_first_round_cannot_be_read_claims_nothing_and_offers_no_resume(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    # Nothing scripted: every reviewer gets "Echo: …", never the JSON its role must give. The
    # one model configured would fail the same way again: Resume would only repeat it.
    page = open_page(browser, app.url, "zh-CN")
    start_review(page, review.DOCUMENT_ZH)
    failed = page.get_by_text("❌ 审阅未能完成", exact=False).last
    expect(failed).to_be_visible(timeout=90_000)
    wait_until_idle(page)
    expect(failed).to_contain_text("还没有完成任何一轮，没有保存任何审阅结果。")
    expect(failed).to_contain_text("用同一个模型继续会以同样的方式失败，且没有配置其他模型")
    expect(page.get_by_text("已完成的轮次已保存", exact=False)).to_have_count(0)
    expect(page.get_by_role("button", name="继续审阅")).to_have_count(0)
    bring_into_view(failed)
    page.screenshot(path=output_dir / "review-unreadable-round-1-zh-CN.png")


def test_an_answer_that_needed_a_retry_has_one_regenerate_button(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    llm_server.script(
        Reply(content="第一次尝试到一半" * 3, fault="cut", chunk_chars=6),
        Reply(content="重试后完整的回答。"),
    )
    page = open_page(browser, app.url, "zh-CN")
    expect(page.get_by_text("已启用")).to_be_visible()
    send(page, "请回答")
    expect(page.get_by_text("重试后完整的回答。")).to_be_visible()
    wait_until_idle(page)
    assert len(llm_server.requests) == 2  # the answer was retried
    expect(page.get_by_role("button", name="重新生成")).to_have_count(1)
    page.screenshot(path=output_dir / "chat-retried-one-regenerate-zh-CN.png")


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_the_export_link_and_the_readme_button_do_not_touch(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path, locale
):
    llm_server.script(Reply(content="Answer."))
    page = open_page(browser, app.url, locale)
    send(page, "Hello")
    export, readme = page.locator("#reqstudio-export"), page.locator("#readme-button")
    expect(export).to_be_visible()
    for width in (1280, 900):  # a narrower window moves the header's buttons
        page.set_viewport_size({"width": width, "height": 860})
        expect(readme).to_be_visible()
        page.wait_for_function(
            """() => {
                const a = document.getElementById('reqstudio-export').getBoundingClientRect();
                const b = document.getElementById('readme-button').getBoundingClientRect();
                return a.right + 8 <= b.left && Math.abs((a.top + a.bottom) - (b.top + b.bottom)) <= 4;
            }""",
            timeout=10_000,
        )
    page.screenshot(path=output_dir / f"header-buttons-{locale}.png")


def test_the_mcp_plug_shows_only_in_agent_mode(browser: Browser, app: AppProcess):
    # MCP servers connected with the plug join Agent mode's tools; no other mode uses tools
    page = open_page(browser, app.url, "en-US")
    plug = page.locator("#message-composer svg.lucide-plug")
    expect(page.get_by_text("Chat mode is on")).to_be_visible()
    expect(plug).to_have_count(0)
    for mode, shown in (("Agent", 1), ("SRS", 0), ("Review", 0), ("Rewrite", 0), ("Team", 0)):
        switch_mode(page, mode)
        expect(page.get_by_text(f"{mode} mode is on")).to_be_visible()
        expect(plug).to_have_count(shown)


LONG = "该需求没有使用“应”或“必须”表述，无法判断是否为强制要求；" * 3
TABLE = (
    "| 需求 | 行 | 规则 | 说明 |\n|---|---|---|---|\n"
    # a finding of the whole document names no requirement: "-", narrower than its header
    + f"| - | - | SRS-no-shall | {LONG} |\n| - | 15 | SRS-vague | {LONG} |\n"
)


def lines_of_each_header(page) -> dict[str, int]:
    """How many lines each header cell's text takes on screen."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('th')].map(th => {
            const range = document.createRange();
            range.selectNodeContents(th);
            const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
            return [th.textContent.trim(), tops.size];
        }))"""
    )


@pytest.mark.parametrize("width", [1280, 760])
def test_table_headers_do_not_break_inside_a_chinese_word(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path, width
):
    llm_server.script(Reply(content=TABLE))
    page = open_page(browser, app.url, "zh-CN")
    send(page, "检查结果")
    expect(page.get_by_role("columnheader", name="需求")).to_be_visible()
    page.set_viewport_size({"width": width, "height": 860})
    wait_until_idle(page)
    lines = lines_of_each_header(page)
    assert lines == {"需求": 1, "行": 1, "规则": 1, "说明": 1}, lines
    page.get_by_role("table").screenshot(path=output_dir / f"table-headers-{width}-zh-CN.png")


def test_a_thread_is_named_after_the_uploaded_document_not_the_message(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, tmp_path: Path
):
    document = tmp_path / "clinic-srs.md"
    document.write_text(review.DOCUMENT, encoding="utf-8")  # "# Pet Clinic Booking SRS"
    llm_server.script(*review.panel())
    page = open_page(browser, app.url, "en-US")
    switch_mode(page, "Review")
    expect(page.get_by_text("Review mode is on")).to_be_visible()
    attach(page, str(document))
    send(page, "Please review this")
    history = page.locator("#thread-history")
    expect(history.get_by_text("Review · Pet Clinic Booking SRS", exact=True)).to_be_visible()
    wait_until_idle(page)
    expect(history.get_by_text("Review · Pet Clinic Booking SRS", exact=True)).to_be_visible()
    expect(history.get_by_text("Please review this", exact=False)).to_have_count(0)


def test_rewrite_s_question_step_says_it_is_done_once_it_is(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, tmp_path: Path
):
    from tests.rewrite_support import ORIGINAL_ZH, QUESTIONS_ZH, fenced

    original = tmp_path / "宠物医院.md"
    original.write_text(ORIGINAL_ZH, encoding="utf-8")
    questions = ["如何支付？", "提醒通过什么渠道发送？"]
    llm_server.script(Reply(content=fenced({"questions": questions}), match=QUESTIONS_ZH))
    page = open_page(browser, app.url, "zh-CN")
    switch_mode(page, "重写")
    expect(page.get_by_text("已启用 Rewrite 重写 模式")).to_be_visible()
    attach(page, str(original))
    send(page, "请重写这份文档")
    click_until(
        page.get_by_role("button", name="请向我提问"), page.get_by_text("问题 1/2", exact=False)
    )
    # the questions are drafted: the step's title says so, not "正在……" any more
    expect(page.get_by_text("拟定澄清问题 · 完成", exact=True)).to_be_visible()
    expect(page.get_by_text("正在阅读文档并拟定澄清问题", exact=False)).to_have_count(0)


def test_a_running_srs_step_streams_what_the_model_writes(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    import re

    from tests import test_srs_support as srs
    from tests.browser_support import start_srs_run

    # ReqParse's answer arrives slowly: eight characters every 1.5 s, some 35 s in all; its
    # first item's id comes in the first 10 s
    listed = [("FR-01", "顾客可以浏览商品目录"), ("FR-02", "顾客可以按类别筛选商品"),
              ("FR-03", "顾客可以把商品加入购物车"), ("NFR-01", "商品页面在 2 秒内加载完成")]  # fmt: skip
    llm_server.script(srs.parse_reply(*listed, chunk_chars=8, chunk_delay=1.5))
    page = open_page(browser, app.url, "zh-CN")
    start_srs_run(
        page, "我们要做一个在线电子商店，顾客浏览商品目录。", srs.E_STORE / "reference.md"
    )
    expect(page.get_by_text(re.compile(r"进行中\s*ReqParse"))).to_be_visible(timeout=30_000)
    # the open step shows the answer as it comes, before the step is done
    expect(page.get_by_text("FR-01", exact=False).first).to_be_visible(timeout=15_000)
    expect(page.get_by_text("ReqParse · 完成")).to_have_count(0)
    page.screenshot(path=output_dir / "srs-step-streaming-zh-CN.png")
    expect(page.get_by_text(re.compile(r"ReqParse · 完成$"))).to_be_visible(timeout=60_000)


SRS_FILES = ["srs.md", "srs.docx", "srs-trace.csv", "srs-log.json"]
SRS_BUTTONS = ["审阅并改进", "评估"]


def reading_order(page, names: list[str], role: str | None = None) -> list[str]:
    """`names` in the order they read on the page: top to bottom, left to right."""
    boxes = {}
    for name in names:
        found = (
            page.get_by_role(role, name=name, exact=True)
            if role
            else page.get_by_text(name, exact=True)
        ).last
        expect(found).to_be_visible()
        # found and measured in one step in the page: a reconnect's replay may replace the
        # element between two steps, and bounding_box() of the one gone is None (seen in CI)
        y, x = found.evaluate("e => { const r = e.getBoundingClientRect(); return [r.y, r.x] }")
        boxes[name] = (round(y / 10), x)
    return sorted(names, key=boxes.__getitem__)


def test_a_reopened_thread_shows_files_and_buttons_in_the_order_it_had(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    from tests import test_srs_support as srs
    from tests.browser_support import open_thread, start_srs_run

    llm_server.script(
        srs.parse_reply(("FR-01", "顾客可以浏览商品目录")),
        srs.explore_reply(("FR-01", "顾客可以按类别浏览商品目录")),
        srs.clarify_reply(FR_01=2),
        srs.doc_reply(),
    )
    page = open_page(browser, app.url, "zh-CN")
    start_srs_run(page, "图书馆借阅系统：读者检索和借阅图书。", srs.E_STORE / "reference.md")
    expect(page.get_by_text("✅ 完成", exact=False)).to_be_visible(timeout=60_000)
    wait_until_idle(page)
    # in the order the app lists them (reqstudio/web/srs/flow.py), not the order their writes finished
    assert reading_order(page, SRS_FILES) == SRS_FILES
    assert reading_order(page, SRS_BUTTONS, role="button") == SRS_BUTTONS
    page.screenshot(path=output_dir / "srs-files-and-buttons-live-zh-CN.png")
    page.context.close()

    for _ in range(2):  # each opening shows them as the run did
        page = open_thread(browser, app.url, "图书馆借阅系统")
        expect(page.get_by_role("button", name="评估")).to_be_visible()
        assert reading_order(page, SRS_FILES) == SRS_FILES
        assert reading_order(page, SRS_BUTTONS, role="button") == SRS_BUTTONS
        page.screenshot(path=output_dir / "srs-files-and-buttons-reopened-zh-CN.png")
        page.context.close()


@pytest.mark.parametrize(
    ("locale", "modes"),
    [
        ("en-US", ["Chat", "Agent", "SRS", "Review", "Rewrite", "Team"]),
        (
            "zh-CN",
            ["Chat 对话", "Agent 智能体", "SRS 生成", "Review 审阅", "Rewrite 重写", "Team 团队"],
        ),
    ],
)
def test_the_in_app_readme_describes_every_mode(
    browser: Browser, app: AppProcess, output_dir: Path, locale, modes
):
    page = open_page(browser, app.url, locale)
    page.locator("#readme-button").click()
    readme = page.get_by_role("dialog")
    for mode in modes:
        expect(readme.get_by_text(mode, exact=True).first).to_be_visible()
    readme.screenshot(path=output_dir / f"readme-{locale}.png")
