"""Finished SRS, Review and Rewrite threads reopened in the browser on another instance (separate data
folder, one PostgreSQL): their downloads, reference chip and chart are there, and download what
the first instance wrote."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.apps import shared_database_env, two_instances
from tests.browser.test_review_browser import EXPECTED, ISSUE, REVISED, ROOT
from tests.browser.test_srs_browser import SRS
from tests.browser_support import (
    attach,
    bring_into_view,
    click_until,
    open_page,
    open_thread,
    provider_env,
    send,
    start_srs_run,
    switch_mode,
)
from tests.review_support import (
    DOCUMENT_ZH,
    author_reply,
    blue_reply,
    client_reply,
    closing_round,
    improvement,
    judge_reply,
    red_reply,
)
from tests.rewrite_support import BODIES_ZH, FILL_ZH, ORIGINAL_ZH, SECTIONS_ZH, outline_reply
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.test_srs_support import (
    E_STORE,
    clarify_reply,
    doc_reply,
    explore_reply,
    parse_reply,
    without_matrix,
)

pytestmark = pytest.mark.browser


def test_srs_files_download_on_another_instance(
    browser: Browser, llm_server: ScriptedLLMServer, postgres_url: str, tmp_path: Path,
    output_dir: Path,
):  # fmt: skip
    env = shared_database_env(provider_env(llm_server), postgres_url)
    with two_instances(tmp_path, env) as (first, second):
        llm_server.script(
            parse_reply(("FR-01", "顾客可以浏览商品目录"), ("FR-02", "顾客可以下单")),
            explore_reply(("FR-01", "顾客可以按类别浏览商品目录"), ("FR-02", "顾客可以下单")),
            clarify_reply(FR_01=2, FR_02=2),
            doc_reply(SRS),
        )
        page = open_page(browser, first.url)
        start_srs_run(page, "在线电子商店：顾客浏览商品目录并下单。", E_STORE / "reference.md")
        expect(page.get_by_text("✅ 完成", exact=False)).to_be_visible(timeout=60_000)
        expect(page.get_by_text("srs.md", exact=True)).to_be_visible()
        page.context.close()
        first.stop()  # the instance that wrote the files is gone

        page = open_thread(browser, second.url, "在线电子商店")
        expect(page.get_by_text("本文档描述 e-Store 的需求。")).to_be_visible()
        for name in ("srs.md", "srs-log.json", "reference.md"):  # the names users saw
            expect(page.get_by_text(name, exact=True)).to_be_visible()
        with page.expect_download() as srs:
            page.get_by_text("srs.md", exact=True).click()
        assert without_matrix(Path(srs.value.path()).read_text(encoding="utf-8")) == SRS
        with page.expect_download() as reference:
            page.get_by_text("reference.md", exact=True).click()
        assert Path(reference.value.path()).read_bytes() == (E_STORE / "reference.md").read_bytes()
        expect(page.get_by_role("button", name="评估", exact=True)).to_be_visible()
        # every action and file the finished run showed is back
        expect(page.get_by_role("button", name="审阅并改进", exact=True)).to_be_visible()
        expect(page.get_by_text("srs.docx", exact=True)).to_be_visible()
        bring_into_view(page.get_by_text("srs.md", exact=True))
        page.screenshot(path=output_dir / "storage-srs-reopened-elsewhere.png")


def test_review_downloads_and_chart_come_back_on_another_instance(
    browser: Browser, llm_server: ScriptedLLMServer, postgres_url: str, tmp_path: Path,
    output_dir: Path,
):  # fmt: skip
    """Review keeps its downloads and trajectory chart as elements of its messages: with a
    file store, Chainlit keeps them with no code in the mode."""
    env = shared_database_env(provider_env(llm_server), postgres_url)
    document = tmp_path / "预约需求.md"
    document.write_text(DOCUMENT_ZH, encoding="utf-8")
    with two_instances(tmp_path, env) as (first, second):
        llm_server.script(
            red_reply(improvement("sec-02", "high", ISSUE, EXPECTED)),
            blue_reply([("sec-02", "预约流程")]),
            client_reply(),
            judge_reply(agent_id="sec-02"),
            author_reply("sec-02", REVISED),
            *closing_round(improvement("sec-01", "low"), agent_id="sec-02"),
        )
        page = open_page(browser, first.url)
        switch_mode(page, "审阅")
        expect(page.get_by_text("请上传要审阅的需求文档")).to_be_visible()
        attach(page, str(document))
        send(page, "请审阅这份文档")
        expect(page.get_by_text("✅ 审阅结束", exact=False)).to_be_visible(timeout=60_000)
        expect(page.get_by_text("improved.md")).to_be_visible()
        page.context.close()
        first.stop()

        page = open_thread(browser, second.url, "Review · 宠物医院预约系统需求")  # the document
        expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)
        with page.expect_download() as improved:
            page.get_by_text("improved.md").click()
        expected = DOCUMENT_ZH.replace("主人在线预约兽医，查询空闲时段要快。\n", REVISED)
        assert Path(improved.value.path()).read_text(encoding="utf-8") == expected
        with page.expect_download() as reviews:
            page.get_by_text("reviews.json").click()
        data = json.loads(Path(reviews.value.path()).read_text(encoding="utf-8"))
        assert data["stop_reason"] == "quality_sufficient"
        bring_into_view(page.locator(".js-plotly-plot").first)
        page.screenshot(path=output_dir / "storage-review-reopened-elsewhere.png")
        shutil.copy(  # the README shows it
            output_dir / "storage-review-reopened-elsewhere.png",
            ROOT / "docs" / "screenshots" / "review-reopened-elsewhere-zh-CN.png",
        )


def test_rewrite_downloads_come_back_on_another_instance(
    browser: Browser, llm_server: ScriptedLLMServer, postgres_url: str, tmp_path: Path,
):  # fmt: skip
    env = shared_database_env(provider_env(llm_server), postgres_url)
    env["REWRITE_MAX_REVIEW_ROUNDS"] = "0"
    original = tmp_path / "宠物医院.md"
    original.write_text(ORIGINAL_ZH, encoding="utf-8")
    with two_instances(tmp_path, env) as (first, second):
        llm_server.script(
            outline_reply(SECTIONS_ZH, title="宠物医院预约系统", match="解决方案架构师"),
            *(Reply(content=body, match=FILL_ZH) for body in BODIES_ZH),
        )
        page = open_page(browser, first.url)
        switch_mode(page, "重写")
        expect(page.get_by_text("已启用 Rewrite 重写 模式")).to_be_visible()
        attach(page, str(original))
        send(page, "请重写这份文档")
        click_until(
            page.get_by_role("button", name="不澄清，直接重写"),
            page.get_by_text("✅ 重写完成", exact=False),
            timeout=60_000,
        )
        expect(page.get_by_text("rewritten.md")).to_be_visible()
        page.context.close()
        first.stop()

        page = open_thread(browser, second.url, "Rewrite · 宠物医院预约")  # the document's title
        with page.expect_download() as rewritten:
            page.get_by_text("rewritten.md").click()
        markdown = Path(rewritten.value.path()).read_text(encoding="utf-8")
        assert markdown.startswith("# 宠物医院预约系统\n\n## 概述\n\n" + BODIES_ZH[0].strip())
        with page.expect_download() as structure:
            page.get_by_text("rewritten.json").click()
        data = json.loads(Path(structure.value.path()).read_text(encoding="utf-8"))
        assert data["rewritten_content"] == markdown
