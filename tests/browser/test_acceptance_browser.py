"""Acceptance tests in the browser, as a user works with them: a ReqIF file's requirements read
in Review are stored in the thread's project; the acceptance-test writer (the scripted
provider as `AcceptanceWriter`) writes tests for them, one call answering well and one
answering garbage, so one requirement is left without tests and said to be; the matrix shows
both ways; a requirement changes (the CLI imports a new version), the project is frozen as a
baseline, its test is marked suspect with why, and confirmed with its button. Every word of
the app's own is in the page's language, with no JSON or field names."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests import browser_support as web
from tests import page_reading
from tests import review_support as review
from tests.apps import AppProcess
from tests.browser.test_workspace_browser import freeze, in_a_thread
from tests.cli_support import REQSTUDIO, cli_env
from tests.mode_walk import MODE_ON, MODE_TITLES
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.browser

REQUIREMENTS = {
    "zh-CN": [f"系统应在 {n} 秒内为第 {n} 类请求给出答复。" for n in range(1, 10)],
    "en-US": [f"The system shall answer a request of class {n} within {n} s." for n in range(1, 10)],
}  # fmt: skip
CHANGED = {"zh-CN": "系统应在 5 秒内为第 1 类请求给出答复。",
           "en-US": "The system shall answer a request of class 1 within 5 s."}  # fmt: skip
WRITER = "Given/When/Then"  # in both languages' prompts of the acceptance-test writer

WORDS = {
    "zh-CN": {
        "done": "✅ 审阅结束", "store": "存入项目",
        "stored": "📥 已存入项目「默认项目」：", "generate": "生成验收测试",
        "written": "✍️ 已写出 8 个验收测试，覆盖 9 条需求中的 8 条；已存入项目「默认项目」。",
        "failed": "⚠️ 未能为 REQ-9 写出测试：", "without": "没有测试的需求：REQ-9。",
        "title": "项目「默认项目」的验收测试", "freeze": "把项目冻结为基线",
        "ask": "请输入基线名称", "marked": "⚠️ 1 个验收测试被标为可疑",
        "show": "验收测试与追踪矩阵", "suspect": "在基线「v2」中含义已改变",
        "confirm": "确认 AT-REQ-1-1",
        "confirmed": "✅ 已确认 AT-REQ-1-1：它验证 REQ-1 的现行文本。",
        "none": "尚无测试", "holds": "有效",
    },
    "en-US": {
        "done": "✅ Review finished", "store": "Store in the project",
        "stored": '📥 Stored in the project "Default project": ', "generate": "Write acceptance tests",
        "written": "✍️ 8 acceptance tests written, for 8 of 9 requirements; stored in the "
                   'project "Default project".',
        "failed": "⚠️ No tests for REQ-9: ", "without": "Requirements without tests: REQ-9.",
        "title": 'Acceptance tests of the project "Default project"',
        "freeze": "Freeze the project as baseline", "ask": "Name of the baseline",
        "marked": "⚠️ 1 acceptance test(s) marked suspect", "show": "Acceptance tests and matrix",
        "suspect": 'its meaning changed in the baseline "v2"', "confirm": "Confirm AT-REQ-1-1",
        "confirmed": "✅ AT-REQ-1-1 confirmed: it verifies REQ-1 as it now reads.",
        "none": "none yet", "holds": "holds",
    },
}  # fmt: skip
TITLES = {"zh-CN": "第 {n} 类请求的答复时间", "en-US": "Answer time of class {n}"}
STEPS = {
    "zh-CN": ("一个第 {n} 类请求", "用户发出请求", "系统在 {n} 秒内答复"),
    "en-US": ("a request of class {n}", "a user sends it", "the answer arrives within {n} s"),
}


def switch_to(page: Page, mode: str, locale: str) -> None:
    """Switch to `mode` and wait until its new chat has started (before attaching: a file
    set while the composer is replaced is lost). The chat's notices say so: "... mode is on",
    or the mode's introduction when the first of them is slow to show."""
    from reqstudio.messages import text

    web.switch_mode(page, MODE_TITLES[mode][locale])
    intro = text(f"{mode}.intro", locale)[:20]
    started = page.get_by_text(MODE_ON[mode][locale], exact=False)
    expect(started.or_(page.get_by_text(intro, exact=False)).first).to_be_visible()


def document(locale: str, first: str | None = None) -> str:
    texts = list(REQUIREMENTS[locale])
    if first is not None:
        texts[0] = first
    lines = ["# Service SRS", "", "## 1. Answers", ""]
    lines += [f"- REQ-{n} {text}" for n, text in enumerate(texts, 1)]
    return "\n".join(lines) + "\n"


def reqif_file(folder: Path, locale: str) -> Path:
    from reqstudio.workspace.items import items_from_text
    from reqstudio.workspace.reqif_out import build_reqif

    path = folder / "service.reqif"
    path.write_text(build_reqif(items_from_text(document(locale), "service"), "service"))
    return path


def writer_answer(locale: str) -> str:
    given, when, then = STEPS[locale]
    scenarios = [
        {"requirement_id": f"REQ-{n}", "title": TITLES[locale].format(n=n),
         "given": given.format(n=n), "when": when, "then": then.format(n=n)}
        for n in range(1, 9)
    ]  # fmt: skip
    return "```json\n" + json.dumps({"scenarios": scenarios}, ensure_ascii=False) + "\n```"


def import_with_the_cli(data_dir: Path, folder: Path, text: str) -> None:
    """A new version of the document imported into the local user's default project, as
    `reqstudio import FILE --project default` does."""
    (folder / "v2.md").write_text(text, encoding="utf-8")
    env = cli_env("", folder, REQSTUDIO_DATA_DIR=str(data_dir))
    done = subprocess.run([*REQSTUDIO, "import", "v2.md", "--project", "default"], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr


def stored_tests(data_dir: Path) -> list:
    from reqstudio.workspace.acceptance_store import AcceptanceTests
    from reqstudio.workspace.store import WorkspaceStore

    async def work():
        store = WorkspaceStore(f"sqlite+aiosqlite:///{data_dir.resolve()}/history.db")
        try:
            return await AcceptanceTests(store).tests(await store.default_project("local"))
        finally:
            await store.aclose()

    return in_a_thread(work)


def read_as_a_user(page: Page, locale: str, *messages: str, content: set[str]) -> list[str]:
    """Other-language words and internals in the messages holding these texts (the project's
    own texts, `content`, left out)."""
    nodes = [
        page_reading.TextNode(page.locator("[data-step-type=assistant_message]").filter(has_text=text).last.inner_text(),
                              "assistant_message", False)
        for text in messages
    ]  # fmt: skip
    return page_reading.findings(nodes, locale, content=content)


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_acceptance_tests_are_written_traced_marked_suspect_and_confirmed(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path, locale: str
):
    words = WORDS[locale]
    data_dir = tmp_path / "data"
    env = {**web.provider_env(llm_server), "REQSTUDIO_RETRY_BACKOFF_SCALE": "0.01"}
    app = AppProcess(data_dir, env).start()
    try:
        llm_server.script(
            *review.closing_round(review.improvement("sec-01", "low"), agent_id="sec-01")
        )
        page = web.open_page(browser, app.url, locale)
        switch_to(page, "review", locale)
        web.attach(page, str(reqif_file(tmp_path, locale)))
        web.send(page, "Review")
        expect(page.get_by_text(words["done"], exact=False)).to_be_visible(timeout=60_000)
        web.wait_until_idle(page)
        assert llm_server.pending == 0

        web.click_until(page.get_by_role("button", name=words["store"]),
                        page.get_by_text(words["stored"], exact=False).first)  # fmt: skip
        # eight requirements in the first call, answered; the ninth in a second, answered
        # with garbage at each try (two: the browser tests' OPENAI_MAX_RETRIES=1): it is
        # left without tests
        llm_server.script(
            Reply(content=writer_answer(locale), match=(WRITER, "REQ-8")),
            *[Reply(content="not json at all", match=(WRITER, "REQ-9")) for _ in range(2)],
        )
        web.click_until(page.get_by_role("button", name=words["generate"]).last,
                        page.get_by_text(words["written"]).first, timeout=60_000)  # fmt: skip
        expect(page.get_by_text(words["failed"], exact=False)).to_be_visible()
        expect(page.get_by_text(words["without"])).to_be_visible()
        matrix = (
            page.locator("[data-step-type=assistant_message]").filter(has_text=words["title"]).last
        )
        expect(matrix.get_by_role("row").filter(has_text="REQ-9")).to_contain_text(words["none"])
        expect(matrix.get_by_role("row").filter(has_text="AT-REQ-1-1").last).to_contain_text(
            words["holds"]
        )
        web.wait_until_idle(page)
        assert llm_server.pending == 0
        page.screenshot(path=output_dir / f"acceptance-matrix-{locale}.png")

        import_with_the_cli(data_dir, tmp_path, document(locale, CHANGED[locale]))
        freeze(page, {"freeze": words["freeze"], "ask": words["ask"]}, "v2")
        expect(page.get_by_text(words["marked"], exact=False)).to_be_visible()
        web.wait_until_idle(page)
        web.click_until(page.get_by_role("button", name=words["show"]).last,
                        page.get_by_text(words["suspect"], exact=False).first)  # fmt: skip
        expect(page.get_by_text(CHANGED[locale], exact=False).last).to_be_visible()
        page.screenshot(path=output_dir / f"acceptance-suspect-{locale}.png")
        own = {*REQUIREMENTS[locale], CHANGED[locale], "Service SRS"}
        own |= {TITLES[locale].format(n=n) for n in range(1, 10)}
        own |= {s.format(n=n) for s in STEPS[locale] for n in range(1, 10)}
        said = read_as_a_user(page, locale, words["title"], words["suspect"], content=own)
        assert said == []
        web.wait_until_idle(page)

        web.click_until(page.get_by_role("button", name=words["confirm"]),
                        page.get_by_text(words["confirmed"]).first)  # fmt: skip
        web.wait_until_idle(page)
        tests = {t.id: t for t in stored_tests(data_dir)}
        assert sorted(tests) == [f"AT-REQ-{n}-1" for n in range(1, 9)]
        assert tests["AT-REQ-1-1"].suspect is None
        assert tests["AT-REQ-1-1"].verified_text == CHANGED[locale]
    finally:
        app.stop()
