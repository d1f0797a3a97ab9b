"""Rewrite's third stage with Review mode's panel (REWRITE_REVIEWER=panel): the red team, blue
team, client and judge review the draft; only high-priority findings are patched, with what the
blue team wants kept; a round without them ends the review."""

from __future__ import annotations

from agents.review.rewrite_panel import panel_reviewer
from agents.rewrite import ClarificationItem, RewriteChain, RewriteOptions, RewriteRequest
from tests.review_support import AUTHOR, JUDGE, RED, improvement, panel, requests_for
from tests.rewrite_support import (
    BODIES,
    CLARIFICATIONS,
    ORIGINAL_EN,
    PATCH,
    fill_replies,
    outline_reply,
    patch_reply,
)

PATCHED = "Owners pick a vet and a free slot; they may change or cancel up to 2 hours before.\n"


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
    request = RewriteRequest(
        original_content=ORIGINAL_EN,
        clarifications=[ClarificationItem(**c) for c in CLARIFICATIONS],
    )
    chain = RewriteChain(
        factory, reviewer=panel_reviewer(factory), options=RewriteOptions(max_review_rounds=3)
    )
    result = await chain.ainvoke(request)
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
