"""Review's pause before the authors revise: the user drops a finding or
adds one (by issue id and section), and the authors are asked for exactly that list."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from reqstudio.modes.review import ReviewRequest, run_review
from reqstudio.modes.review.events import Paused, RunFinished
from reqstudio.modes.review.user_decision import (
    AddedFinding,
    ReviewDecision,
    ReviewDecisionError,
    parse_review_commands,
)
from tests.review_support import (
    AUTHOR,
    DOCUMENT,
    RED,
    author_reply,
    improvement,
    panel,
    requests_for,
)

ROLES = "Name the user roles: pet owner, vet, receptionist."
NEW_USERS = "Pet owners, vets and receptionists use the system.\n"
REQUEST = ReviewRequest(document=DOCUMENT, pause_after_round=True)


async def events_of(factory, request, **kw) -> list:
    return [event async for event in run_review(request, factory, **kw)]


def author_sections(server) -> list[str]:
    """The section each author request was for, in order."""
    return [t.split('<section id="', 1)[1].split('"', 1)[0] for t in requests_for(server, AUTHOR)]


async def test_a_dropped_finding_is_not_revised_and_an_added_one_is(factory, llm_server, tmp_path):
    llm_server.script(
        *panel(
            improvement("sec-03"),
            improvement("sec-04", "high", issue="reminders have no lead time"),
        ),
        author_reply("sec-02", NEW_USERS),
        author_reply("sec-04", "The system sends a reminder 24 h before each visit.\n"),
        *panel(improvement("sec-03", "low")),
    )
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "review.db")) as saver:
        paused = (await events_of(factory, REQUEST, checkpointer=saver, thread_id="r"))[-1]
        assert isinstance(paused, Paused)
        assert paused.focus_on == ["sec-03", "sec-04"]
        ids = {f.agent_id: f.issue_id for f in paused.findings}
        decision = parse_review_commands(f"drop {ids['sec-03']}\nadd sec-02 high {ROLES}\n")
        assert decision == ReviewDecision(
            drop=["I-1"], add=[AddedFinding(agent_id="sec-02", priority="high", issue=ROLES)]
        )
        last = (
            await events_of(
                factory, None, checkpointer=saver, thread_id="r", resume=True, decision=decision
            )
        )[-1]
    assert isinstance(last, RunFinished), last
    # The authors were asked for the added finding's section and the kept one, not the dropped.
    assert sorted(author_sections(llm_server)) == ["sec-02", "sec-04"]
    sec02 = next(t for t in requests_for(llm_server, AUTHOR) if '<section id="sec-02"' in t)
    assert ROLES in sec02 and '"issue_id": "I-3"' in sec02
    assert "search speed" not in "\n".join(requests_for(llm_server, AUTHOR))
    first = last.result.rounds[0]
    assert first.dropped_by_user == ["I-1"] and first.added_by_user == ["I-3"]
    assert first.decision.focus_on == ["sec-04", "sec-02"]
    issues = {i["id"]: i for i in last.result.issues_json()}
    assert issues["I-3"]["issue"] == ROLES and issues["I-3"]["first_seen"] == 1
    assert NEW_USERS.strip() in last.result.improved_markdown
    # Round 2's reviewers read the added finding's revision.
    assert NEW_USERS.strip() in requests_for(llm_server, RED)[1]


async def test_an_unknown_issue_id_refuses_the_decision(factory, llm_server, tmp_path):
    llm_server.script(*panel(improvement("sec-03")))
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "review.db")) as saver:
        await events_of(factory, REQUEST, checkpointer=saver, thread_id="u")
        for decision, names in (
            (ReviewDecision(drop=["I-1", "I-7"]), "I-7"),
            (ReviewDecision(add=[AddedFinding(agent_id="sec-99", issue="x")]), "sec-99"),
        ):
            with pytest.raises(ReviewDecisionError) as refused:
                await events_of(
                    factory, None, checkpointer=saver, thread_id="u", resume=True, decision=decision
                )
            assert str(refused.value) == (
                f"no such finding or section in this round: {names}; nothing was applied"
            )
    assert not requests_for(llm_server, AUTHOR)


def test_the_review_command_language():
    decision = parse_review_commands("drop I-1, i-2\nadd sec-04 medium Say when reminders go.\n")
    assert decision.drop == ["I-1", "I-2"]
    assert decision.add == [
        AddedFinding(agent_id="sec-04", priority="medium", issue="Say when reminders go.")
    ]
    assert parse_review_commands("continue\n") == ReviewDecision()
    with pytest.raises(ReviewDecisionError, match="is not a command"):
        parse_review_commands("add sec-04 urgent text")
