"""Requirements in the browser, as a user works with them: a ReqIF file uploaded to Review is
read into its requirements, each element it could not read said on a line; the improved
document comes with a .reqif download that imports back with the same requirement ids; it is
frozen as a named baseline and compared with it; the thread's project is chosen in the
settings panel and is still the thread's after the app restarts."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests import browser_support as web
from tests import review_support as review
from tests.apps import AppProcess
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = """# Pet Clinic Booking SRS

## 1. Booking

- REQ-1 The system shall list free slots within 2 s for 95 % of searches.
- REQ-2 The system shall let an owner book a visit with a vet.

## 2. Reminders

- REQ-3 The system shall send a reminder 24 h before a visit.
"""
# Tool-specific data ReqStudio does not read: its import must say so.
TOOL_EXTENSION = "<TOOL-EXTENSIONS><REQ-IF-TOOL-EXTENSION/></TOOL-EXTENSIONS>"

WORDS = {
    "zh-CN": {
        "read": "已读取 ReqIF 文件「clinic.reqif」：3 条需求。",
        "skipped": "文件中有 1 个元素未读取",
        "tool_data": "TOOL-EXTENSIONS：工具专用数据，未读取",
        "done": "✅ 审阅结束",
        "freeze": "冻结为基线",
        "ask": "请输入基线名称",
        "frozen": "🧊 已冻结为项目「默认项目」的基线「v1」：3 条需求。",
        "compare": "与基线比较",
        "compared": "项目「默认项目」的基线「v1」与 improved.md 的差异",
        "none": "没有差异。",
    },
    "en-US": {
        "read": 'Read the ReqIF file "clinic.reqif": 3 requirements.',
        "skipped": "1 element(s) of the file were not read",
        "tool_data": "TOOL-EXTENSIONS: tool-specific data, not read",
        "done": "✅ Review finished",
        "freeze": "Freeze as baseline",
        "ask": "Name of the baseline",
        "frozen": '🧊 Frozen as the baseline "v1" of the project "Default project": 3 requirements.',
        "compare": "Compare with baseline",
        "compared": 'The baseline "v1" of the project "Default project" against improved.md',
        "none": "No differences.",
    },
}


def reqif_file(folder: Path) -> Path:
    from reqstudio.workspace.items import items_from_text
    from reqstudio.workspace.reqif_out import build_reqif

    xml = build_reqif(items_from_text(DOCUMENT, "clinic"), "clinic")
    path = folder / "clinic.reqif"
    path.write_text(xml.replace("</CORE-CONTENT>", "</CORE-CONTENT>" + TOOL_EXTENSION, 1))
    return path


def requirement_ids(path: Path) -> list[str]:
    from reqstudio.workspace.loading import load_items

    items = load_items(path).items
    return [i.id for i in items if i.kind not in ("heading", "information")]


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_a_reqif_upload_is_reviewed_exported_frozen_and_compared(
    browser: Browser,
    app: AppProcess,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    output_dir: Path,
    locale: str,
):
    words = WORDS[locale]
    uploaded = reqif_file(tmp_path)
    assert requirement_ids(uploaded) == ["REQ-1", "REQ-2", "REQ-3"]
    llm_server.script(*review.closing_round(review.improvement("sec-01", "low"), agent_id="sec-01"))
    page = web.open_page(browser, app.url, locale)
    web.switch_to_mode(page, "review", locale)
    web.attach(page, str(uploaded))
    web.send(page, "Review the requirements")
    expect(page.get_by_text(words["read"])).to_be_visible()
    # the element the import skipped is on a line of its own, never left out silently
    expect(page.get_by_text(words["skipped"], exact=False)).to_be_visible()
    expect(page.get_by_text(words["tool_data"])).to_be_visible()  # in the page's language
    expect(page.get_by_text(words["done"], exact=False)).to_be_visible(timeout=60_000)
    web.wait_until_idle(page)
    page.screenshot(path=output_dir / f"workspace-reqif-upload-{locale}.png")

    # .md, .docx and .reqif side by side; the .reqif imports back with the same ids
    expect(page.get_by_text("improved.docx")).to_be_visible()
    with page.expect_download() as download:
        page.get_by_text("improved.reqif").click()
    exported = tmp_path / "improved.reqif"
    Path(download.value.path()).replace(exported)
    assert requirement_ids(exported) == ["REQ-1", "REQ-2", "REQ-3"]

    freeze(page, words, "v1")
    expect(page.get_by_text(words["frozen"])).to_be_visible()
    web.click_until(
        page.get_by_role("button", name=words["compare"]).last,
        page.get_by_text(words["compared"]),
    )
    expect(page.get_by_text(words["none"]).last).to_be_visible()
    page.screenshot(path=output_dir / f"workspace-baseline-{locale}.png")
    assert llm_server.pending == 0


def freeze(page: Page, words: dict[str, str], name: str) -> None:
    """Click "Freeze as baseline" and answer its question with `name`."""
    web.answer_when_asked(
        page.get_by_role("button", name=words["freeze"]).last,
        page.get_by_text(words["ask"], exact=False),
        name,
    )


def in_a_thread(work) -> object:
    """Run a coroutine on a loop of its own: sync Playwright holds this thread's loop."""
    result: dict[str, object] = {}

    def run() -> None:
        result["value"] = asyncio.run(work())

    runner = threading.Thread(target=run)
    runner.start()
    runner.join(timeout=60)
    return result.get("value")


def make_project(data_dir: Path, name: str) -> None:
    from reqstudio.workspace.store import WorkspaceStore

    async def work() -> None:
        store = WorkspaceStore(f"sqlite+aiosqlite:///{data_dir.resolve()}/history.db")
        try:
            await store.project("local", name, create=True)
        finally:
            await store.aclose()

    in_a_thread(work)


def project_of(data_dir: Path, thread_id: str) -> object:
    from reqstudio.workspace.store import WorkspaceStore

    async def work() -> str:
        store = WorkspaceStore(f"sqlite+aiosqlite:///{data_dir.resolve()}/history.db")
        try:
            return (await store.thread_project("local", thread_id)).name
        finally:
            await store.aclose()

    return in_a_thread(work)


PANEL = {
    "zh-CN": ("本对话所属项目", "默认项目", "确认", "本对话现属于项目「alpha」。"),
    "en-US": ("Project of this thread", "Default project", "Confirm",
              'This thread is now in the project "alpha".'),
}  # fmt: skip


TESTS_OF_ALPHA = {
    "zh-CN": ("验收测试与追踪矩阵", "项目「alpha」中还没有需求"),
    "en-US": ("Acceptance tests and matrix", 'The project "alpha" holds no requirement yet'),
}


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_the_project_chosen_in_the_panel_stays_the_threads_after_a_restart(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path, locale: str
):
    label, default, confirm, chosen = PANEL[locale]
    data_dir = tmp_path / "data"
    llm_server.script(Reply(content="Noted."))
    app = AppProcess(data_dir, web.provider_env(llm_server)).start()
    try:
        make_project(data_dir, "alpha")
        page = web.open_page(browser, app.url, locale)
        page.locator("#chat-settings-open-modal").click()
        expect(page.locator("label[for=thread_project]")).to_have_text(label)
        expect(page.locator("#thread_project")).to_have_text(default)
        page.locator("#thread_project").click()
        expect(page.get_by_role("option")).to_have_text([default, "alpha"])
        page.get_by_role("option", name="alpha", exact=True).click()
        page.screenshot(path=output_dir / f"workspace-project-{locale}.png")
        page.get_by_role("button", name=confirm).click()
        expect(page.get_by_text(chosen)).to_be_visible()
        web.send(page, "Which project is this thread in?")
        expect(page.get_by_text("Noted.")).to_be_visible()
        web.wait_until_idle(page)
        # the notice leads to the chosen project's acceptance tests (none: no requirement yet)
        show, empty = TESTS_OF_ALPHA[locale]
        web.click_until(page.get_by_role("button", name=show), page.get_by_text(empty))
        web.wait_until_idle(page)
        thread_id = page.url.rsplit("/", 1)[-1]
        assert project_of(data_dir, thread_id) == "alpha"
    finally:
        app.stop()

    again = AppProcess(data_dir, web.provider_env(llm_server)).start()
    try:
        page = web.open_page(browser, again.url, locale)
        page.goto(f"{again.url}/thread/{thread_id}")
        web.wait_until_loaded(page)
        expect(page.get_by_text("Noted.")).to_be_visible()
        page.locator("#chat-settings-open-modal").click()
        expect(page.locator("#thread_project")).to_have_text("alpha")
    finally:
        again.stop()
