"""Review's authors keep every requirement and write documents: an
author's revision that drops requirements, merges them into prose, only mentions their ids or
gives back its prompt is asked again, then refused (the section keeps its text, the round
says why in both languages); reordering and a change a finding asks for are accepted. Over
real HTTP to the scripted server."""

from __future__ import annotations

from reqstudio.document_guard import fixed_text
from reqstudio.document_model import parse_markdown
from reqstudio.modes.review import ReviewRequest, run_review
from tests import review_support as review
from tests.scripted_server import Reply

REASK = "YOUR REVISION COULD NOT BE USED"
LIBRARY = """# Library SRS

## 1. Purpose

This document states what the library system must do for readers and for the staff.

## 2. Loans

- FR-01: The system shall let a reader register with an e-mail address.
- FR-02: The system shall let a reader borrow up to 5 books at a time.
- FR-03: The system shall send a reminder 2 days before a loan ends.
"""
LOANS = parse_markdown(LIBRARY).section("sec-02").content
REORDERED = """- FR-03: The system shall send a reminder by e-mail 2 days before a loan ends.
- FR-01: The system shall let a reader register with an e-mail address.
- FR-02: The system shall let a reader borrow up to 5 books at a time.
"""
# The offline model's answers, long enough not to be a fragment.
MENTIONED = (
    "FR-01, FR-02, FR-03 were dropped because they repeat what the purpose section says about "
    "readers, loans and reminders, so this section now only introduces the loans.\n"
)
MERGED = (
    "The system shall let readers register with an e-mail address (FR-01), borrow up to 5 "
    "books at a time (FR-02) and get a reminder 2 days before a loan ends (FR-03).\n"
)


async def review_once(factory, llm_server, finding: dict, *answers: str):
    """One round whose red team finds `finding` in sec-02 (high) and something of medium
    priority in sec-01; the author of sec-02 answers `answers` (the first, then the ask
    again); the second round finds one low issue, so the run passes."""
    llm_server.script(
        *review.panel(finding, review.improvement("sec-01", "medium")),
        review.author_reply("sec-02", answers[0]),
        *[Reply(content=a, match=REASK) for a in answers[1:]],
        *review.panel(review.improvement("sec-01", "low")),
    )
    request = ReviewRequest(document=LIBRARY)
    events = [e async for e in run_review(request, factory)]
    return events[-1].result


def finding(issue: str = "", expected: str = "") -> dict:
    return review.improvement(
        "sec-02",
        issue=issue or "FR-03 says when the reminder is sent but not how",
        expected=expected or "state that FR-03's reminder is sent by e-mail",
    )


async def test_ids_only_mentioned_are_asked_again_then_refused(factory, llm_server, monkeypatch):
    result = await review_once(factory, llm_server, finding(), MENTIONED, MENTIONED)
    revision = result.rounds[0].revisions[0]
    assert revision.outcome == "rejected"
    assert revision.rejected.startswith(
        "revision of section sec-02 “2. Loans” refused: it dropped FR-01, FR-02, FR-03; the ids "
        "are only mentioned"
    )
    assert revision.rejected_zh.startswith("章节 sec-02 “2. Loans” 的修订被拒绝：它删去了 FR-01")
    assert result.improved_markdown == LIBRARY  # the original kept
    [reask] = review.requests_for(llm_server, REASK)
    assert "refused: it dropped FR-01, FR-02, FR-03" in reask
    # what the user reads in the round's table, in Chinese
    import reqstudio.web.review.tables
    import reqstudio.web.texts

    monkeypatch.setattr(reqstudio.web.texts, "lang", lambda: "zh")
    monkeypatch.setattr(reqstudio.web.review.tables, "lang", lambda: "zh")
    table = reqstudio.web.review.tables.round_details(result.rounds[0], {"sec-02": "2. Loans"})
    assert "章节 sec-02 “2. Loans” 的修订被拒绝" in table


async def test_requirements_merged_into_prose_are_refused(factory, llm_server):
    result = await review_once(factory, llm_server, finding(), MERGED, MERGED)
    revision = result.rounds[0].revisions[0]
    assert revision.outcome == "rejected" and "FR-02" in revision.rejected
    assert parse_markdown(result.improved_markdown).section("sec-02").content == LOANS


async def test_a_requirement_dropped_then_restored_on_the_ask_again_is_taken(factory, llm_server):
    dropped = REORDERED.replace(
        "- FR-02: The system shall let a reader borrow up to 5 books at a time.\n", ""
    )
    result = await review_once(factory, llm_server, finding(), dropped, REORDERED)
    assert result.rounds[0].revisions[0].outcome == "changed"
    assert "refused: it dropped FR-02," in review.requests_for(llm_server, REASK)[0]
    assert (
        parse_markdown(result.improved_markdown).section("sec-02").content.strip()
        == REORDERED.strip()
    )


async def test_reordered_requirements_are_taken_without_asking_again(factory, llm_server):
    result = await review_once(factory, llm_server, finding(), REORDERED)
    assert result.rounds[0].revisions[0].outcome == "changed"
    assert not review.requests_for(llm_server, REASK)


async def test_a_renumbering_the_finding_asks_for_is_taken(factory, llm_server):
    renumbered = LOANS.replace("FR-0", "LN-0")
    asks = finding(
        issue="FR-01 to FR-03 clash with the ids of section 3",
        expected="renumber FR-01, FR-02 and FR-03 as LN-01, LN-02 and LN-03",
    )
    result = await review_once(factory, llm_server, asks, renumbered)
    assert result.rounds[0].revisions[0].outcome == "changed"
    assert not review.requests_for(llm_server, REASK)
    assert "- LN-02: The system shall let a reader borrow" in result.improved_markdown


async def test_the_prompt_given_back_is_asked_again_then_refused(factory, llm_server):
    """The author's own instructions as its answer (made from `reqstudio/prompts/review/author.md`)."""
    rules = [
        line.strip()
        for piece in fixed_text("review/author.md")
        for line in piece.splitlines()
        if line.strip().startswith("- ") and len(line.split()) > 4
    ]
    echo = "\n".join(rules) + "\n- FR-01, FR-02, FR-03\n"
    result = await review_once(factory, llm_server, finding(), echo, echo)
    revision = result.rounds[0].revisions[0]
    assert revision.outcome == "rejected"
    assert revision.rejected.startswith("the answer is not a document")
    assert "回答不是文档" in revision.rejected_zh
    assert result.improved_markdown == LIBRARY
    assert len(review.requests_for(llm_server, REASK)) == 1
