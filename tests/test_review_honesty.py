"""A review that did not happen is never reported as a pass. Each test
plays a provider that answers badly on purpose, over real HTTP to the scripted server, and
checks what a user would: the stop reason, the findings kept, the revisions' outcomes, the
document's text."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from reqstudio.document_model import parse_markdown
from reqstudio.llm import Endpoint, ModelFactory
from reqstudio.modes.review import ReviewRequest, run_review
from reqstudio.modes.review.events import ReviewerFailed, RunFinished
from tests import review_support as review
from tests.scripted_server import Reply

PLACEMENT = "SECTION IDS NEEDED"
REASK = "YOUR REVISION COULD NOT BE USED"
NEW_BOOKING = (
    "Owners book a visit with a vet. Free slots are listed within 2 s for 95 % of searches.\n"
)
REQUIREMENTS = """# Shop SRS

## 1. Purpose

This document states what the e-store must do for customers, staff and the payment partner.

## 2. Ordering

- FR-1: A customer adds a product to the cart from the product page or the search results.
- FR-2: A customer sees the cart's total, taxes included, before paying.
- FR-3: The checkout is fast and works on phones.
- FR-4: A customer receives an order confirmation by e-mail.
"""
ORDERING_FIXED = """- FR-1: A customer adds a product to the cart from the product page or the search results.
- FR-2: A customer sees the cart's total, taxes included, before paying.
- FR-3: The checkout completes within 3 s for 95 % of orders, on phones 360 px wide and up.
- FR-4: A customer receives an order confirmation by e-mail.
"""


async def run(factory, document: str = review.DOCUMENT, **request):
    events = [e async for e in run_review(ReviewRequest(document=document, **request), factory)]
    return events, events[-1]


def judge_low(agent_id: str = "sec-03", score: int = 75) -> Reply:
    """A judge whose only task is of rank 3 (low): alone it would let the run pass."""
    body = {
        "prioritized_improvements": [
            {"priority": 3, "agent_id": agent_id, "task": "polish wording", "rationale": "x"}
        ],
        "consensus_issues": [],
        "conflicting_views": [],
        "score": score,
    }
    return Reply(content=review.fenced(body), match=review.JUDGE)


def red_team_fails(every_try: Reply, judge: Reply | None = None) -> list[Reply]:
    """A round whose red team answers `every_try` on each of its three tries, while the blue
    team and the client answer and the judge ranks (default: `judge_low`)."""
    failing = replace(every_try, match=review.RED)
    return [
        failing,
        failing,
        failing,
        review.blue_reply(),
        review.client_reply(),
        judge or judge_low(),
    ]


def factory_in_mode(settings, llm_server, mode: str) -> ModelFactory:
    return ModelFactory(
        settings.model_copy(update={"structured_output": mode}),
        Endpoint(llm_server.base_url, "sk-test-not-a-real-key", "scripted-model"),
    )


def body_of(markdown: str, agent_id: str) -> str:
    return parse_markdown(markdown).section(agent_id).content


# --- item 1: an answer without the reviewer's own fields is no review -------------------


@pytest.mark.parametrize("garbage", [{"verdict": "fine"}, {}])
async def test_unrelated_or_empty_json_from_the_red_team_is_a_failed_review(
    factory, llm_server, garbage
):
    llm_server.script(*red_team_fails(Reply(content=review.fenced(garbage))))
    events, last = await run(factory)
    assert isinstance(last, RunFinished)
    result = last.result
    assert result.stop_reason == "reviewer_failed"  # never quality_sufficient
    assert result.rounds[0].red_team is None
    failed = [e for e in events if isinstance(e, ReviewerFailed)]
    assert [e.reviewer for e in failed] == ["red_team"]
    assert "carries none of the red team's fields (improvements)" in failed[0].reason
    assert result.stop_detail.startswith("red_team: ")
    assert "improvements" in result.stop_detail
    assert (
        len(review.requests_for(llm_server, review.RED)) == 3
    )  # re-asked within the policy, then failed
    assert result.reviews_json()["stop_detail"] == result.stop_detail
    assert "not a pass" in result.trajectory_text("en")


async def test_an_empty_answer_is_re_asked_and_a_real_one_then_counts(factory, llm_server):
    llm_server.script(
        Reply(content=review.fenced({}), match=review.RED),
        *review.panel(review.improvement("sec-03", "low")),
    )
    _, last = await run(factory)
    assert last.result.stop_reason == "quality_sufficient"
    asks = review.requests_for(llm_server, review.RED)
    assert len(asks) == 2
    assert "carries none of the red team's fields" in asks[1]  # the re-ask says what was wrong


async def test_other_reviewers_answering_nothing_are_failed_too(factory, llm_server):
    llm_server.script(
        review.red_reply(review.improvement("sec-03", "low")),
        *[Reply(content=review.fenced({"verdict": "fine"}), match=review.BLUE)] * 3,
        *[Reply(content=review.fenced({"ok": True}), match=review.CLIENT)] * 3,
        *[Reply(content=review.fenced({}), match=review.JUDGE)] * 3,
    )
    events, last = await run(factory)
    failed = sorted(e.reviewer for e in events if isinstance(e, ReviewerFailed))
    assert failed == ["blue_team", "client", "judge"]
    assert last.result.stop_reason == "quality_sufficient"  # the red team did review


# --- item 2: findings on unknown sections are never dropped ----------------------------


async def test_findings_on_unknown_sections_are_asked_about_once_and_placed(factory, llm_server):
    llm_server.script(
        review.red_reply(
            review.improvement("agent_id-07", issue="booking search speed has no number"),
            review.improvement("agent_id-07", issue="no statement of the clinic's opening hours"),
        ),
        # The re-ask: the first finding is Booking's, the second fits no single section.
        Reply(
            content=review.fenced(
                {
                    "placements": [
                        {"finding": 1, "agent_id": "sec-03"},
                        {"finding": 2, "agent_id": ""},
                    ]
                }
            ),
            match=PLACEMENT,
        ),
        review.blue_reply(),
        review.client_reply(),
        judge_low(),
        review.author_reply("sec-03", NEW_BOOKING),
        *review.panel(review.improvement("sec-04", "low")),
    )
    _events, last = await run(factory)
    result = last.result
    first = result.rounds[0]
    asked = review.requests_for(llm_server, PLACEMENT)
    assert len(asked) == 1
    assert "- sec-03: 2. Booking" in asked[0]  # the valid ids and their titles
    assert [i.agent_id for i in first.improvements] == ["sec-03"]
    assert [i.issue for i in first.document_wide] == ["no statement of the clinic's opening hours"]
    assert first.total_improvements == 2 and first.count_by_priority()["high"] == 2
    assert first.decision.action == "iterate" and first.decision.focus_on == ["sec-03"]
    assert len(first.decision.improvements) == 2  # both shown with the decision
    assert NEW_BOOKING in result.improved_markdown
    assert result.improvement_trajectory["round_1"]["document_wide"] == 1
    data = result.reviews_json()
    assert data["rounds"][0]["document_wide"][0]["priority"] == "high"


async def test_unplaceable_high_findings_block_a_pass(factory, llm_server):
    """The offline-style answer that used to end `quality_sufficient` after round 1."""
    llm_server.script(
        review.red_reply(
            review.improvement("agent_id-07"),
            review.improvement("agent_id-07", issue="no audit log"),
        ),
        Reply(content=review.fenced({"placements": []}), match=PLACEMENT),
        review.blue_reply(),
        review.client_reply(),
        judge_low(),
    )
    _, last = await run(factory)
    result = last.result
    assert result.stop_reason == "unplaced_issues"
    assert len(result.rounds[0].document_wide) == 2
    assert result.improvement_trajectory["round_1"]["by_priority"]["high"] == 2
    assert not review.requests_for(llm_server, review.AUTHOR)


async def test_a_finding_naming_a_section_title_is_placed_without_asking(factory, llm_server):
    llm_server.script(
        *review.panel(
            review.improvement("2. Booking", "medium"), review.improvement("REMINDERS", "low")
        )
    )
    _, last = await run(factory)
    record = last.result.rounds[0]
    assert [i.agent_id for i in record.improvements] == ["sec-03", "sec-04"]
    assert record.document_wide == []
    assert not review.requests_for(llm_server, PLACEMENT)


# --- item 3: a failed red team is never a pass; scores compared like with like ----------


async def test_a_failed_red_team_stops_with_reviewer_failed_not_quality_sufficient(
    factory, llm_server
):
    llm_server.script(*red_team_fails(Reply(fault="500")))
    _, last = await run(factory)
    result = last.result
    assert result.stop_reason == "reviewer_failed"
    assert result.rounds[0].decision.detail.startswith("red_team: ")
    assert "500" in result.stop_detail or "server" in result.stop_detail.lower()
    assert result.improvement_trajectory["round_1"]["status"] == "reviewer_failed"
    assert result.trajectory_text("zh").endswith("红队审阅失败，停止（未通过审阅）")


async def test_a_failed_red_team_with_high_judge_tasks_still_iterates(factory, llm_server):
    from tests.review_support import judge_reply

    llm_server.script(
        *red_team_fails(Reply(fault="500"), judge_reply()),  # the judge: rank 1 on sec-03, high
        review.author_reply("sec-03", NEW_BOOKING),
        *review.panel(review.improvement("sec-04", "low")),
    )
    _, last = await run(factory)
    assert [r.decision.action for r in last.result.rounds] == ["iterate", "approve"]
    assert last.result.stop_reason == "quality_sufficient"  # round 2's red team did review


def scored(reply: Reply, score: int) -> Reply:
    body = json.loads(reply.content.removeprefix("```json\n").removesuffix("\n```"))
    body["score"] = score
    return Reply(content=review.fenced(body), match=reply.match)


async def test_the_score_rule_skips_rounds_scored_by_other_reviewers(factory, llm_server):
    # Round 1: blue 95 lifts the mean to 71.25. Round 2: blue fails, the others score 65
    # (mean 65): the old rule stopped with score_declined although no one scored lower.
    llm_server.script(
        scored(review.red_reply(review.improvement("sec-03"), review.improvement("sec-04")), 60),
        scored(review.blue_reply(), 95),
        scored(review.client_reply(), 65),
        scored(review.panel()[3], 65),
        review.author_reply("sec-03", NEW_BOOKING),
        review.author_reply("sec-04", "Reminders go out by SMS 24 h before a visit.\n"),
        scored(review.red_reply(review.improvement("sec-02")), 65),
        *[Reply(fault="500", match=review.BLUE)] * 3,
        scored(review.client_reply(), 65),
        scored(review.panel()[3], 65),
    )
    _, last = await run(factory, max_rounds=2)
    result = last.result
    assert [r.score for r in result.rounds] == [71.2, 65]
    assert result.stop_reason == "max_rounds"


async def test_the_score_rule_still_fires_when_the_same_reviewers_score_lower(factory, llm_server):
    llm_server.script(
        *review.panel(review.improvement("sec-03"), review.improvement("sec-04"), score=70),
        review.author_reply("sec-03", NEW_BOOKING),
        review.author_reply("sec-04", "Reminders go out by SMS 24 h before a visit.\n"),
        # A new high-priority issue: a repeated one would stop first, with no_new_high_priority.
        *review.panel(review.improvement("sec-02"), score=60),
    )
    _, last = await run(factory, max_rounds=5)
    assert last.result.stop_reason == "score_declined"


# --- item 4: each revision's outcome, and words from those outcomes ---------------------


async def test_unchanged_and_failed_authors_are_not_reported_as_fixed(factory, llm_server):
    unchanged = body_of(review.DOCUMENT, "sec-03")
    llm_server.script(
        *review.panel(review.improvement("sec-03"), review.improvement("sec-04")),
        review.author_reply("sec-03", unchanged),
        *[Reply(fault="500", match='<section id="sec-04"')] * 5,
        *review.panel(review.improvement("sec-03", "low")),
    )
    _, last = await run(factory)
    result = last.result
    outcomes = {r.agent_id: r.outcome for r in result.rounds[0].revisions}
    assert outcomes == {"sec-03": "unchanged", "sec-04": "failed"}
    assert result.trajectory_text("en") == (
        "Round 1 found 2 issues → not fixed (1 unchanged, 1 failed); "
        "round 2 found 1 issue (none high-priority) → done"
    )
    assert result.trajectory_text("zh").startswith(
        "第1轮发现2个问题 → 未修正（1 节未改变、1 节失败）"
    )
    assert result.improvement_trajectory["round_1"]["revisions"] == {
        "changed": 0, "unchanged": 2 - 1, "failed": 1, "rejected": 0
    }  # fmt: skip
    data = result.reviews_json()
    assert [r["outcome"] for r in data["rounds"][0]["revisions"]] == ["unchanged", "failed"]
    assert result.improved_markdown == review.DOCUMENT


async def test_partly_fixed_rounds_say_how_many(factory, llm_server):
    llm_server.script(
        *review.panel(review.improvement("sec-03"), review.improvement("sec-04")),
        review.author_reply("sec-03", NEW_BOOKING),
        *[Reply(fault="500", match='<section id="sec-04"')] * 5,
        *review.panel(review.improvement("sec-04", "low")),
    )
    _, last = await run(factory)
    assert last.result.trajectory_text("en").startswith(
        "Round 1 found 2 issues → fixed 1 of 2 sections (1 failed);"
    )


# --- item 5: length and content_filter in every structured-output mode ------------------


@pytest.mark.parametrize("mode", ["auto", "json_schema", "prompt"])
@pytest.mark.parametrize("reason", ["length", "content_filter"])
async def test_a_reviewer_cut_or_filtered_every_time_fails_clearly(
    settings, llm_server, mode, reason
):
    factory = factory_in_mode(settings, llm_server, mode)
    cut = Reply(content='{"improvements": [{"agent_id": "sec-03", "cat', finish_reason=reason)
    llm_server.script(*red_team_fails(cut))
    events, last = await run(factory)
    assert isinstance(last, RunFinished)
    assert last.result.stop_reason == "reviewer_failed"
    failure = next(e for e in events if isinstance(e, ReviewerFailed))
    assert reason.replace("_", " ") in failure.reason.replace("_", " ")
    assert len(review.requests_for(llm_server, review.RED)) == 3
    if mode == "json_schema":
        assert llm_server.requests[0]["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize("mode", ["auto", "json_schema", "prompt"])
@pytest.mark.parametrize("reason", ["length", "content_filter"])
async def test_a_reviewer_cut_or_filtered_once_is_asked_again(settings, llm_server, mode, reason):
    factory = factory_in_mode(settings, llm_server, mode)
    llm_server.script(
        Reply(content='{"improvements": [', finish_reason=reason, match=review.RED),
        *review.panel(review.improvement("sec-03", "low")),
    )
    _, last = await run(factory)
    assert last.result.stop_reason == "quality_sufficient"
    assert last.result.rounds[0].red_team.improvements[0].agent_id == "sec-03"
    assert len(review.requests_for(llm_server, review.RED)) == 2


@pytest.mark.parametrize("mode", ["auto", "json_schema", "prompt"])
@pytest.mark.parametrize("reason", ["length", "content_filter"])
async def test_an_author_cut_or_filtered_every_time_fails_clearly(
    settings, llm_server, mode, reason
):
    factory = factory_in_mode(settings, llm_server, mode)
    bad = Reply(content="Owners book a visit", finish_reason=reason, match='<section id="sec-03"')
    # length: the answer and its two continuations; content_filter: the five tries.
    tries = 3 if reason == "length" else 5
    llm_server.script(
        *review.panel(review.improvement("sec-03"), review.improvement("sec-04", "medium")),
        *[bad] * tries,
        *review.panel(review.improvement("sec-04", "low")),
    )
    _, last = await run(factory)
    result = last.result
    revision = result.rounds[0].revisions[0]
    assert revision.outcome == "failed"
    assert f"finish reason: {reason}" in revision.failed
    assert body_of(result.improved_markdown, "sec-03") == body_of(review.DOCUMENT, "sec-03")
    assert "Owners book a visit\n" not in result.improved_markdown.replace(
        "Owners book a visit with", ""
    )


@pytest.mark.parametrize("mode", ["auto", "json_schema", "prompt"])
async def test_an_author_filtered_once_is_tried_again(settings, llm_server, mode):
    factory = factory_in_mode(settings, llm_server, mode)
    llm_server.script(
        *review.panel(review.improvement("sec-03")),
        Reply(content="Owners", finish_reason="content_filter", match='<section id="sec-03"'),
        review.author_reply("sec-03", NEW_BOOKING),
        *review.panel(review.improvement("sec-04", "low")),
    )
    _, last = await run(factory)
    assert last.result.rounds[0].revisions[0].outcome == "changed"
    assert NEW_BOOKING in last.result.improved_markdown


# --- item 6: an author answer that is no section, or drops requirements -----------------


async def test_an_author_answering_json_is_asked_again_then_rejected(factory, llm_server):
    llm_server.script(
        *review.panel(review.improvement("sec-01"), review.improvement("sec-04", "medium")),
        review.author_reply("sec-01", '{"improvements": []}'),
        Reply(content=review.fenced({"improvements": []}), match=REASK),
        *review.panel(review.improvement("sec-04", "low")),
    )
    _, last = await run(factory)
    result = last.result
    assert result.stop_reason == "quality_sufficient"  # the run went on and ended by its rule
    revision = result.rounds[0].revisions[0]
    assert revision.outcome == "rejected"
    assert revision.rejected == "the answer is JSON, not the section's text"
    assert result.improved_markdown == review.DOCUMENT  # the section kept its text
    assert len(review.requests_for(llm_server, REASK)) == 1
    data = result.reviews_json()
    assert data["rounds"][0]["revisions"][0]["outcome"] == "rejected"
    assert data["rounds"][0]["revisions"][0]["rejected"].startswith("the answer is JSON")
    assert "not fixed (1 rejected)" in result.trajectory_text("en")


async def test_an_author_dropping_a_requirement_id_is_asked_again(factory, llm_server):
    without_fr3 = ORDERING_FIXED.replace(
        "- FR-3: The checkout completes", "- The checkout completes"
    )
    llm_server.script(
        *review.panel(review.improvement("sec-02"), review.improvement("sec-01", "medium")),
        review.author_reply("sec-02", without_fr3),
        Reply(content=ORDERING_FIXED, match=REASK),
        *review.panel(review.improvement("sec-01", "low")),
    )
    _, last = await run(factory, document=REQUIREMENTS)
    result = last.result
    reask = review.requests_for(llm_server, REASK)
    assert len(reask) == 1
    assert "revision of section sec-02 “2. Ordering” refused: it dropped FR-3" in reask[0]
    assert result.rounds[0].revisions[0].outcome == "changed"
    assert body_of(result.improved_markdown, "sec-02").strip() == ORDERING_FIXED.strip()


async def test_an_author_dropping_a_requirement_twice_is_rejected(factory, llm_server):
    without_fr3 = "\n".join(
        line for line in ORDERING_FIXED.splitlines() if not line.startswith("- FR-3")
    )
    llm_server.script(
        *review.panel(review.improvement("sec-02"), review.improvement("sec-01", "medium")),
        review.author_reply("sec-02", without_fr3),
        Reply(content=without_fr3, match=REASK),
        *review.panel(review.improvement("sec-01", "low")),
    )
    _, last = await run(factory, document=REQUIREMENTS)
    revision = last.result.rounds[0].revisions[0]
    assert revision.outcome == "rejected"
    assert "FR-3" in revision.rejected
    assert "- FR-3: The checkout is fast and works on phones." in last.result.improved_markdown


async def test_a_finding_that_asks_to_remove_a_requirement_lets_it_go(factory, llm_server):
    without_fr3 = "\n".join(
        line for line in ORDERING_FIXED.splitlines() if not line.startswith("- FR-3")
    )
    removal = review.improvement(
        "sec-02",
        issue="FR-3 duplicates the performance section",
        expected="remove FR-3; the checkout time belongs in the performance section",
    )
    llm_server.script(
        *review.panel(removal, review.improvement("sec-01", "medium")),
        review.author_reply("sec-02", without_fr3 + "\n"),
        *review.panel(review.improvement("sec-01", "low")),
    )
    _, last = await run(factory, document=REQUIREMENTS)
    assert last.result.rounds[0].revisions[0].outcome == "changed"
    assert "FR-3" not in last.result.improved_markdown
    assert not review.requests_for(llm_server, REASK)


async def test_a_fragment_is_asked_again_then_rejected(factory, llm_server):
    llm_server.script(
        *review.panel(review.improvement("sec-02"), review.improvement("sec-01", "medium")),
        review.author_reply("sec-02", "- FR-1, FR-2, FR-3, FR-4: see above."),
        Reply(content="FR-1 FR-2 FR-3 FR-4", match=REASK),
        *review.panel(review.improvement("sec-01", "low")),
    )
    _, last = await run(factory, document=REQUIREMENTS)
    revision = last.result.rounds[0].revisions[0]
    assert revision.outcome == "rejected"
    assert revision.rejected.startswith("the answer is a fragment")
    assert last.result.improved_markdown == REQUIREMENTS


# --- what the browser says at the end ---------------------------------


async def test_the_closing_message_has_no_tick_when_a_reviewer_failed(factory, llm_server):
    from reqstudio.web.review import final_text, round_details

    llm_server.script(*red_team_fails(Reply(fault="500")))
    _, red_failed = await run(factory)
    text = final_text(red_failed.result)
    assert "✅" not in text
    assert text.startswith("⚠️ Review ended without a pass: the red team failed")
    assert "round 1 Red team:" in text  # the reviewer named as the UI names it

    llm_server.reset()
    llm_server.script(
        review.red_reply(review.improvement("sec-03", "low")),
        review.blue_reply(),
        *[Reply(fault="500", match=review.CLIENT)] * 3,
        judge_low(),
    )
    _, client_failed = await run(factory)
    assert client_failed.result.stop_reason == "quality_sufficient"
    text = final_text(client_failed.result)
    assert "✅" not in text and "not every reviewer could review" in text
    assert "round 1 Client:" in text

    llm_server.reset()
    llm_server.script(
        *review.panel(review.improvement("sec-01"), review.improvement("sec-04", "medium")),
        review.author_reply("sec-01", '{"improvements": []}'),
        Reply(content='{"improvements": []}', match=REASK),
        *review.panel(review.improvement("sec-04", "low")),
    )
    _, clean = await run(factory)
    assert final_text(clean.result).startswith("✅ Review finished: no high-priority issue left")
    table = round_details(clean.result.rounds[0], {"sec-01": "Pet Clinic Booking SRS"})
    assert "| sec-01 Pet Clinic Booking SRS | rejected | the answer is JSON" in table  # no code


def test_the_bundled_models_grammar_cannot_answer_without_the_reviewers_fields():
    from reqstudio.modes.review.models import ANSWER_MODELS
    from reqstudio.modes.review.nodes import embedded_schema

    for model in ANSWER_MODELS.values():
        assert set(model.OWN_FIELDS) <= set(embedded_schema(model)["required"])


def test_the_trajectory_words_for_a_partly_rejected_round():
    from reqstudio.modes.review.models import NextAction, ReviewRound, SectionRevision
    from reqstudio.modes.review.trajectory import trajectory_text

    high = {"agent_id": "sec-02", "category": "c", "issue": "i", "expected": "e"}
    first = ReviewRound(
        round=1,
        improvements=[{**high, "priority": "high"}, {**high, "priority": "high"}],
        decision=NextAction(action="iterate", focus_on=["sec-02", "sec-03"]),
        revisions=[
            SectionRevision(agent_id="sec-02", title="a", before="x\n", after="y\n"),
            SectionRevision(
                agent_id="sec-03", title="b", before="x\n", after="x\n", rejected="JSON"
            ),
        ],
    )
    last = ReviewRound(round=2, decision=NextAction(action="approve", reason="quality_sufficient"))
    assert trajectory_text([first, last], "quality_sufficient", "zh") == (
        "第1轮发现2个问题 → 修正 1/2 节（1 节被拒绝）；第2轮无新问题 → 完成"
    )
    assert trajectory_text([first, last], "quality_sufficient", "en") == (
        "Round 1 found 2 issues → fixed 1 of 2 sections (1 rejected); round 2 found no new "
        "issues → done"
    )
