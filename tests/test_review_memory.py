"""Review mode's memory through the scripted server: stable issue ids and
statuses across rounds decided by the red team, the last revision's promises checked, the best
version kept, and the judge's order and rulings used."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from reqstudio.modes.review import ReviewRequest, run_review
from reqstudio.modes.review.events import Paused, RunFinished
from reqstudio.modes.review.models import Improvement, NextAction, RedTeamReview, ReviewRound
from reqstudio.modes.review.versions import best_version
from tests import review_support as review
from tests.cli_support import QUICK, run_reqstudio
from tests.scripted_server import Reply

ROOT = Path(__file__).resolve().parent.parent


def documented_excerpt(data: dict) -> str:
    spec = importlib.util.spec_from_file_location(
        "review_trajectory", ROOT / "scripts" / "review_trajectory.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.trajectory_excerpt(data)


NEW_BOOKING = "Owners book a visit with a vet. Free slots are listed within 2 s.\n"
NEW_REMINDERS = "The system sends an SMS reminder 24 h before each visit.\n"
NEW_USERS = "Pet owners (18 or older) book visits; vets confirm them.\n"

SPEED = {
    "agent_id": "sec-03",
    "category": "performance",
    "issue": "The search for free slots is 'fast' without a response time",
    "expected": "state: free slots are listed within 2 s for 95 % of searches",
    "example": "Free slots are listed within 2 s for 95 % of searches.",
    "priority": "high",
}
REMINDER = {
    "agent_id": "sec-04",
    "category": "notification",
    "issue": "No channel or lead time is given for reminders",
    "expected": "name the channel (SMS) and the lead time (24 h)",
    "priority": "high",
}
ROLES = {
    "agent_id": "sec-02",
    "category": "roles",
    "issue": "What owners and vets may each do is not defined",
    "expected": "list each role's actions",
    "priority": "medium",
}
GLOSSARY = {
    "agent_id": "sec-01",
    "category": "glossary",
    "issue": "The word 'visit' is not defined",
    "expected": "define 'visit' once",
    "priority": "low",
}
AGE = {
    "agent_id": "sec-02",
    "category": "eligibility",
    "issue": "Minimum booking age unstated",
    "expected": "state that owners must be 18 or older",
    "priority": "high",
}
OPT_OUT = {
    "agent_id": "sec-04",
    "category": "privacy",
    "issue": "Unsubscribing from SMS messages is impossible",
    "expected": "let owners turn reminders off",
    "priority": "low",
}


def red(*findings: dict, resolved: list[str] | None = None, checks: list[dict] | None = None):
    body: dict[str, Any] = {"improvements": list(findings), "score": 70}
    if resolved is not None:
        body["resolved_issues"] = resolved
    if checks is not None:
        body["checks"] = checks
    return Reply(content=review.fenced(body), match=review.RED)


def judge(ranked: list[dict] = (), conflicts: list[dict] = ()) -> Reply:
    body = {
        "prioritized_improvements": [{"rationale": "it blocks testing", **item} for item in ranked],
        "consensus_issues": [],
        "conflicting_views": list(conflicts),
        "score": 70,
    }
    return Reply(content=review.fenced(body), match=review.JUDGE)


def others(keep: list[tuple[str, str]] = ()) -> list[Reply]:
    return [review.blue_reply(keep), review.client_reply()]


def conflict(aspect: str, agent_id: str, red_team: str, blue_team: str, ruling: str, upheld: str):
    """One of the judge's `conflicting_views`: the two teams' positions and its ruling."""
    return {
        "aspect": aspect,
        "agent_id": agent_id,
        "red_team": red_team,
        "blue_team": blue_team,
        "ruling": ruling,
        "upheld": upheld,
    }


def glossary_round() -> list[Reply]:
    """A round that finds only the low-priority glossary issue: the run ends."""
    return [red(GLOSSARY), *others(), judge()]


async def run(factory, request: ReviewRequest):
    events = [event async for event in run_review(request, factory)]
    assert isinstance(events[-1], RunFinished), events[-1]
    return events[-1].result


def statuses(data: dict) -> dict[str, dict[str, str]]:
    return {i["id"]: i["status_by_round"] for i in data["issues"]}


# --- new -> persisting -> resolved, through the CLI --------------------------


def three_rounds() -> list[Reply]:
    return [
        # Round 1: four new issues; the judge puts the reminders first.
        red(SPEED, REMINDER, ROLES, GLOSSARY),
        *others(keep=[("sec-03", "booking_flow")]),
        judge(
            [
                {"priority": 1, "agent_id": "sec-04", "task": "reminders", "issue_ids": ["I-2"]},
                {"priority": 2, "agent_id": "sec-03", "task": "speed", "issue_ids": ["I-1"]},
            ]
        ),
        review.author_reply("sec-03", NEW_BOOKING),
        review.author_reply("sec-04", NEW_REMINDERS),
        # Round 2: I-1 named again, the roles issue said again without its id, a new issue;
        # I-2 resolved; the speed fix's validation does not hold, the kept flow does.
        red(
            {**SPEED, "issue_id": "I-1", "issue": "Still no response time for the search"},
            ROLES,
            AGE,
            resolved=["I-2"],
            checks=[
                {"check_id": "C-1", "holds": True, "note": "SMS, 24 h"},
                {"check_id": "C-2", "holds": False, "note": "no percentile"},
                {"check_id": "C-3", "holds": True},
            ],
        ),
        *others(),
        judge([{"priority": 1, "agent_id": "sec-02", "task": "age"}]),
        review.author_reply("sec-02", NEW_USERS),
        review.author_reply("sec-03", NEW_BOOKING.replace("2 s", "2 s for 95 % of searches")),
        # Round 3: I-1 resolved by the red team's word; one new low issue.
        red(OPT_OUT, resolved=["I-1"]),
        *others(),
        judge(),
    ]


def test_issues_keep_their_ids_across_three_rounds_in_the_json(llm_server, tmp_path):
    document = tmp_path / "clinic.md"
    document.write_text(review.DOCUMENT, encoding="utf-8")
    llm_server.script(*three_rounds())
    reviews = tmp_path / "reviews.json"
    done = run_reqstudio(
        llm_server.base_url, tmp_path, "review", "--doc", document, "--json", reviews, **QUICK
    )
    assert done.returncode == 0, done.stderr
    assert llm_server.pending == 0
    data = json.loads(reviews.read_text(encoding="utf-8"))
    assert data["stop_reason"] == "quality_sufficient"
    assert statuses(data) == {
        "I-1": {"1": "new", "2": "persisting", "3": "resolved"},
        "I-2": {"1": "new", "2": "resolved"},
        "I-3": {"1": "new", "2": "persisting", "3": "resolved"},
        "I-4": {"1": "new", "2": "resolved"},
        "I-5": {"2": "new", "3": "resolved"},
        "I-6": {"3": "new"},
    }
    issues = {i["id"]: i for i in data["issues"]}
    assert issues["I-5"]["first_seen"] == 2 and issues["I-5"]["agent_id"] == "sec-02"
    assert issues["I-1"]["basis_by_round"] == {"1": "first_seen", "2": "reviewer", "3": "reviewer"}
    assert issues["I-3"]["basis_by_round"]["2"] == "matched"  # said again without its id
    assert issues["I-4"]["basis_by_round"]["2"] == "not_raised"
    # Per round: the versions' counts, the revisions and the stop reason.
    assert [(v["version"], v["high"], v["medium"], v["low"]) for v in data["versions"]] == [
        (1, 2, 1, 1),
        (2, 2, 1, 0),
        (3, 0, 0, 1),
    ]
    assert data["best_version"]["round"] == 3 and data["best_version"]["reason"] == ""
    rounds = data["rounds"]
    assert [r["decision"]["reason"] for r in rounds] == [None, None, "quality_sufficient"]
    assert [[v["agent_id"] for v in r["revisions"]] for r in rounds] == [
        ["sec-04", "sec-03"],  # the judge's order
        ["sec-02", "sec-03"],
        [],
    ]
    assert all(v["before"] != v["after"] for r in rounds for v in r["revisions"])
    # Round 2's checks: the last revision's validations and avoid_changes_to, answered.
    assert [(c["check_id"], c["kind"], c["issue_id"], c["holds"]) for c in rounds[1]["checks"]] == [
        ("C-1", "validation", "I-2", True),
        ("C-2", "validation", "I-1", False),
        ("C-3", "avoid_changes_to", None, True),
    ]
    assert rounds[1]["checks"][2]["text"] == "booking_flow"
    assert "issue_statuses" in data["improvement_trajectory"]["round_2"]
    # The Review page (docs/review.md) shows this very run.
    page = (ROOT / "docs" / "review.md").read_text(encoding="utf-8")
    assert "```json\n" + documented_excerpt(data) + "\n```" in page
    # What the reviewers and authors were told.
    red_prompts = review.requests_for(llm_server, review.RED)
    assert "<earlier_issues>" not in red_prompts[0]
    assert '"issue_id": "I-1"' in red_prompts[1] and '"check_id": "C-3"' in red_prompts[1]
    assert '"text": "booking_flow"' in red_prompts[1]
    assert '"issue_id": "I-5"' in red_prompts[2]
    judge_prompt = review.requests_for(llm_server, review.JUDGE)[0]
    assert '"issue_id": "I-2"' in judge_prompt
    assert '"priority": "medium",\n    "issue_id": "I-3"' in judge_prompt  # with its priority
    author = review.requests_for(llm_server, '<section id="sec-03"')[0]
    assert '"example": "Free slots are listed within 2 s for 95 % of searches."' in author
    assert '"issue_id": "I-1"' in author


# --- the stop rule on statuses; a red team that gives no ids at all ----------------------------


async def test_a_repeated_issue_without_ids_persists_and_stops_the_loop(factory, llm_server):
    llm_server.script(
        red(SPEED, REMINDER, ROLES),  # the seed's fields only: no ids, no checks
        *others(),
        judge(),
        review.author_reply("sec-03", NEW_BOOKING),
        review.author_reply("sec-04", NEW_REMINDERS),
        red({**SPEED, "issue": "The search for free slots is still 'fast' with no time"}),
        *others(),
        judge(),
    )
    result = await run(factory, ReviewRequest(document=review.DOCUMENT, max_rounds=3))
    assert result.stop_reason == "no_new_high_priority"
    second = result.rounds[1]
    assert [(e.issue_id, e.status, e.basis) for e in second.issue_statuses] == [
        ("I-1", "persisting", "matched"),
        ("I-2", "resolved", "not_raised"),
        ("I-3", "resolved", "not_raised"),
    ]
    assert not second.tracking_notes
    assert result.trajectory_text("en").endswith(
        "stopped: no new high-priority issue (those left persist)"
    )


# --- a misbehaving red team --------------------------------------------------------------------


async def test_ids_and_checks_that_do_not_exist_are_noted_not_trusted(factory, llm_server):
    llm_server.script(
        red({**SPEED, "issue_id": "I-9"}, REMINDER, ROLES),  # round 1: there is no earlier issue
        *others(keep=[("sec-03", "booking_flow")]),
        judge(),
        review.author_reply("sec-03", NEW_BOOKING),
        review.author_reply("sec-04", NEW_REMINDERS),
        red(
            {**AGE, "issue_id": "I-7"},  # no such issue
            {**OPT_OUT, "issue_id": "I-2", "priority": "high"},  # claims I-2 ...
            {**REMINDER, "issue_id": "I-2"},  # ... twice
            resolved=["I-42"],
            checks=[{"check_id": "C-99", "holds": False}],
        ),
        *others(),
        judge(),
    )
    result = await run(factory, ReviewRequest(document=review.DOCUMENT, max_rounds=2))
    first, second = result.rounds
    assert [i.issue_id for i in first.improvements] == ["I-1", "I-2", "I-3"]
    assert first.tracking_notes == [
        "the red team's finding [sec-03] The search for free slots is 'fast' without a response "
        "time names earlier issue I-9, which does not exist; it is placed as if it named none"
    ]
    notes = "\n".join(second.tracking_notes)
    assert "names earlier issue I-7, which does not exist" in notes
    assert "names I-2, which another finding of this round already names" in notes
    assert "lists I-42 as resolved, which does not exist" in notes
    assert "answered check C-99, which was never asked" in notes
    by_id = {e.issue_id: e for e in second.issue_statuses}
    # The first claim of I-2 stands; the second finding is the same substance, but I-2 is taken.
    assert by_id["I-2"].status == "persisting" and by_id["I-2"].basis == "reviewer"
    assert {e.issue_id: e.status for e in second.issue_statuses if e.status == "new"} == {
        "I-4": "new",
        "I-5": "new",
    }
    assert by_id["I-1"].status == "resolved" and by_id["I-3"].status == "resolved"
    # Checks the red team did not answer are recorded as unanswered, not as holding.
    assert [c.holds for c in second.checks] == [None, None, None]
    assert result.stop_reason == "no_convergence"  # 3 issues, as in round 1


def broken_booking_rounds() -> list[Reply]:
    """Round 1 finds three issues; the booking fix drops online booking, which the blue team
    asked to keep, so round 2 is a regression (its avoid_changes_to check fails)."""
    return [
        red(SPEED, REMINDER, ROLES),
        *others(keep=[("sec-03", "booking_flow")]),
        judge(),
        review.author_reply("sec-03", "Owners call the clinic; slots are listed within 2 s.\n"),
        review.author_reply("sec-04", NEW_REMINDERS),
        red(
            ROLES,
            resolved=["I-1", "I-2"],
            checks=[{"check_id": "C-2", "holds": False, "note": "online booking is gone"}],
        ),
        *others(),
        judge(),
    ]


# --- a broken avoid_changes_to regresses; the best version is returned -----------


async def test_a_regression_returns_the_best_version_and_says_why(factory, llm_server):
    llm_server.script(*broken_booking_rounds())
    result = await run(factory, ReviewRequest(document=review.DOCUMENT, max_rounds=2))
    second = result.rounds[1]
    assert [(c.check_id, c.kind, c.holds) for c in second.checks] == [
        ("C-1", "validation", None),
        ("C-2", "avoid_changes_to", False),
        ("C-3", "validation", None),
    ]
    regression = next(i for i in second.improvements if i.category == "avoid_changes_to")
    assert regression.issue_id == "I-4" and regression.priority == "high"
    assert regression.agent_id == "sec-03" and "online booking is gone" in regression.issue
    assert second.status_of("I-4") == "regressed"
    assert result.stop_reason == "max_rounds"
    # Round 2's version has a regression: round 1's version (the original) is the result.
    assert result.best_round == 1
    assert result.improved_markdown == review.DOCUMENT
    assert result.best_version_note("en") == (
        "The result is the version reviewed in round 1, not the last one: round 2 found a "
        "regression (I-4)."
    )
    assert result.best_version_note("zh").startswith("结果是第1轮审阅的版本")
    data = result.reviews_json()
    assert data["best_version"]["round"] == 1
    assert [v["regressed"] for v in data["versions"]] == [0, 1]
    assert "reviewed_document" not in data["rounds"][0]


async def test_more_high_priority_issues_keep_the_earlier_version(factory, llm_server):
    llm_server.script(
        red(SPEED, {**ROLES, "priority": "low"}, GLOSSARY, OPT_OUT),
        *others(),
        judge(),
        review.author_reply("sec-03", NEW_BOOKING),
        red(REMINDER, AGE, {**GLOSSARY, "issue": "Nobody says what a 'slot' is"}),
        *others(),
        judge(),
    )
    result = await run(factory, ReviewRequest(document=review.DOCUMENT, max_rounds=2))
    assert [r.count_by_priority()["high"] for r in result.rounds] == [1, 2]
    assert result.best_round == 1 and result.improved_markdown == review.DOCUMENT
    assert "round 2 found more high-priority issues (2 against 1 in round 1)" in (
        result.best_version_note("en")
    )


# --- the judge's order and rulings ------------------------------------------------


async def test_the_judges_order_and_rulings_decide_what_the_authors_do(factory, llm_server):
    booking_flow = {**SPEED, "category": "booking_flow", "issue": "Booking has no cancellation"}
    llm_server.script(
        red(booking_flow, REMINDER, {**ROLES, "priority": "high"}, AGE),
        *others(keep=[("sec-04", "reminder_channel"), ("sec-02", "role_list")]),
        judge(
            [
                {"priority": 1, "agent_id": "sec-02", "task": "age first", "issue_ids": ["I-4"]},
                {"priority": 2, "agent_id": "sec-04", "task": "reminders", "issue_ids": ["I-2"]},
                {"priority": 3, "agent_id": "sec-02", "task": "roles", "issue_ids": ["I-3"]},
            ],
            conflicts=[
                conflict(
                    "booking_flow", "sec-03", "add cancellation", "the flow is clear",
                    "keep the flow as it is", "blue_team",
                ) | {"issue_id": "I-1"},
                conflict(
                    "reminder_channel", "sec-04", "no channel", "e-mail is fine", "name SMS",
                    "red_team",
                ),
            ],
        ),
        review.author_reply("sec-02", NEW_USERS),
        review.author_reply("sec-04", NEW_REMINDERS),
        *glossary_round(),
    )  # fmt: skip
    result = await run(factory, ReviewRequest(document=review.DOCUMENT, max_rounds=2))
    record = result.rounds[0]
    assert [i.issue_id for i in record.improvements] == ["I-4", "I-2", "I-3", "I-1"]
    assert [(o.issue_id, o.aspect) for o in record.overruled] == [("I-1", "booking_flow")]
    assert "sec-03" not in record.feedback  # the judge upheld the blue team: no task there
    tasks = record.feedback["sec-02"].specific_tasks
    assert [t.issue_id for t in tasks] == ["I-4", "I-3"]  # the judge's order within a section
    assert record.feedback["sec-02"].avoid_changes_to == ["role_list"]
    assert record.feedback["sec-04"].avoid_changes_to == []  # released by the ruling
    assert record.feedback["sec-04"].judge_rulings == ["reminder_channel: name SMS"]
    assert all(t.category != "judge_priority" for t in tasks)  # named its findings: no extra task
    assert record.decision.focus_on == ["sec-02", "sec-04"]
    assert [v.agent_id for v in record.revisions] == ["sec-02", "sec-04"]
    assert not review.requests_for(llm_server, '<section id="sec-03"')
    assert result.stop_reason == "quality_sufficient"


async def test_a_blue_keep_the_judge_upholds_becomes_avoid_changes_to(factory, llm_server):
    llm_server.script(
        red(SPEED, REMINDER),
        *others(),
        judge(
            conflicts=[
                conflict(
                    "search_wording", "sec-03", "x", "keep the wording", "keep it", "blue_team"
                )
            ]
        ),
        review.author_reply("sec-03", NEW_BOOKING),
        review.author_reply("sec-04", NEW_REMINDERS),
        *glossary_round(),
    )
    result = await run(factory, ReviewRequest(document=review.DOCUMENT))
    first = result.rounds[0]
    assert first.feedback["sec-03"].avoid_changes_to == ["search_wording"]
    assert not first.overruled  # the conflict named no finding of the red team
    assert "keep: search_wording" in review.requests_for(llm_server, '<section id="sec-03"')[0]
    assert result.stop_reason == "quality_sufficient"


async def test_a_version_older_than_the_users_edit_is_not_brought_back(
    factory, llm_server, tmp_path
):
    edited = "Pet owners (18+) and vets of the clinic use the system.\n"
    llm_server.script(
        red(SPEED, {**ROLES, "priority": "low"}),
        *others(),
        judge(),
        review.author_reply("sec-03", NEW_BOOKING),
        red(REMINDER, {**AGE, "agent_id": "sec-03"}),  # more high-priority issues than round 1
        *others(),
        judge(),
    )
    request = ReviewRequest(document=review.DOCUMENT, max_rounds=2, pause_after_round=True)
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "review.db")) as saver:
        paused = [e async for e in run_review(request, factory, checkpointer=saver, thread_id="p")]
        assert isinstance(paused[-1], Paused)
        resumed = [
            e
            async for e in run_review(
                None, factory, checkpointer=saver, thread_id="p", resume=True,
                edits={"sec-02": edited},
            )
        ]  # fmt: skip
    result = resumed[-1].result
    assert result.rounds[0].edited_by_user == ["sec-02"]
    assert [r.count_by_priority()["high"] for r in result.rounds] == [1, 2]
    # Round 1's version had fewer high-priority issues, but it is older than the user's edit.
    assert result.best_round == 2 and result.best_version_note("en") == ""
    assert edited in result.improved_markdown


def test_a_version_whose_red_team_failed_is_neither_compared_nor_replaced():
    def reviewed(number: int, *priorities: str, red: bool = True) -> ReviewRound:
        return ReviewRound(
            round=number,
            red_team=RedTeamReview(improvements=[]) if red else None,
            improvements=[
                Improvement(
                    agent_id="sec-02", category="c", issue=f"i{n}", expected="e", priority=p
                )
                for n, p in enumerate(priorities)
            ],
            decision=NextAction(action="iterate", focus_on=["sec-02"]),
            reviewed_document={"title": f"v{number}"},
        )

    # Round 2's red team failed: its empty list is no review, so round 3 is compared with 1.
    rounds = [reviewed(1, "high"), reviewed(2, red=False), reviewed(3, "high", "high")]
    best = best_version(rounds)
    assert (best.round, best.last_round) == (1, 3)
    assert "more high-priority issues (2 against 1 in round 1)" in best.reason("en")
    # The last round's red team failed: nothing says the last version is worse; it stays.
    best = best_version([reviewed(1, "low"), reviewed(2, red=False)])
    assert best.is_last and best.reason("en") == ""
