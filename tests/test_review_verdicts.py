"""A review's verdict is the verdict of the document it returns: the
best-version rule, the judge's overrulings and the pause's decisions, through the scripted
server, checked as a user would: which version comes back, what the closing message says,
what the JSON holds, what the authors were asked."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from reqstudio.document_model import parse_markdown
from reqstudio.modes.review import ReviewRequest, run_review
from reqstudio.modes.review.events import Paused
from reqstudio.modes.review.models import Improvement, NextAction, ReviewRound
from reqstudio.modes.review.user_decision import ReviewDecision, ReviewDecisionError
from reqstudio.outcomes import Outcome
from reqstudio.web.review import final_text
from reqstudio.web.review.tables import overruling_lines
from tests import review_support as review
from tests.test_review_memory import (
    GLOSSARY,
    NEW_BOOKING,
    NEW_REMINDERS,
    REMINDER,
    SPEED,
    broken_booking_rounds,
    conflict,
    judge,
    others,
    red,
)
from tests.test_review_memory import run as finished

# --- item 3: the returned version's verdict ------------------------------------------------


async def test_a_low_priority_regression_does_not_bring_back_a_version_with_open_findings(
    factory, llm_server
):
    llm_server.script(
        red(SPEED, GLOSSARY),  # round 1: I-1 high, I-2 low
        *others(),
        judge(),
        review.author_reply("sec-03", NEW_BOOKING),
        red(REMINDER),  # round 2: I-1 and I-2 not raised (resolved); I-3 high
        *others(),
        judge(),
        review.author_reply("sec-04", NEW_REMINDERS),
        red(GLOSSARY),  # round 3: the low-priority I-2 is back, nothing high
        *others(),
        judge(),
    )
    result = await finished(factory, ReviewRequest(document=review.DOCUMENT))
    assert [e.status for e in result.rounds[2].issue_statuses if e.issue_id == "I-2"] == [
        "regressed"
    ]
    assert result.stop_reason == "quality_sufficient"
    # Version 2 still held I-3 (high); version 3 holds only the low-priority I-2.
    assert result.best_round == 3 and result.best_version_note("en") == ""
    assert NEW_REMINDERS.strip() in result.improved_markdown
    assert result.outcome is Outcome.PASSED and result.open_findings() == []
    assert final_text(result).startswith("✅ Review finished: no high-priority issue left")


async def test_an_earlier_version_returned_is_no_pass_and_names_its_open_findings(
    factory, llm_server
):
    llm_server.script(*broken_booking_rounds())
    result = await finished(factory, ReviewRequest(document=review.DOCUMENT, max_rounds=2))
    assert result.best_round == 1 and result.improved_markdown == review.DOCUMENT
    text = final_text(result)
    assert "✅" not in text
    assert text.startswith("⚠️ Review ended without a pass: the round limit was reached")
    assert (
        "The returned version (reviewed in round 1) still holds open high-priority "
        "findings (2): I-1 (sec-03), I-2 (sec-04)" in text
    )
    data = result.reviews_json()
    assert data["outcome"] == "without_pass" and data["returned_round"] == 1
    assert [i["issue_id"] for i in data["open_findings"]] == ["I-1", "I-2"]


def test_the_verdict_is_read_from_the_returned_round_not_the_last():
    """Round 2 found nothing high-priority, but the result is round 1's version (kept by the
    best-version rule): its open finding denies the pass."""
    high = Improvement(agent_id="sec-02", category="c", issue="i", expected="e", issue_id="I-1")
    first = ReviewRound(
        round=1, improvements=[high.model_copy(update={"priority": "high"})],
        decision=NextAction(action="iterate", focus_on=["sec-02"]),
    )  # fmt: skip
    last = ReviewRound(round=2, decision=NextAction(action="approve", reason="quality_sufficient"))
    from reqstudio.modes.review.verdict import review_outcome

    assert review_outcome("quality_sufficient", [first, last], None) is Outcome.PASSED
    assert review_outcome("quality_sufficient", [first, last], 1) is Outcome.WITHOUT_PASS


# --- item 3: the judge overrules only by id --------------------------------------------------

BOOKING_FLOW = {
    "agent_id": "sec-03",
    "category": "booking_flow",
    "issue": "Booking has no way to cancel a visit",
    "expected": "let owners cancel up to 2 h before",
    "priority": "high",
}
KEEP_FLOW = ("booking_flow", "sec-03", "add cancellation", "the flow is clear", "keep the flow")


async def test_a_conflict_that_names_no_finding_overrules_nothing(factory, llm_server):
    llm_server.script(
        red(BOOKING_FLOW),
        *others(),
        judge(conflicts=[conflict(*KEEP_FLOW, "blue_team")]),  # same aspect, no issue_id
        review.author_reply("sec-03", NEW_BOOKING),
        red(GLOSSARY),
        *others(),
        judge(),
    )
    result = await finished(factory, ReviewRequest(document=review.DOCUMENT))
    first = result.rounds[0]
    assert first.overruled == []
    assert first.decision.action == "iterate" and first.decision.focus_on == ["sec-03"]
    assert review.requests_for(llm_server, '<section id="sec-03"')  # the author fixed it
    assert first.feedback["sec-03"].avoid_changes_to == ["booking_flow"]  # the keep stands
    assert result.reviews_json()["overruled"] == []


async def test_an_overruling_by_id_is_shown_in_the_json_and_the_closing_message(
    factory, llm_server
):
    llm_server.script(
        red(BOOKING_FLOW),
        *others(),
        judge(conflicts=[conflict(*KEEP_FLOW, "blue_team") | {"issue_id": "I-1"}]),
    )
    result = await finished(factory, ReviewRequest(document=review.DOCUMENT))
    assert result.stop_reason == "quality_sufficient" and len(result.rounds) == 1
    assert result.reviews_json()["overruled"] == [
        {
            "round": 1,
            "issue_id": "I-1",
            "agent_id": "sec-03",
            "aspect": "booking_flow",
            "ruling": "keep the flow",
        }
    ]
    assert overruling_lines(result) == [
        "Review · round 1 · The judge kept it as it is (no change): I-1 (booking_flow): "
        "keep the flow"
    ]
    assert result.outcome is Outcome.PASSED  # the overruled finding is no open finding


# --- item 5: a pause decision is applied whole or not at all ---------------------------------

REQUEST = ReviewRequest(document=review.DOCUMENT, pause_after_round=True)


async def test_an_edit_of_a_section_that_does_not_exist_refuses_the_whole_decision(
    factory, llm_server, tmp_path
):
    llm_server.script(
        *review.panel(review.improvement("sec-03"), review.improvement("sec-04")),
        review.author_reply("sec-03", NEW_BOOKING),
        review.author_reply("sec-04", NEW_REMINDERS),
        *review.panel(review.improvement("sec-01", "low")),
    )
    edited = "Pet owners and vets of the clinic use the system.\n"
    decision = ReviewDecision(edits={"sec-02": edited, "sec-99": "text"}, drop=["I-2"])
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "review.db")) as saver:
        events = [e async for e in run_review(REQUEST, factory, checkpointer=saver, thread_id="e")]
        assert isinstance(events[-1], Paused)
        with pytest.raises(ReviewDecisionError) as refused:
            async for _ in run_review(
                None, factory, checkpointer=saver, thread_id="e", resume=True, decision=decision
            ):
                pass
        assert str(refused.value) == (
            "an edit names a section the document does not have: sec-99; nothing was applied"
        )
        assert not review.requests_for(llm_server, review.AUTHOR)
        # Nothing of it was applied: continuing as the reviewers asked revises both sections,
        # and sec-02 keeps its own text.
        last = [
            e
            async for e in run_review(None, factory, checkpointer=saver, thread_id="e", resume=True)
        ][-1]
    result = last.result
    assert sorted(result.rounds[0].decision.focus_on) == ["sec-03", "sec-04"]
    assert result.rounds[0].edited_by_user == [] and result.rounds[0].dropped_by_user == []
    assert edited.strip() not in result.improved_markdown


async def test_a_refused_decision_that_reaches_the_graph_applies_none_of_its_edits(monkeypatch):
    """The engine checks a decision before resuming; one that still reaches the pause node
    (stale, or sent by another caller) changes nothing, its edits included."""
    from reqstudio.modes.review import nodes

    document = parse_markdown(review.DOCUMENT)
    finding = Improvement(
        agent_id="sec-03", category="c", issue="i", expected="e", priority="high", issue_id="I-1"
    )
    record = ReviewRound(
        round=1,
        improvements=[finding],
        decision=NextAction(action="iterate", focus_on=["sec-03"], improvements=[finding]),
    )
    state = {
        "rounds": [record.model_dump(mode="json")],
        "document": document.model_dump(mode="json"),
        "language": "en",
    }
    stale = {"edits": {"sec-02": "Pet owners only.\n"}, "drop": ["I-9"]}  # I-9: no such finding
    monkeypatch.setattr(nodes, "interrupt", lambda payload: stale)
    assert await nodes.await_user_edits(state, None) == {}
