"""SRS mode's pause after a ReqClarify round in a real browser: the list
with its scores, a change sent in the command language, and the document written from the
changed list."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests import browser_support as web
from tests import test_srs_support as srs
from tests.apps import AppProcess, running_app
from tests.scripted_server import ScriptedLLMServer

pytestmark = pytest.mark.browser

EDITED = "Customers cancel an order within 24 hours of placing it."


def test_srs_pause_shows_the_scored_list_and_takes_an_edit(
    browser: Browser, app: AppProcess, llm_server: ScriptedLLMServer, output_dir: Path
):
    requirements = (("FR-01", "Customers place orders."), ("FR-02", "Customers cancel orders."))
    llm_server.script(
        srs.parse_reply(*requirements),
        srs.explore_reply(*requirements),
        srs.clarify_reply(FR_01=2, FR_02=2),  # both frozen: the document comes next
        srs.doc_reply(),
    )
    page = web.open_page(browser, app.url, "en-US")
    description = "An online store: customers place and cancel orders."
    web.start_paused_srs_run(page, description, srs.E_STORE / "reference.md")
    # the pause's own table: the text, the score and the status of each item
    web.sees_the_pause(
        page,
        "Round 1 is scored; the document is written next",
        "Customers cancel orders.",
        "+2",
        "frozen",
    )
    assert not srs.prompts_for(llm_server, srs.DOC), "the document waits for the user"
    page.screenshot(path=output_dir / "srs-paused-en-US.png")

    web.answer_when_asked(
        page.get_by_role("button", name="Change the list"),
        page.get_by_text("Send your changes, one a line", exact=False),
        f"edit FR-09 {EDITED}",  # no such id: refused, asked again
    )
    expect(
        page.get_by_text("not in the requirement list: FR-09; nothing was applied", exact=False)
    ).to_be_visible(timeout=30_000)
    web.answer_when_asked(
        page.get_by_role("button", name="Change the list").last,
        page.get_by_text("Send your changes, one a line", exact=False).nth(1),
        f"edit FR-02 {EDITED}",
    )
    expect(page.get_by_text("Round 1, your changes: edited FR-02.")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("✅ Done", exact=False)).to_be_visible(timeout=60_000)
    document_prompt = srs.prompts_for(llm_server, srs.DOC)
    assert len(document_prompt) == 1 and EDITED in document_prompt[0]
    assert "Customers cancel orders." not in document_prompt[0]
    with page.expect_download() as download:
        page.get_by_text("srs-log.json").click()
    log = Path(download.value.path()).read_text(encoding="utf-8")
    assert '"agent": "User"' in log and EDITED in log


def test_a_paused_run_is_decided_after_an_app_restart(
    browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path, output_dir: Path
):
    data_dir, env = tmp_path / "data", web.provider_env(llm_server)
    with running_app(data_dir, env) as first:
        llm_server.script(
            srs.parse_reply(
                ("FR-01", "Readers search books."), ("FR-02", "Readers reserve books.")
            ),
            srs.explore_reply(("FR-01", "Readers search books by title."), ("FR-02", "Reserve.")),
            srs.clarify_reply(FR_01=2, FR_02=2),
        )
        page = web.open_page(browser, first.url, "en-US")
        description = "Library lending: readers search and reserve books."
        web.start_paused_srs_run(page, description, srs.E_STORE / "reference.md")
        expect(page.get_by_text("Round 1 is scored", exact=False)).to_be_visible(timeout=60_000)
        page.context.close()  # nobody answers; the app goes away

    llm_server.reset()
    llm_server.script(srs.doc_reply())
    with running_app(data_dir, env) as second:
        page = web.open_page(browser, second.url, "en-US")
        page.locator("#thread-history").get_by_text("Library lending", exact=False).click()
        expect(
            page.get_by_text("waits for your decision on the list after round 1", exact=False)
        ).to_be_visible()
        web.wait_until_loaded(page)
        # the same list again, from the checkpoint: nothing ran before the user's word
        web.click_until(
            page.get_by_role("button", name="Resume"),
            page.get_by_role("cell", name="Readers search books by title.").last,
            timeout=30_000,
        )
        assert llm_server.requests == []
        web.click_until(
            page.get_by_role("button", name="Accept").last,
            page.get_by_text("Round 1: you accepted the list as it is."),
        )
        expect(page.get_by_text("✅ Done", exact=False)).to_be_visible(timeout=60_000)
        page.screenshot(path=output_dir / "srs-paused-resumed.png")
    assert [r for r in llm_server.requests if "Requirement Clarification Agent" in str(r)] == []
    assert "Readers search books by title." in srs.prompts_for(llm_server, srs.DOC)[0]
