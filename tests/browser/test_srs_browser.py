"""SRS mode in a real browser: switch mode, attach a reference, watch the steps, download the
SRS, evaluate it."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import docx
import pytest
from playwright.sync_api import Browser, expect

from tests import browser_support as web
from tests import test_srs_support as srs
from tests.apps import AppProcess
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser

SRS = "# 软件需求规格说明\n\n## 1. 引言\n\n本文档描述 e-Store 的需求。\n\n## 3. 具体需求\n\n- FR-01 顾客可以浏览商品目录。\n"


def test_srs_mode_end_to_end(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    llm_server.script(
        srs.parse_reply(("FR-01", "顾客可以浏览商品目录"), ("NFR-01", "系统 7×24 小时可用")),
        srs.explore_reply(
            ("FR-01", "顾客可以按类别浏览商品目录"), ("NFR-01", "系统全年可用率不低于 99.9%"),
            ("NFR-02", "商品页面在 2 秒内加载完成"),
        ),
        srs.clarify_reply(FR_01=2, NFR_01=1, NFR_02=1),
        srs.explore_reply(("NFR-01", "系统全年可用率不低于 99.9%，按月统计")),
        srs.clarify_reply(NFR_01=2, NFR_02=2),
        srs.doc_reply(SRS, chunk_chars=6, chunk_delay=0.02),
        Reply(
            match=srs.EVALUATE,
            content=json.dumps({"metrics": {
                "coverage": 0.5, "completeness": 0.6, "consistency": 0.9, "testability": 0.7,
                "clarity": 0.8, "traceability": 0.4, "scope_discipline": 0.9,
                "by_category": {"functional": 0.6, "non_functional": 0.5, "constraints": 0.3}}}),
        ),
    )  # fmt: skip
    page = web.open_page(browser, app.url, "zh-CN")
    expect(page.get_by_text("已启用 Chat 对话 模式")).to_be_visible()
    web.start_srs_run(
        page,
        "我们要做一个在线电子商店，顾客浏览商品目录，系统 7×24 小时可用。",
        srs.E_STORE / "reference.md",
    )
    expect(page.get_by_text("已读取参考 SRS", exact=False)).to_be_visible()
    expect(page.get_by_text("✅ 完成", exact=False)).to_be_visible(timeout=60_000)
    expect(page.get_by_text("本文档描述 e-Store 的需求。")).to_be_visible()
    # the list holds 3; the document the model wrote states 1, as the requirements check says
    summary = "2 轮 · 需求列表：3 条需求（文档中写出 1 条，见需求检查） · 冻结 3 · 移除 0"
    expect(page.get_by_text(summary, exact=False)).to_be_visible()

    expect(page.get_by_text(re.compile(r"ReqParse · 完成$"))).to_be_visible()  # no round
    step = page.get_by_text("ReqClarify · 第 1 轮")
    expect(step).to_be_visible()
    web.open_step(step, page.get_by_text("本轮冻结：FR-01"))
    expect(page.get_by_text("顾客可以按类别浏览商品目录").first).to_be_visible()
    page.screenshot(path=output_dir / "srs-steps-zh-CN.png")

    with page.expect_download() as download_info:
        page.get_by_text("srs.md").click()
    downloaded = Path(download_info.value.path()).read_text(encoding="utf-8")
    assert srs.without_matrix(downloaded) == SRS
    # the traceability matrix: a table at the end of the SRS, and as CSV
    expect(page.get_by_role("columnheader", name="来源")).to_be_visible()
    expect(page.get_by_role("cell", name="澄清第 1 轮").first).to_be_visible()
    origin = "需求描述 S1：“我们要做一个在线电子商店，顾客浏览商品目录，系统 7×24 小时可用。”"
    expect(page.get_by_role("cell", name=origin).first).to_be_visible()
    with page.expect_download() as download_info:
        page.get_by_text("srs-trace.csv").click()
    table = Path(download_info.value.path()).read_text(encoding="utf-8")
    rows = list(csv.DictReader(table.splitlines()))
    assert [(r["id"], r["kind"], r["request_sentences"]) for r in rows] == [
        ("FR-01", "request", "S1"),
        ("NFR-01", "request", "S1"),
        ("NFR-02", "round", ""),
    ]
    # ...and the same document in Word, offered beside it without another click
    with page.expect_download() as download_info:
        page.get_by_text("srs.docx").click()
    word = docx.Document(download_info.value.path())
    headings = [p.text for p in word.paragraphs if p.style.name.startswith("Heading")]
    assert headings == ["软件需求规格说明", "1. 引言", "3. 具体需求", "追溯矩阵"]
    assert "FR-01 顾客可以浏览商品目录。" in [p.text for p in word.paragraphs]
    # ...and as ReqIF, for a requirements tool: the same requirement ids come back from it
    with page.expect_download() as reqif_download:
        page.get_by_text("srs.reqif").click()
    exported = output_dir / "srs.reqif"
    Path(reqif_download.value.path()).replace(exported)
    from reqstudio.workspace.items import items_from_text
    from reqstudio.workspace.loading import load_items

    def ids(item_set) -> list[str]:
        return [i.id for i in item_set.items if i.kind not in ("heading", "information")]

    assert "FR-01" in ids(load_items(exported))
    assert ids(load_items(exported)) == ids(items_from_text(downloaded))

    # the requirements check, no model needed: a table per section
    web.open_step(
        page.get_by_text("需求检查（规则，无需模型） · 完成"),
        page.get_by_role("cell", name="SRS-no-shall").first,
    )
    expect(page.get_by_text("1 条需求，1 条有问题", exact=False).first).to_be_visible()

    web.wait_until_idle(page)  # action buttons are disabled while a run goes on
    weighted = page.get_by_text("综合得分（加权）")
    web.click_until(page.get_by_role("button", name="评估", exact=True), weighted, timeout=30_000)
    expect(page.get_by_role("cell", name="综合得分（加权）")).to_be_visible()
    expect(page.get_by_role("cell", name="覆盖率", exact=True)).to_be_visible()
    expect(page.get_by_text("coverage", exact=False)).to_have_count(0)  # the key is in the JSON
    expect(page.get_by_role("cell", name="0.50", exact=True).first).to_be_visible()
    expect(page.get_by_text(re.compile(r"评估 · 完成$"))).to_be_visible()
    web.bring_into_view(weighted)
    page.screenshot(path=output_dir / "srs-evaluation-zh-CN.png")
    assert llm_server.pending == 0


def test_srs_refuses_bad_reference_and_offers_settings(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    page = web.open_page(browser, app.url, "en-US")
    web.switch_mode(page, "SRS")
    expect(page.get_by_text("SRS mode is on")).to_be_visible()
    page.locator("#chat-settings-open-modal").click()
    expect(page.locator("label[for=srs_max_iterations]")).to_contain_text("Max iterations")
    expect(page.locator("label[for=srs_ablation]")).to_have_text("Ablation")
    page.keyboard.press("Escape")

    web.attach(page, str(srs.UPLOADS / "corrupt.pdf"))
    web.send(page, "An online store for computers.")
    # the refusal names the file and the problem, and says what is accepted
    refusal = page.get_by_text("corrupt.pdf: the PDF could not be read (damaged or not a PDF).")
    expect(refusal).to_be_visible()
    expect(refusal).to_contain_text("Accepted: .md, .txt, .pdf, .docx")
    page.screenshot(path=output_dir / "srs-refused-en-US.png")
    assert llm_server.requests == []  # nothing was generated from a refused upload


def test_srs_stop_then_resume_after_restart(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path
):
    data_dir = tmp_path / "data"
    first = AppProcess(data_dir, web.provider_env(llm_server)).start()
    try:
        llm_server.script(
            srs.parse_reply(("FR-01", "读者可以检索图书"), ("FR-02", "读者可以预约图书")),
            srs.explore_reply(
                ("FR-01", "读者可以按书名检索图书"), delay=30
            ),  # still running at stop
        )
        page = web.open_page(browser, first.url)
        web.stop_srs_run_in_explore(
            page, "图书馆借阅系统：读者检索、预约图书。", srs.E_STORE / "reference.md"
        )
        web.wait_until_idle(page)
        page.context.close()
    finally:
        first.stop()

    llm_server.reset()
    llm_server.script(
        srs.explore_reply(("FR-01", "读者可以按书名检索图书"), ("FR-02", "读者可以预约图书")),
        srs.clarify_reply(FR_01=2, FR_02=2),
        srs.doc_reply(SRS),
    )
    second = AppProcess(data_dir, web.provider_env(llm_server)).start()
    try:
        page = web.open_page(browser, second.url)
        page.locator("#thread-history").get_by_text("图书馆借阅系统", exact=False).click()
        expect(page.get_by_text("最后完成的节点：ReqParse", exact=False)).to_be_visible()
        expect(page.locator("#chat-profiles")).to_contain_text("SRS 生成")  # the mode came back
        web.wait_until_loaded(page)
        web.click_until(
            page.get_by_role("button", name="继续运行"),
            page.get_by_text("✅ 完成", exact=False),
            timeout=60_000,
        )
        page.screenshot(path=output_dir / "srs-resumed.png")
    finally:
        second.stop()
    parse_calls = [r for r in llm_server.requests if "Requirement Parsing Agent" in str(r)]
    assert parse_calls == []  # ReqParse was not run again


def test_srs_stopped_before_any_step_finished_does_not_claim_saved_steps(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    llm_server.script(srs.parse_reply(("FR-01", "读者可以检索图书"), delay=30))  # still parsing
    page = web.open_page(browser, app.url, "zh-CN")
    web.start_srs_run(page, "图书馆检索系统：读者检索图书。", srs.E_STORE / "reference.md")
    expect(page.get_by_text("ReqParse", exact=False).first).to_be_visible(timeout=30_000)
    stopped = page.get_by_text("已停止：还没有完成任何步骤，没有可继续的内容。", exact=False)
    web.click_until(page.locator("#stop-button"), stopped.first)
    expect(page.get_by_text("已完成的步骤已保存", exact=False)).to_have_count(0)
    page.screenshot(path=output_dir / "srs-stopped-before-any-step-zh-CN.png")


def test_srs_model_answering_garbage_fails_clearly_and_app_goes_on(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    tries = int(web.provider_env(llm_server)["OPENAI_MAX_RETRIES"]) + 1  # the app's retry policy
    llm_server.script(
        *[Reply(content="抱歉，我无法列出需求。", match=srs.PARSE) for _ in range(tries)]
    )
    page = web.open_page(browser, app.url, "zh-CN")
    web.start_srs_run(page, "一个网上书店。", srs.E_STORE / "reference.md")
    failure = page.get_by_text(
        f"SRS 生成失败：模型多次返回无法解析的 JSON（{tries} 次尝试）", exact=False
    )
    expect(failure).to_be_visible(timeout=60_000)
    # ReqParse, the first step, failed: nothing was saved, and the message does not say it was.
    expect(failure).to_contain_text("还没有完成任何步骤，没有可继续的内容")
    expect(failure).not_to_contain_text("已完成的步骤已保存")
    step = page.get_by_text(re.compile(r"ReqParse · 失败$"))
    assert web.top_of(step) < web.top_of(failure)  # reads top to bottom
    page.screenshot(path=output_dir / "srs-model-garbage.png")

    llm_server.script(
        *srs.one_requirement_run("顾客可以浏览图书", "顾客可以按分类浏览图书", SRS),
    )
    web.send(page, "一个网上书店，顾客浏览图书。")
    expect(page.get_by_text("✅ 完成", exact=False)).to_be_visible(timeout=60_000)


@pytest.mark.parametrize(
    ("locale", "mode", "srs_on", "starter", "message", "read", "done"),
    [("zh-CN", "SRS 生成", "已启用 SRS 生成 模式", "图书馆借阅系统", "为高校图书馆设计借阅系统",
      "已读取参考 SRS《reference.md》", "✅ 完成"),
     ("en-US", "SRS", "SRS mode is on", "A library lending system",
      "A university library lending system", "Reference SRS “reference.md” read", "✅ Done")],
)  # fmt: skip
def test_a_starter_clicked_with_a_file_attached_sends_the_file_with_it(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path,
    locale: str, mode: str, srs_on: str, starter: str, message: str, read: str, done: str,
):  # fmt: skip
    # Chainlit's starter sends its text alone: the attached reference stayed in the composer
    # and went with whatever the user sent next, in this chat or the next.
    llm_server.script(
        srs.parse_reply(("FR-01", "读者可以借书")),
        srs.explore_reply(
            ("FR-01", "读者最多可借五本书"), delay=15
        ),  # still running when looked at
        srs.clarify_reply(FR_01=2),
        srs.doc_reply(SRS),
    )
    page = web.open_page(browser, app.url, locale)
    web.switch_mode(page, mode)
    expect(page.get_by_text(srs_on)).to_be_visible()  # the new chat is ready
    web.attach(page, str(srs.E_STORE / "reference.md"))
    expect(page.locator("#attachments")).to_be_visible()
    page.locator("#starters").get_by_text(starter).click()
    expect(page.get_by_text(read, exact=False)).to_be_visible()  # the file came with it
    # the history names the thread by its mode and subject as the run starts, no reload
    expect(page.locator("#thread-history").get_by_text(re.compile(r"^SRS · "))).to_be_visible(
        timeout=12_000
    )
    assert len(llm_server.requests) < 3  # ReqExplore has not answered yet
    expect(page.get_by_text(done, exact=False)).to_be_visible(timeout=60_000)
    expect(page.locator("#attachments")).to_have_count(0)  # nothing left for the next message
    parse = next(r for r in llm_server.requests if srs.PARSE in str(r))
    assert message in str(parse)  # the starter's own text was the request
    page.screenshot(path=output_dir / f"srs-starter-with-file-{locale}.png")
