"""Rewrite mode in a real browser: upload the original, answer two questions and skip one,
watch the sections stream, see the review's diff, download the document and its structure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests import browser_support as web
from tests.apps import AppProcess
from tests.rewrite_support import (
    BODIES_ZH,
    FILL,
    FILL_ZH,
    ORIGINAL_EN,
    ORIGINAL_ZH,
    PATCH_ZH,
    QUESTIONS_ZH,
    SECTIONS_ZH,
    TITLE_ZH,
    fenced,
    outline_reply,
    patch_reply,
    prompts_for,
    review_reply,
)
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser

UPLOADS = Path(__file__).resolve().parent.parent / "data" / "srs" / "uploads"

QUESTIONS = ["如何支付？", "提醒通过什么渠道发送？", "兽医能否调整排班？"]
PATCHED = "主人选择兽医与空闲时段完成预约；就诊前 2 小时以前可改约或取消。\n"


def test_rewrite_end_to_end(
    browser: Browser,
    app: AppProcess,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    output_dir: Path,
):
    original = tmp_path / "宠物医院.md"
    original.write_text(ORIGINAL_ZH, encoding="utf-8")
    llm_server.script(
        Reply(content=fenced({"questions": QUESTIONS}), match=QUESTIONS_ZH),
        outline_reply(SECTIONS_ZH, title=TITLE_ZH, match="解决方案架构师"),
        Reply(content=BODIES_ZH[0], match=FILL_ZH, chunk_chars=4, chunk_delay=0.05),
        Reply(content=BODIES_ZH[1], match=FILL_ZH, chunk_chars=4, chunk_delay=0.05),
        Reply(content=BODIES_ZH[2], match=FILL_ZH, delay=3, chunk_chars=4, chunk_delay=0.1),
        review_reply(("sec-02", "改约规则与澄清不一致。"), match="文档评审专家"),
        patch_reply(PATCHED, match=PATCH_ZH),
        review_reply(match="文档评审专家"),
    )
    page = web.open_page(browser, app.url, "zh-CN")
    web.switch_mode(page, "重写")
    expect(page.get_by_text("已启用 Rewrite 重写 模式")).to_be_visible()
    expect(page.get_by_text("请上传要重写的原始文档")).to_be_visible()

    web.attach(page, str(original))
    web.send(page, "请重写这份文档")
    expect(page.get_by_text("已读取原始文档《宠物医院.md》", exact=False)).to_be_visible()
    web.click_until(
        page.get_by_role("button", name="请向我提问"), page.get_by_text("问题 1/3", exact=False)
    )

    def answer(index: int, text: str) -> None:
        expect(page.get_by_text(f"问题 {index}/3", exact=False)).to_be_visible()
        web.answer_when_asked(
            page.get_by_role("button", name="回答"),
            page.get_by_text(f"请输入你对问题 {index} 的回答"),
            text,
        )

    answer(1, "仅到店刷卡支付。")
    expect(page.get_by_text("问题 2/3", exact=False)).to_be_visible()
    web.click_until(
        page.get_by_role("button", name="跳过"), page.get_by_text("问题 3/3", exact=False)
    )
    answer(3, "可以，兽医每周调整一次排班。")
    expect(page.get_by_text("收集到 2 条回答，跳过 1 个问题", exact=False)).to_be_visible()

    # The first sections are on screen while the third is still being written.
    expect(page.get_by_text("本系统供宠物主人在线预约就诊", exact=False).first).to_be_visible()
    expect(page.get_by_text("✅ 重写完成", exact=False)).to_have_count(0)
    expect(page.get_by_text("① 大纲规划")).to_be_visible()
    expect(page.get_by_text("② 逐节撰写")).to_be_visible()

    summary = page.get_by_text("✅ 重写完成：3 节 · 评审 2 轮 · 修复 1 个问题", exact=False)
    expect(summary).to_be_visible(timeout=60_000)
    expect(page.get_by_text("就诊前 2 小时以前可改约或取消", exact=False).first).to_be_visible()
    expect(page.get_by_text("① 大纲规划 · 完成")).to_be_visible()  # how it ended
    goal_cell = page.get_by_role("cell", name="写清支付方式与提醒规则。")
    web.open_step(page.get_by_text("① 大纲规划"), goal_cell)
    web.bring_into_view(goal_cell)
    page.screenshot(path=output_dir / "rewrite-questions-outline-zh-CN.png")
    web.open_step(page.get_by_text("③ 评审 · 第 1 轮"), page.get_by_text("改约规则与澄清不一致。"))
    expect(page.get_by_text("修订「预约流程」")).to_be_visible()
    diff = page.locator("code").filter(has_text="sec-02 修改后").first
    expect(diff).to_contain_text("+主人选择兽医与空闲时段完成预约；就诊前 2 小时以前可改约或取消。")
    web.bring_into_view(summary)
    page.screenshot(path=output_dir / "rewrite-review-zh-CN.png")

    with page.expect_download() as md_download:
        page.get_by_text("rewritten.md").click()
    markdown = Path(md_download.value.path()).read_text(encoding="utf-8")
    expected = f"# {TITLE_ZH}\n\n" + "".join(
        f"## {title}\n\n{body.strip()}\n\n"
        for (title, _, _), body in zip(
            SECTIONS_ZH, [BODIES_ZH[0], PATCHED, BODIES_ZH[2]], strict=True
        )
    )
    assert markdown == expected
    with page.expect_download() as json_download:
        page.get_by_text("rewritten.json").click()
    data = json.loads(Path(json_download.value.path()).read_text(encoding="utf-8"))
    assert data["rewritten_content"] == expected
    assert [s["goal"] for s in data["structured_document"]["sections"]] == [
        goal for _, goal, _ in SECTIONS_ZH
    ]

    # The two answers reached the background; the skipped question did not.
    background = prompts_for(llm_server, FILL_ZH)[0]
    assert "问：如何支付？\n   答：仅到店刷卡支付。" in background
    assert "问：兽医能否调整排班？\n   答：可以，兽医每周调整一次排班。" in background
    assert "提醒通过什么渠道发送？" not in background
    assert llm_server.pending == 0


def test_rewrite_refuses_bad_files_and_stop_keeps_what_was_written(
    browser: Browser,
    app: AppProcess,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    output_dir: Path,
):
    def fresh_page():
        # A new chat per upload: the composer takes one set of files per page reliably.
        page = web.open_page(browser, app.url, "en-US")
        web.switch_mode(page, "Rewrite")
        expect(page.get_by_text("Rewrite mode is on")).to_be_visible()
        return page

    bad = tmp_path / "answers.json"
    bad.write_text('[{"question": "How to pay?"}]', encoding="utf-8")
    page = fresh_page()
    web.attach(page, bad)
    web.send(page, "Rewrite this")
    expect(page.get_by_text("entry 1: field 'answer' is missing", exact=False)).to_be_visible()
    page.context.close()
    page = fresh_page()
    web.attach(page, UPLOADS / "corrupt.pdf")
    web.send(page, "Rewrite this")
    refusal = "corrupt.pdf: the PDF could not be read (damaged or not a PDF)"
    expect(page.get_by_text(refusal, exact=False)).to_be_visible()
    page.context.close()
    assert llm_server.requests == []  # nothing was asked of the model

    page = fresh_page()
    llm_server.script(
        outline_reply(),
        Reply(content="Owners book visits online; vets see their day.\n", match=FILL),
        Reply(content="never shown", match=FILL, delay=30),  # still being written at the stop
    )
    original = tmp_path / "clinic.md"
    original.write_text(ORIGINAL_EN, encoding="utf-8")
    web.attach(page, original)
    web.send(page, "Rewrite this")
    web.click_until(
        page.get_by_role("button", name="Rewrite without"),
        page.get_by_text("Owners book visits online; vets see their day.").first,
        timeout=30_000,
    )
    web.click_until(
        page.locator("#stop-button"), page.get_by_text("⏹ Stopped. What was written is kept.").first
    )
    expect(page.get_by_text("Owners book visits online; vets see their day.").first).to_be_visible()
    with page.expect_download() as download:
        page.get_by_text("rewritten-partial.md").click()
    kept = Path(download.value.path()).read_text(encoding="utf-8")
    assert "## Overview\n\nOwners book visits online; vets see their day." in kept
    page.screenshot(path=output_dir / "rewrite-stopped-en-US.png")
