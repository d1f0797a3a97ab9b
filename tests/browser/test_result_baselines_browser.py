"""The results of SRS and Rewrite in the browser, as Review's are (tests/browser/
test_workspace_browser.py): the .reqif beside the document imports back with the document's
requirement ids, "Freeze as baseline" freezes them in the thread's project, and "Compare with
baseline" finds no difference against the document it was frozen from."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests import browser_support as web
from tests import rewrite_support as rw
from tests import test_srs_support as srs
from tests.apps import AppProcess
from tests.browser.test_acceptance_browser import switch_to
from tests.browser.test_workspace_browser import freeze, requirement_ids
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser

TEXT = {
    "zh-CN": {
        "srs": "# 软件需求规格说明\n\n## 1. 引言\n\n读者可以借阅图书。\n\n## 2. 具体需求\n\n"
               "- FR-01 系统应允许读者最多借五本书。\n- FR-02 系统应在还书后 1 分钟内更新库存。\n",
        "describe": "图书馆借阅系统：读者借书、还书。",
        "original": "# 图书馆借阅\n\n读者借书、还书，系统提醒到期。支付方式待定。\n",
        "outline": ("图书馆借阅系统", [("概述", "说明系统用途", 2), ("借阅", "说明借阅规则", 2)]),
        "bodies": ["本系统供读者借书与还书。\n",
                   "- REQ-1 系统应允许读者最多借五本书。\n- REQ-2 系统应在到期前 1 天提醒读者。\n"],
        "rewrite": "请重写这份文档", "how": "不澄清，直接重写",
        "end": {"srs": "✅ 完成", "rewrite": "重写完成"},
        "freeze": "冻结为基线", "ask": "请输入基线名称",
        "frozen": "🧊 已冻结为项目「默认项目」的基线「v1」：2 条需求。", "compare": "与基线比较",
        "compared": "项目「默认项目」的基线「v1」与 {file} 的差异", "none": "没有差异。",
        "generate": "生成验收测试",
        "written": "✍️ 已写出 2 个验收测试，覆盖 2 条需求中的 2 条；已存入项目「默认项目」。",
        "scenario": ("{id} 的主要情形", "一位读者", "读者操作", "系统满足 {id}"),
    },
    "en-US": {
        "srs": "# Software Requirements Specification\n\n## 1. Introduction\n\nReaders borrow "
               "books.\n\n## 2. Specific requirements\n\n- FR-01 The system shall let a reader "
               "borrow up to five books.\n- FR-02 The system shall update the stock within 1 "
               "minute of a return.\n",
        "describe": "A library lending system: readers borrow and return books.",
        "original": "# Library lending\n\nReaders borrow and return books; reminders are sent. "
                    "Payment: to be decided.\n",
        "outline": ("Library Lending System", [("Overview", "Say what the system is for", 2),
                                                ("Lending", "State the lending rules", 2)]),
        "bodies": ["The system lets readers borrow and return books.\n",
                   "- REQ-1 The system shall let a reader borrow up to five books.\n"
                   "- REQ-2 The system shall remind a reader 1 day before a loan is due.\n"],
        "rewrite": "Rewrite this document", "how": "Rewrite without",
        "end": {"srs": "✅ Done", "rewrite": "Rewrite done"},
        "freeze": "Freeze as baseline", "ask": "Name of the baseline",
        "frozen": '🧊 Frozen as the baseline "v1" of the project "Default project": 2 requirements.',
        "compare": "Compare with baseline",
        "compared": 'The baseline "v1" of the project "Default project" against {file}',
        "none": "No differences.",
        "generate": "Write acceptance tests",
        "written": '✍️ 2 acceptance tests written, for 2 of 2 requirements; stored in the '
                   'project "Default project".',
        "scenario": ("Main case of {id}", "a reader", "the reader acts", "the system meets {id}"),
    },
}  # fmt: skip


def writer_reply(t: dict, ids: list[str]) -> Reply:
    """The acceptance-test writer's answer: one scenario per requirement."""
    title, given, when, then = t["scenario"]
    scenarios = [{"requirement_id": i, "title": title.format(id=i), "given": given,
                  "when": when, "then": then.format(id=i)} for i in ids]  # fmt: skip
    return Reply(content=rw.fenced({"scenarios": scenarios}), match="Given/When/Then")


def srs_run(t: dict) -> list[Reply]:
    return srs.one_requirement_run("Readers borrow books.", "Readers borrow five books.", t["srs"])


def rewrite_run(t: dict, zh: bool) -> list[Reply]:
    title, sections = t["outline"]
    outline = {"title": title,
               "sections": [{"title": a, "goal": b, "level": c} for a, b, c in sections]}  # fmt: skip
    outline_at, fill_at, review_at = (
        (rw.OUTLINE_ZH, rw.FILL_ZH, rw.REVIEW_ZH) if zh else (rw.OUTLINE, rw.FILL, rw.REVIEW)
    )
    return [
        Reply(content=rw.fenced(outline), match=outline_at),
        *(Reply(content=body, match=fill_at) for body in t["bodies"]),
        Reply(content=rw.fenced({"issues": []}), match=review_at),
    ]


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
@pytest.mark.parametrize("mode", ["srs", "rewrite"])
def test_a_result_downloads_as_reqif_is_frozen_and_compared(
    browser: Browser,
    app: AppProcess,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    output_dir: Path,
    mode: str,
    locale: str,
):
    t = TEXT[locale]
    page = web.open_page(browser, app.url, locale)
    switch_to(page, mode, locale)
    if mode == "srs":
        llm_server.script(*srs_run(t))
        web.attach(page, str(srs.E_STORE / "reference.md"))
        web.send(page, t["describe"])
        name, ids = "srs", ["FR-01", "FR-02"]
    else:
        llm_server.script(*rewrite_run(t, locale == "zh-CN"))
        original = tmp_path / "library.md"
        original.write_text(t["original"], encoding="utf-8")
        web.attach(page, str(original))
        web.send(page, t["rewrite"])
        web.click_until(
            page.get_by_role("button", name=t["how"]),
            page.get_by_text(t["end"][mode], exact=False).last,
            timeout=60_000,
        )
        name, ids = "rewritten", ["REQ-1", "REQ-2"]
    expect(page.get_by_text(t["end"][mode], exact=False).last).to_be_visible(timeout=60_000)
    web.wait_until_idle(page)
    assert llm_server.pending == 0

    with page.expect_download() as download:
        page.get_by_text(f"{name}.reqif", exact=True).click()
    exported = tmp_path / f"{name}.reqif"
    Path(download.value.path()).replace(exported)
    assert requirement_ids(exported) == ids

    freeze(page, t, "v1")
    expect(page.get_by_text(t["frozen"])).to_be_visible()
    web.click_until(
        page.get_by_role("button", name=t["compare"]).last,
        page.get_by_text(t["compared"].format(file=f"{name}.md")),
    )
    expect(page.get_by_text(t["none"]).last).to_be_visible()
    page.screenshot(path=output_dir / f"{mode}-baseline-{locale}.png")

    # the frozen document's requirements are the project's: tests are written for them
    llm_server.script(writer_reply(t, ids))
    web.click_until(page.get_by_role("button", name=t["generate"]).last,
                    page.get_by_text(t["written"]).first, timeout=60_000)  # fmt: skip
    matrix = page.locator("[data-step-type=assistant_message]").last
    for requirement in ids:
        expect(
            matrix.get_by_role("cell", name=f"AT-{requirement}-1", exact=True).first
        ).to_be_visible()
    web.wait_until_idle(page)
    assert llm_server.pending == 0
