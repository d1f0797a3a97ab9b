"""Rewrite's failure endings in a real browser: a run that fails at a
section says which section and why and offers Resume; after a restart the reopened thread
offers it again and Resume writes only the sections not yet saved; a patch that fails for
good leaves an incomplete document that names the sections not patched."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.apps import AppProcess
from tests.browser_support import (
    attach,
    bring_into_view,
    click_until,
    open_page,
    provider_env,
    send,
    switch_to_mode,
    wait_until_idle,
    wait_until_loaded,
)
from tests.rewrite_support import (
    BODIES,
    BODIES_ZH,
    FILL,
    FILL_ZH,
    ORIGINAL_EN,
    ORIGINAL_ZH,
    OUTLINE_ZH,
    PATCH_ZH,
    REVIEW_ZH,
    SECTIONS_ZH,
    TITLE_ZH,
    outline_reply,
    patch_reply,
    prompts_for,
    review_reply,
)
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser

# More failing answers than any retry policy takes: what is left is dropped with a reset.
FAILING_TRIES = 12


def quick_env(server: ScriptedLLMServer) -> dict[str, str]:
    """The app's retry waits in milliseconds: a failure after every try comes at once."""
    return provider_env(server) | {"REQSTUDIO_RETRY_BACKOFF_SCALE": "0.01"}


NO_QUESTIONS = {"zh-CN": "不澄清，直接重写", "en-US": "Rewrite without"}  # the button's name


def start_rewrite(browser: Browser, url: str, locale: str, original: Path, text: str) -> Page:
    """A page on the app at `url`: Rewrite mode, the original attached, `text` sent and the
    questions declined."""
    page = open_page(browser, url, locale)
    switch_to_mode(page, "rewrite", locale)  # the new chat's composer is in place
    attach(page, str(original))
    send(page, text)
    no_questions = NO_QUESTIONS[locale]
    chosen = re.compile("(已选择：|Chosen: )" + re.escape(no_questions))
    click_until(page.get_by_role("button", name=no_questions), page.get_by_text(chosen))
    return page


def ended_with(page: Page, line: str, *words: str) -> Locator:
    """The run's ending, the line that starts `line` (within a minute), holding each of
    `words`."""
    ending = page.get_by_text(line, exact=False)
    expect(ending).to_be_visible(timeout=60_000)
    for word in words:
        expect(ending).to_contain_text(word)
    return ending


def open_step(page: Page, name: str) -> None:
    """Show a step's output: a click on its title toggles it, so only when it is closed."""
    # the title, then how the step ended (" · 完成", " · 失败", …)
    title = page.get_by_role("button", name=re.compile("^" + re.escape(name) + "( · .+)?$"))
    if title.get_attribute("aria-expanded") != "true":
        title.click()
    expect(title).to_have_attribute("aria-expanded", "true")


def expected_markdown(bodies: list[str]) -> str:
    return f"# {TITLE_ZH}\n\n" + "".join(
        f"## {title}\n\n{body.strip()}\n\n"
        for (title, _, _), body in zip(SECTIONS_ZH, bodies, strict=True)
    )


def download(page: Page, name: str) -> str:
    with page.expect_download() as file:
        page.get_by_text(name).last.click()
    return Path(file.value.path()).read_text(encoding="utf-8")


def test_a_failed_rewrite_resumes_after_a_restart_without_asking_finished_sections_again(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path
):
    original = tmp_path / "宠物医院.md"
    original.write_text(ORIGINAL_ZH, encoding="utf-8")
    data_dir = tmp_path / "data"
    llm_server.script(
        outline_reply(SECTIONS_ZH, title=TITLE_ZH, match=OUTLINE_ZH),
        Reply(content=BODIES_ZH[0], match=FILL_ZH),
        *[Reply(fault="500", match=FILL_ZH) for _ in range(FAILING_TRIES)],
    )
    first = AppProcess(data_dir, quick_env(llm_server)).start()
    try:
        page = start_rewrite(browser, first.url, "zh-CN", original, "重写宠物医院文档并中途失败")
        # the failure names the section and the fault, in Chinese, and offers Resume
        failure = ended_with(page, "❌ 重写在", "「预约流程」", "已写的内容已保留")
        expect(page.get_by_role("button", name="继续重写")).to_be_visible()
        expect(page.get_by_text("本系统供宠物主人在线预约就诊", exact=False).first).to_be_visible()
        open_step(page, "② 逐节撰写")
        expect(page.get_by_text("⚠️ 本阶段失败", exact=False)).to_be_visible()
        expect(page.get_by_text("⚠️ 本阶段失败", exact=False)).to_contain_text("「预约流程」")
        kept = download(page, "rewritten-partial.md")
        # the outline with the one section written; the others are headings without a body
        assert kept == expected_markdown([BODIES_ZH[0], "", ""]).replace("\n\n\n\n", "\n\n")
        bring_into_view(failure)
        page.screenshot(path=output_dir / "rewrite-failed-zh-CN.png")
        wait_until_idle(page)
        page.context.close()
    finally:
        first.stop()
    asked = prompts_for(llm_server, FILL_ZH)
    assert "第 1/3 节：概述" in asked[0] and all("第 2/3 节：预约流程" in p for p in asked[1:])
    assert len(asked) >= 3  # section 2 was tried more than once before the run gave up

    llm_server.reset()  # the failing answers not taken go; what follows is the resume
    llm_server.script(
        Reply(content=BODIES_ZH[1], match=FILL_ZH),
        Reply(content=BODIES_ZH[2], match=FILL_ZH),
        review_reply(match=REVIEW_ZH),
    )
    second = AppProcess(data_dir, quick_env(llm_server)).start()
    try:
        page = open_page(browser, second.url, "zh-CN")
        # named after the uploaded document's title, not the message sent with it
        page.locator("#thread-history").get_by_text("Rewrite · 宠物医院预约").first.click()
        wait_until_loaded(page)
        offer = page.get_by_text("上次的重写没有完成，已完成的步骤已保存。", exact=False)
        expect(offer).to_be_visible()
        expect(page.get_by_text("❌ 重写在", exact=False)).to_be_visible()  # the stored failure
        page.screenshot(path=output_dir / "rewrite-resume-offer-zh-CN.png")
        summary = page.get_by_text("✅ 重写完成：3 节 · 评审 1 轮", exact=False)
        click_until(
            page.locator(".step").filter(has=offer).get_by_role("button", name="继续重写"),
            summary,
            timeout=60_000,
        )
        markdown = download(page, "rewritten.md")
        assert markdown == expected_markdown(BODIES_ZH)
        data = json.loads(download(page, "rewritten.json"))
        assert data["complete"] is True
        assert [s["content"] for s in data["structured_document"]["sections"]] == BODIES_ZH
        bring_into_view(summary)
        page.screenshot(path=output_dir / "rewrite-resumed-zh-CN.png")
        wait_until_idle(page)
    finally:
        second.stop()
    # the resume asked for sections 2 and 3 only: no outline, section 1 not written again
    assert prompts_for(llm_server, OUTLINE_ZH) == []
    fills = prompts_for(llm_server, FILL_ZH)
    assert len(fills) == 2
    assert "第 2/3 节：预约流程" in fills[0] and "第 3/3 节：支付与提醒" in fills[1]
    assert "本系统供宠物主人在线预约就诊" in fills[0]  # section 1 came from the checkpoint
    assert llm_server.pending == 0


def test_the_failure_and_resume_speak_english_and_name_the_finish_reason(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path
):
    original = tmp_path / "clinic.md"
    original.write_text(ORIGINAL_EN, encoding="utf-8")
    llm_server.script(
        outline_reply(),
        Reply(content=BODIES[0], match=FILL),
        *[
            Reply(content="Owners pick", match=FILL, finish_reason="content_filter")
            for _ in range(FAILING_TRIES)
        ],
    )
    app = AppProcess(tmp_path / "data", quick_env(llm_server)).start()
    try:
        page = start_rewrite(browser, app.url, "en-US", original, "Rewrite the clinic document")
        failure = ended_with(
            page,
            "❌ The rewrite failed",
            "“Booking”",
            "finish reason: content_filter",
            "What was written is kept.",
        )
        expect(page.get_by_text("Owners pick", exact=False)).to_have_count(0)  # the cut text
        bring_into_view(failure)
        page.screenshot(path=output_dir / "rewrite-failed-en-US.png")

        llm_server.reset()
        llm_server.script(
            Reply(content=BODIES[1], match=FILL),
            Reply(content=BODIES[2], match=FILL),
            review_reply(match="meticulous document reviewer"),
        )
        summary = page.get_by_text("✅ Rewrite done: 3 sections · 1 review round ·", exact=False)
        click_until(page.get_by_role("button", name="Resume the rewrite"), summary, timeout=60_000)
        assert len(prompts_for(llm_server, FILL)) == 2
        wait_until_idle(page)
    finally:
        app.stop()


def test_a_failed_patch_leaves_an_incomplete_document_naming_the_section(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path
):
    original = tmp_path / "宠物医院.md"
    original.write_text(ORIGINAL_ZH, encoding="utf-8")
    patched = "仅支持到店刷卡支付。就诊前 24 小时与 2 小时各发一次短信提醒。\n"
    llm_server.script(
        outline_reply(SECTIONS_ZH, title=TITLE_ZH, match=OUTLINE_ZH),
        *[Reply(content=body, match=FILL_ZH) for body in BODIES_ZH],
        review_reply(
            ("sec-02", "改约规则与澄清不一致。"),
            ("sec-03", "提醒规则不完整。"),
            match=REVIEW_ZH,
        ),
        patch_reply(patched, match="（omission）提醒规则不完整。"),
        *[
            Reply(fault="500", match="（omission）改约规则与澄清不一致。")
            for _ in range(FAILING_TRIES)
        ],
    )  # no second review: a failed patch ends the review (reqstudio/modes/rewrite/graph.py)
    app = AppProcess(tmp_path / "data", quick_env(llm_server)).start()
    try:
        page = start_rewrite(browser, app.url, "zh-CN", original, "重写宠物医院文档")
        summary = ended_with(page, "❌ 重写未完全完成", "sec-02「预约流程」")
        expect(summary).not_to_contain_text("支付与提醒")
        open_step(page, "③ 评审 · 第 1 轮")
        expect(page.get_by_text("⚠️ 未能修订「预约流程」（sec-02）", exact=False)).to_be_visible()
        expect(page.get_by_text("修订「支付与提醒」")).to_be_visible()
        markdown = download(page, "rewritten.md")
        # the failed section stays as drafted, the patch that worked is kept
        assert markdown == expected_markdown([BODIES_ZH[0], BODIES_ZH[1], patched])
        data = json.loads(download(page, "rewritten.json"))
        assert data["complete"] is False
        assert [f["section_id"] for f in data["failed_patches"]] == ["sec-02"]
        bring_into_view(summary)
        page.screenshot(path=output_dir / "rewrite-incomplete-zh-CN.png")
        wait_until_idle(page)
    finally:
        app.stop()
    assert len(prompts_for(llm_server, REVIEW_ZH)) == 1
    patches = prompts_for(llm_server, PATCH_ZH)
    assert sum("提醒规则不完整" in p for p in patches) == 1  # the patch that worked, once
    assert len(patches) >= 3  # and the failing one, tried more than once
