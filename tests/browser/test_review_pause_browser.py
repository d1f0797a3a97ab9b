"""Review's pause before the authors revise, in a real browser: the round's
findings with their issue ids, one dropped and one added, and the authors asked for exactly
that list."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests import browser_support as web
from tests import review_support as review
from tests.apps import AppProcess
from tests.scripted_server import ScriptedLLMServer

pytestmark = pytest.mark.browser

ROLES = "Name the user roles: pet owner, vet, receptionist."
NEW_USERS = "Pet owners, vets and receptionists use the system.\n"


def test_review_pause_drops_a_finding_and_adds_one(
    browser: Browser,
    app: AppProcess,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    output_dir: Path,
):
    finding = review.improvement("sec-03", "high", issue="the search has no time limit")
    llm_server.script(*review.two_rounds(finding, review.author_reply("sec-02", NEW_USERS)))
    document = tmp_path / "clinic.md"
    document.write_text(review.DOCUMENT, encoding="utf-8")
    page = web.open_page(browser, app.url, "en-US")
    web.start_paused_review(page, document)
    web.sees_the_pause(page, "Before the authors revise", "the search has no time limit", "I-1")
    assert not review.requests_for(llm_server, review.AUTHOR), "no author before the user's word"
    page.screenshot(path=output_dir / "review-paused-en-US.png")

    web.answer_when_asked(
        page.get_by_role("button", name="Drop or add findings"),
        page.get_by_text("Send your changes to the findings", exact=False),
        f"drop I-1\nadd sec-02 high {ROLES}",
    )
    expect(
        page.get_by_text("Noted: dropped I-1; added 1 finding of yours.", exact=False)
    ).to_be_visible()
    web.click_until(
        page.get_by_role("button", name="Continue").last,
        page.get_by_text("Chosen: Continue", exact=False).last,
    )
    expect(page.get_by_text("✅ Review finished", exact=False)).to_be_visible(timeout=60_000)

    authors = review.requests_for(llm_server, review.AUTHOR)
    assert len(authors) == 1 and '<section id="sec-02"' in authors[0] and ROLES in authors[0]
    assert "the search has no time limit" not in authors[0]
