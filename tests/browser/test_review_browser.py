"""Review mode in a real browser: upload a document, watch two rounds, open a reviewer's
findings, see a section's diff, the trajectory and its chart, and download the results."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests import review_support as review
from tests.apps import AppProcess
from tests.browser_support import (
    answer_when_asked,
    attach,
    bring_into_view,
    click_until,
    open_page,
    send,
    start_paused_review,
    start_review,
    start_srs_run,
    switch_mode,
    wait_until_idle,
)
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
UPLOADS = ROOT / "tests" / "data" / "srs" / "uploads"
ISSUE = "查询空闲时段“要快”没有给出响应时间"
EXPECTED = "补充：95% 的查询在 2 秒内返回空闲时段"
REVISED = "主人在线预约兽医；95% 的空闲时段查询在 2 秒内返回结果。\n"


def test_review_two_rounds_in_the_browser(
    browser: Browser,
    app: AppProcess,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    output_dir: Path,
):
    document = tmp_path / "预约需求.md"
    document.write_text(review.DOCUMENT_ZH, encoding="utf-8")
    llm_server.script(
        review.red_reply(review.improvement("sec-02", "high", ISSUE, EXPECTED),
                         review.improvement("sec-01", "low"), delay=0.5),
        review.blue_reply([("sec-02", "预约流程")], delay=0.5),
        review.client_reply(delay=0.5),
        review.judge_reply(agent_id="sec-02"),
        review.author_reply("sec-02", REVISED, chunk_chars=4, chunk_delay=0.05),
        *review.closing_round(review.improvement("sec-01", "low"), agent_id="sec-02"),
    )  # fmt: skip
    page = open_page(browser, app.url, "zh-CN")
    switch_mode(page, "审阅")
    expect(page.get_by_text("已启用 Review 审阅 模式")).to_be_visible()
    expect(page.get_by_text("请上传要审阅的需求文档")).to_be_visible()

    attach(page, str(document))
    expect(
        page.locator("#chat-input").locator("xpath=../../..").get_by_text(document.name)
    ).to_be_visible()
    send(page, "请审阅这份文档")
    expect(page.get_by_text("已读取文档《预约需求.md》", exact=False)).to_be_visible()
    expect(page.locator('[id^="step-审阅 · 第 1 轮"]')).to_be_visible()
    expect(page.locator('[id^="step-审阅 · 第 2 轮"]')).to_be_visible(timeout=60_000)
    final = page.get_by_text("✅ 审阅结束：没有高优先级问题", exact=False)
    expect(final).to_be_visible(timeout=60_000)
    expect(
        page.get_by_text("第1轮发现2个问题 → 修正；第2轮发现1个问题（无高优先级） → 完成").first
    ).to_be_visible()

    # Round 1: the red team's findings as a table, then the revised section's diff. Read once
    # the run is over: while it is saved the browser redraws the steps (a click lands on one
    # that is being replaced).
    wait_until_idle(page)
    # each step's title says how it ended
    expect(page.locator('[id="step-审阅 · 第 1 轮 · 完成"]')).to_be_visible()
    page.locator('[id^="step-审阅 · 第 1 轮"]').click()
    expect(page.locator('[id="step-红队 · 完成"]').first).to_be_visible()
    page.locator('[id^="step-红队"]').first.click()
    expect(page.get_by_role("cell", name=ISSUE).first).to_be_visible()
    expect(page.get_by_role("cell", name=EXPECTED).first).to_be_visible()
    # Every issue has an id and a status, shown in the round's table.
    expect(page.get_by_text("本轮问题及状态").first).to_be_visible()
    expect(page.get_by_role("cell", name="I-1", exact=True).first).to_be_visible()
    expect(page.get_by_role("cell", name="新发现", exact=True).first).to_be_visible()
    page.locator('[id^="step-修订 · 2. 预约"]').first.click()
    diff = page.locator("code").filter(has_text="sec-02 修改后").first
    expect(diff).to_contain_text("+" + REVISED.strip())
    expect(diff).to_contain_text("-主人在线预约兽医，查询空闲时段要快。")
    bring_into_view(diff)
    page.screenshot(path=output_dir / "review-round-zh-CN.png")

    # The disagreements side by side, and the chart of issues per round.
    expect(page.get_by_role("cell", name="the flow is clear as it is").last).to_be_visible()
    expect(page.get_by_text("分歧意见").last).to_be_visible()  # the seed's keys, read in Chinese
    expect(page.get_by_text("共识问题").last).to_be_visible()
    expect(page.get_by_text("各轮问题状态").last).to_be_visible()  # the run's issues by round
    chart = page.locator(".js-plotly-plot").first
    expect(chart).to_be_visible(timeout=30_000)
    bring_into_view(chart)
    # no white page in the dark theme: the chart has no background of its own
    paper = chart.locator("svg.main-svg").first.evaluate("svg => svg.style.background")
    assert paper in ("rgba(0, 0, 0, 0)", "transparent"), paper
    expect(page.get_by_text("improved.docx")).to_be_visible()  # Word beside Markdown
    page.screenshot(path=output_dir / "review-zh-CN.png")
    screenshots = ROOT / "docs" / "screenshots"
    shutil.copy(output_dir / "review-zh-CN.png", screenshots / "review-zh-CN.png")
    shutil.copy(output_dir / "review-round-zh-CN.png", screenshots / "review-round-zh-CN.png")

    with page.expect_download() as md_download:
        page.get_by_text("improved.md").click()
    markdown = Path(md_download.value.path()).read_text(encoding="utf-8")
    assert markdown == review.DOCUMENT_ZH.replace("主人在线预约兽医，查询空闲时段要快。\n", REVISED)
    with page.expect_download() as json_download:
        page.get_by_text("reviews.json").click()
    data = json.loads(Path(json_download.value.path()).read_text(encoding="utf-8"))
    assert data["stop_reason"] == "quality_sufficient"
    assert data["improvement_trajectory"]["round_1"]["improvements_needed"] == 2
    assert data["rounds"][0]["red_team"]["improvements"][0]["issue"] == ISSUE
    assert llm_server.pending == 0


def test_review_refuses_an_unreadable_file(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer
):
    page = open_page(browser, app.url, "en-US")
    switch_mode(page, "Review")
    expect(page.get_by_text("Review mode is on")).to_be_visible()
    attach(page, str(UPLOADS / "corrupt.pdf"))
    expect(
        page.locator("#chat-input").locator("xpath=../../..").get_by_text("corrupt.pdf")
    ).to_be_visible()
    send(page, "Review this")
    refusal = "corrupt.pdf: the PDF could not be read (damaged or not a PDF)"
    expect(page.get_by_text(refusal, exact=False)).to_be_visible()
    assert llm_server.requests == []


SRS = "# 软件需求规格说明\n\n## 1. 引言\n\n本文档描述 e-Store 的需求。\n\n## 3. 具体需求\n\n- FR-01 顾客可以浏览商品目录。\n"
SRS_REVISED = "- FR-01 顾客可以按类别浏览商品目录，每页显示 20 件商品，2 秒内加载完成。\n"


def test_srs_review_and_improve_then_evaluate_the_improved_srs(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer
):
    from tests.test_srs_support import (
        E_STORE,
        EVALUATE,
        clarify_reply,
        doc_reply,
        explore_reply,
        parse_reply,
    )

    metrics = {
        "metrics": {
            "coverage": 0.5,
            "completeness": 0.6,
            "consistency": 0.9,
            "testability": 0.7,
            "clarity": 0.8,
            "traceability": 0.4,
            "scope_discipline": 0.9,
            "by_category": {"functional": 0.6, "non_functional": 0.5, "constraints": 0.3},
        }
    }
    llm_server.script(
        parse_reply(("FR-01", "顾客可以浏览商品目录"), ("NFR-01", "系统 7×24 小时可用")),
        explore_reply(("FR-01", "顾客可以按类别浏览商品目录"), ("NFR-01", "系统全年可用率不低于 99.9%")),
        clarify_reply(FR_01=2, NFR_01=1),
        explore_reply(("NFR-01", "系统全年可用率不低于 99.9%，按月统计")),
        clarify_reply(NFR_01=2),
        doc_reply(SRS),
        review.red_reply(review.improvement("sec-02", "high", "浏览商品目录没有分页和响应时间",
                                            "补充每页数量和加载时间")),
        review.blue_reply(),
        review.client_reply(),
        review.judge_reply(agent_id="sec-02"),
        review.author_reply("sec-02", SRS_REVISED),
        *review.closing_round(agent_id="sec-02"),
        Reply(match=EVALUATE, content=json.dumps(metrics)),
    )  # fmt: skip
    page = open_page(browser, app.url, "zh-CN")
    start_srs_run(
        page,
        "我们要做一个在线电子商店，顾客浏览商品目录，系统 7×24 小时可用。",
        E_STORE / "reference.md",
    )
    expect(page.get_by_text("✅ 完成", exact=False)).to_be_visible(timeout=60_000)

    wait_until_idle(page)  # action buttons are disabled while a run goes on
    click_until(
        page.get_by_role("button", name="审阅并改进"),
        page.locator('[id^="step-审阅 · 第 2 轮"]'),
        timeout=60_000,
    )
    expect(page.get_by_text("✅ 审阅结束", exact=False)).to_be_visible(timeout=60_000)
    expect(page.get_by_text("SRS 已改进", exact=False)).to_be_visible()
    wait_until_idle(page)  # action buttons are disabled while a run goes on
    click_until(
        page.get_by_role("button", name="评估", exact=True).last,
        page.get_by_role("cell", name="综合得分（加权）", exact=True),
        timeout=30_000,
    )
    evaluated = [
        text
        for text in ("\n".join(str(m.get("content") or "") for m in r["messages"])
                     for r in llm_server.requests)
        if EVALUATE in text
    ]  # fmt: skip
    assert evaluated and SRS_REVISED.strip() in evaluated[-1]
    assert llm_server.pending == 0


def test_a_failed_round_keeps_the_finished_ones_and_resumes(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer
):
    from tests.review_support import BLUE, CLIENT, JUDGE, RED

    llm_server.script(
        review.red_reply(review.improvement("sec-02", "high", ISSUE, EXPECTED)),
        review.blue_reply(),
        review.client_reply(),
        review.judge_reply(agent_id="sec-02"),
        review.author_reply("sec-02", REVISED),
        # Round 2: the red team and the judge never answer (both tries a 500).
        *[Reply(fault="500", match=RED)] * 2,
        Reply(fault="500", match=BLUE),
        Reply(fault="500", match=BLUE),
        Reply(fault="500", match=CLIENT),
        Reply(fault="500", match=CLIENT),
    )
    page = open_page(browser, app.url, "zh-CN")
    start_review(page, review.DOCUMENT_ZH)
    failed = page.get_by_text("❌ 审阅未能完成", exact=False).last
    expect(failed).to_be_visible(timeout=60_000)
    expect(page.get_by_text("improved-partial.md")).to_be_visible()
    assert llm_server.pending == 0
    assert not any(
        JUDGE in str(m.get("content") or "") for r in llm_server.requests[5:] for m in r["messages"]
    ), "the judge is not asked when no perspective could be read"

    llm_server.script(*review.closing_round())
    click_until(
        page.get_by_role("button", name="继续审阅"),
        page.get_by_text("✅ 审阅结束", exact=False),
        timeout=60_000,
    )
    expect(page.get_by_text("第1轮发现1个问题 → 修正；第2轮无新问题 → 完成").first).to_be_visible()
    with page.expect_download() as md_download:
        page.get_by_text("improved.md").last.click()
    markdown = Path(md_download.value.path()).read_text(encoding="utf-8")
    # Pasted text arrives without its final line end; the rest is byte for byte.
    assert markdown.rstrip("\n") == review.DOCUMENT_ZH.replace(
        "主人在线预约兽医，查询空闲时段要快。\n", REVISED
    ).rstrip("\n")


def test_pause_after_each_round_lets_the_user_edit_a_section(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, tmp_path: Path
):
    from tests.review_support import DOCUMENT, RED, requests_for

    revised = "Owners book a visit with a vet. Free slots are listed within 2 s.\n"
    edited = "Pet owners (18 and over) and the clinic's vets use the system."
    finding = review.improvement("sec-03", "high")
    llm_server.script(*review.two_rounds(finding, review.author_reply("sec-03", revised)))
    document = tmp_path / "clinic.md"
    document.write_text(DOCUMENT, encoding="utf-8")
    page = open_page(browser, app.url, "en-US")
    start_paused_review(page, document)
    expect(page.get_by_text("Round 1 is done", exact=False)).to_be_visible(timeout=60_000)
    click_until(
        page.get_by_role("button", name="Edit a section"),
        page.get_by_role("button", name="sec-02 1. Users"),
    )
    answer_when_asked(
        page.get_by_role("button", name="sec-02 1. Users"),
        page.get_by_text("Send the new body of “1. Users”", exact=False),
        edited,
    )
    expect(page.get_by_text("Edit of “1. Users” noted.")).to_be_visible()
    click_until(
        page.get_by_role("button", name="Continue").last,
        page.get_by_text("Chosen: Continue", exact=False).last,
    )
    expect(page.get_by_text("✅ Review finished", exact=False)).to_be_visible(timeout=60_000)

    # Round 2's reviewers read the user's edit and the author's revision.
    second = requests_for(llm_server, RED)[1]
    assert edited in second and revised.strip() in second
    with page.expect_download() as md_download:
        page.get_by_text("improved.md").click()
    markdown = Path(md_download.value.path()).read_text(encoding="utf-8")
    assert markdown == DOCUMENT.replace("Pet owners and vets use the system.", edited).replace(
        "Owners book a visit with a vet. The search for free slots is fast.\n", revised
    )
