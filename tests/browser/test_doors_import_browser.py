"""A DOORS export in the browser: attached as the reference of an SRS run, its items are read
(headings and requirements, DOORS's integer ids with the module's prefix), the element the
reader does not take (the tool's extensions) said on a line of its own; "Check these
requirements" under it runs the checker on the imported requirements, whose findings name
them; "Store in the project" stores them in the thread's project with their ReqIF uids.

The file is IBM DOORS's export of tests/data/reqif/samples/doors-user-02.reqif with three
requirement objects added under its first heading as DOORS writes them (ReqIF.Text in the
module's OBJECTTEXT attribute, the absolute number as the id): the sample itself holds only
headings, which leave the checker nothing to read."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests import browser_support as web
from tests import test_srs_support as srs
from tests.apps import AppProcess
from tests.browser.test_acceptance_browser import switch_to
from tests.browser.test_workspace_browser import in_a_thread
from tests.scripted_server import ScriptedLLMServer

pytestmark = pytest.mark.browser

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "reqif" / "samples" / "doors-user-02.reqif"
TYPE = "_7f123ed4-98dd-4eed-b96a-edc8828963a8"  # the module's object type in the sample
TEXTS = [
    "The meter shall send a reading every 30 minutes.",
    "The portal shall show readings as appropriate.",
    "The meter shall store readings for 13 months.",
]
WORDS = {
    "zh-CN": {
        "describe": "为智能电表做一个读数门户。",
        "read": "已读取 ReqIF 文件「doors-amr.reqif」：3 条需求。",
        "skipped": "文件中有 1 个元素未读取",
        "tool_data": "TOOL-EXTENSIONS：工具专用数据，未读取", "check": "检查这些需求",
        "step": "需求检查（规则，无需模型） · 完成",
        "summary": "3 条需求，2 条有问题，共 3 个问题",
        "store": "存入项目", "stored": "📥 已存入项目「默认项目」：6 条，其中 3 条需求；新增 6",
    },
    "en-US": {
        "describe": "A reading portal for smart meters.",
        "read": 'Read the ReqIF file "doors-amr.reqif": 3 requirements.',
        "skipped": "1 element(s) of the file were not read",
        "tool_data": "TOOL-EXTENSIONS: tool-specific data, not read",
        "check": "Check these requirements",
        "step": "Requirements check (rules, no model) · done",
        "summary": "3 requirements, 2 with findings, 3 findings",
        "store": "Store in the project",
        "stored": '📥 Stored in the project "Default project": 6 items, 3 requirements among them; '
                  "6 added",
    },
}  # fmt: skip


def doors_object(number: int, text: str) -> str:
    values = (
        f'<ATTRIBUTE-VALUE-INTEGER THE-VALUE="{number}"><DEFINITION><ATTRIBUTE-DEFINITION-'
        f"INTEGER-REF>{TYPE}_ABSOLUTENUMBER</ATTRIBUTE-DEFINITION-INTEGER-REF></DEFINITION>"
        "</ATTRIBUTE-VALUE-INTEGER><ATTRIBUTE-VALUE-XHTML><DEFINITION><ATTRIBUTE-DEFINITION-"
        f"XHTML-REF>{TYPE}_OBJECTTEXT</ATTRIBUTE-DEFINITION-XHTML-REF></DEFINITION><THE-VALUE>"
        f"<reqif-xhtml:div>{text}</reqif-xhtml:div></THE-VALUE></ATTRIBUTE-VALUE-XHTML>"
    )
    return (
        f'<SPEC-OBJECT IDENTIFIER="{object_id(number)}" LAST-CHANGE="2018-10-12T16:43:58">'
        f"<TYPE><SPEC-OBJECT-TYPE-REF>{TYPE}</SPEC-OBJECT-TYPE-REF></TYPE>"
        f"<VALUES>{values}</VALUES></SPEC-OBJECT>\n"
    )


def object_id(number: int) -> str:
    return f"_{number}_00000000-0000-4000-8000-00000000000{number}"


def doors_export(folder: Path) -> Path:
    xml = SAMPLE.read_text(encoding="utf-8")
    objects = "".join(doors_object(n, text) for n, text in enumerate(TEXTS, 4))
    xml = xml.replace("</SPEC-OBJECTS>", objects + "</SPEC-OBJECTS>", 1)
    children = "".join(
        f'<SPEC-HIERARCHY IDENTIFIER="_h{n}" LAST-CHANGE="2018-10-12T16:43:58"><OBJECT>'
        f"<SPEC-OBJECT-REF>{object_id(n)}</SPEC-OBJECT-REF></OBJECT></SPEC-HIERARCHY>"
        for n in range(4, 4 + len(TEXTS))
    )
    first_heading = "</OBJECT>\n            </SPEC-HIERARCHY>"
    assert first_heading in xml
    xml = xml.replace(
        first_heading, f"</OBJECT><CHILDREN>{children}</CHILDREN></SPEC-HIERARCHY>", 1
    )
    path = folder / "doors-amr.reqif"
    path.write_text(xml, encoding="utf-8")
    return path


def stored_items(data_dir: Path) -> list:
    from reqstudio.workspace.store import WorkspaceStore

    async def work():
        store = WorkspaceStore(f"sqlite+aiosqlite:///{data_dir.resolve()}/history.db")
        try:
            return await store.items(await store.default_project("local"))
        finally:
            await store.aclose()

    return in_a_thread(work)


def test_the_export_reads_as_doors_writes_it(tmp_path: Path):
    from reqstudio.workspace.loading import load_items

    read = load_items(doors_export(tmp_path))
    requirements = [i for i in read.items if i.kind == "functional"]
    assert [i.id for i in requirements] == ["AMR-REF-4", "AMR-REF-5", "AMR-REF-6"]
    assert [i.text for i in requirements] == TEXTS
    assert {tuple(i.section) for i in requirements} == {
        ("AMR Standards Documents", "Carbon Trust Standard")
    }
    assert read.skipped == ["TOOL-EXTENSIONS: tool-specific data, not read"]


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_a_doors_export_is_read_checked_and_stored(
    browser: Browser,
    app: AppProcess,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    output_dir: Path,
    locale: str,
):
    words = WORDS[locale]
    llm_server.script(*srs.one_requirement_run("Read the meters.", "Show the readings."))
    page = web.open_page(browser, app.url, locale)
    switch_to(page, "srs", locale)
    web.attach(page, str(doors_export(tmp_path)))
    web.send(page, words["describe"])
    expect(page.get_by_text(words["read"])).to_be_visible()
    expect(page.get_by_text(words["skipped"], exact=False)).to_be_visible()
    expect(page.get_by_text(words["tool_data"])).to_be_visible()  # in the page's language
    expect(page.get_by_text("srs.docx")).to_be_visible(timeout=60_000)
    web.wait_until_idle(page)
    assert llm_server.pending == 0

    steps = page.get_by_text(words["step"], exact=True)
    before = steps.count()  # the SRS's own check, of the document it wrote
    web.click_until(
        page.get_by_role("button", name=words["check"]),
        page.get_by_role("button", name="AMR-REF-5 · ISO29148-loophole", exact=False),
    )
    expect(steps).to_have_count(before + 1)
    web.open_step(steps.last, page.get_by_text(words["summary"], exact=False).last)
    expect(page.get_by_role("cell", name="AMR-REF-5").first).to_be_visible()
    web.wait_until_idle(page)
    page.screenshot(path=output_dir / f"doors-check-{locale}.png")

    web.click_until(page.get_by_role("button", name=words["store"]),
                    page.get_by_text(words["stored"], exact=False))  # fmt: skip
    web.wait_until_idle(page)
    stored = [i for i in stored_items(tmp_path / "data") if i.kind == "functional"]
    assert [(i.id, i.text) for i in stored] == list(zip(["AMR-REF-4", "AMR-REF-5", "AMR-REF-6"],
                                                        TEXTS, strict=True))  # fmt: skip
    assert stored[0].uid == "00000000-0000-4000-8000-000000000004"  # its ReqIF identity
