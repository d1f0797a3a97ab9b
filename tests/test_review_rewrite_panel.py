"""Rewrite's third stage with Review mode's panel (REWRITE_REVIEWER=panel): the red team, blue
team, client and judge review the draft; only high-priority findings are patched, with what the
blue team wants kept; a round without them ends the review. The panel follows Review mode's
rules: findings on unknown sections are asked about, then kept and shown; a failed reviewer is
recorded and the rewrite is then no pass, never "no issues"."""

from __future__ import annotations

from reqstudio.modes.review.rewrite_panel import panel_reviewer
from reqstudio.modes.rewrite import RewriteChain, RewriteOptions
from reqstudio.modes.rewrite.outcome import rewrite_outcome
from reqstudio.outcomes import Outcome
from tests.review_support import (
    AUTHOR,
    CLIENT,
    JUDGE,
    RED,
    blue_reply,
    client_reply,
    improvement,
    judge_low,
    judge_reply,
    panel,
    red_reply,
    requests_for,
)
from tests.rewrite_support import (
    BODIES,
    PATCH,
    PLACE,
    english_request,
    fill_replies,
    outline_reply,
    patch_reply,
    placement_reply,
)
from tests.scripted_server import Reply

PATCHED = "Owners pick a vet and a free slot; they may change or cancel up to 2 hours before.\n"


async def rewrite_with_panel(factory):
    """The English original rewritten with the panel as the reviewer, up to three rounds."""
    chain = RewriteChain(
        factory, reviewer=panel_reviewer(factory), options=RewriteOptions(max_review_rounds=3)
    )
    return await chain.ainvoke(english_request())


async def test_rewrite_patches_what_the_panel_found(factory, llm_server):
    llm_server.script(
        outline_reply(),
        *fill_replies(),
        *panel(
            improvement("sec-02", "high", "cancellation deadline is missing", "state: up to 2 h before"),
            improvement("sec-03", "low"),
            keep=[("sec-02", "slot_selection")],
        ),
        patch_reply(PATCHED),
        *panel(improvement("sec-03", "low")),
    )  # fmt: skip
    result = await rewrite_with_panel(factory)
    assert result.rounds == 2
    assert [s.content for s in result.structured_document.sections] == [
        BODIES[0],
        PATCHED,
        BODIES[2],
    ]
    first = result.review_rounds[0]
    assert [(i.section_id, i.description) for i in first.issues] == [
        ("sec-02", "cancellation deadline is missing")
    ]
    patch_prompt = requests_for(llm_server, PATCH)[0]
    assert "state: up to 2 h before (keep as is: slot_selection)" in patch_prompt
    # The panel saw the rewrite's background (the clarifications) and the draft's ids.
    red_prompt = requests_for(llm_server, RED)[0]
    assert "By card at the clinic only" in red_prompt and "[sec-02]" in red_prompt
    assert len(requests_for(llm_server, JUDGE)) == 2
    assert not requests_for(llm_server, AUTHOR)  # Rewrite's own patcher writes, not Review's
    assert llm_server.pending == 0


# --- the panel follows Review mode's rules -------------------------------


REFUND = improvement("Appendix Z", "high", "no refund rule for cancelled visits", "state it")


async def test_a_finding_on_an_unknown_section_is_asked_about_and_patched(factory, llm_server):
    llm_server.script(
        outline_reply(),
        *fill_replies(),
        *panel(REFUND),
        placement_reply((1, "sec-02")),  # asked again with the valid ids: it belongs to Booking
        patch_reply(PATCHED),
        *panel(improvement("sec-03", "low")),
    )
    result = await rewrite_with_panel(factory)
    first = result.review_rounds[0]
    assert [(i.section_id, i.description) for i in first.issues] == [
        ("sec-02", "no refund rule for cancelled visits")
    ]
    assert "Appendix Z" in requests_for(llm_server, PLACE)[0]
    assert result.structured_document.sections[1].content == PATCHED
    assert result.stop_reason == "no_issues" and result.complete


async def test_a_finding_no_section_fits_is_kept_shown_and_no_pass(factory, llm_server):
    llm_server.script(
        outline_reply(),
        *fill_replies(),
        *panel(REFUND),
        placement_reply(),  # the reviewer cannot say either
    )
    result = await rewrite_with_panel(factory)
    first = result.review_rounds[0]
    assert [(i.section_id, i.description) for i in first.ignored] == [
        ("Appendix Z", "no refund rule for cancelled visits")
    ]
    assert result.stop_reason == "unplaced_issues"
    assert rewrite_outcome(result) is Outcome.WITHOUT_PASS
    assert [s.content for s in result.structured_document.sections] == BODIES  # nothing patched


async def test_a_failed_red_team_with_no_high_priority_task_is_no_verdict(factory, llm_server):
    llm_server.script(
        outline_reply(),
        *fill_replies(),
        *[Reply(fault="500", match=RED)] * 3,  # the red team, on every try
        blue_reply(),
        client_reply(),
        judge_low(),
    )
    result = await rewrite_with_panel(factory)
    first = result.review_rounds[0]
    assert first.issues == [] and [f.reviewer for f in first.failed_reviewers] == ["red_team"]
    assert "500" in first.failed_reviewers[0].reason
    assert result.stop_reason == "reviewer_failed"
    assert not result.complete
    assert rewrite_outcome(result) is Outcome.WITHOUT_PASS
    assert result.model_dump(mode="json")["stop_reason"] == "reviewer_failed"


async def test_a_failed_member_is_recorded_while_the_round_goes_on(factory, llm_server):
    llm_server.script(
        outline_reply(),
        *fill_replies(),
        red_reply(improvement("sec-02", "high", "cancellation deadline is missing", "2 h")),
        blue_reply(),
        *[Reply(fault="500", match=CLIENT)] * 3,
        judge_reply(),
        patch_reply(PATCHED),
        *panel(improvement("sec-03", "low")),
    )
    result = await rewrite_with_panel(factory)
    assert [f.reviewer for f in result.review_rounds[0].failed_reviewers] == ["client"]
    assert result.structured_document.sections[1].content == PATCHED  # the round went on
    assert result.stop_reason == "reviewer_failed" and not result.complete
