"""The browser's mark and the command line's exit code never disagree about how a run ended.

For every mode, every way its runs end is taken from the code (the stop-reason or ending
`Literal`, not a list typed here), with and without a failed reviewer where the mode has
reviewers; for each, the UI's own function gives the mark the closing message starts with and
the CLI's own function gives the exit code. They must agree as the exit-code table of docs/command-line.md
says: ✅ exits 0, ⚠️ (finished without a pass) exits 4, ❌ exits 1 (no result) or 3 (an
incomplete result written), ⏹ exits 130. A stop reason added without being mapped fails here
(its mode's outcome function has no entry for it).
"""

from __future__ import annotations

from typing import get_args

import pytest

from reqstudio.document_model import DocumentSection, DocumentStructure
from reqstudio.modes.agent.cli import agent_exit_code
from reqstudio.modes.agent.outcome import AgentEnding, ending_of
from reqstudio.modes.chat.cli import chat_exit_code
from reqstudio.modes.chat.outcome import ChatEnding
from reqstudio.modes.review.cli import failure_exit_code, review_exit_code
from reqstudio.modes.review.engine import ReviewResult
from reqstudio.modes.review.models import (
    Improvement,
    NextAction,
    RedTeamReview,
    ReviewerFailure,
    ReviewRound,
    StopReason,
)
from reqstudio.modes.review.verdict import STOP_CAN_PASS
from reqstudio.modes.rewrite.cli import rewrite_exit_code
from reqstudio.modes.rewrite.models import (
    PatchFailure,
    ReviewIssue,
    RewriteResult,
    RewriteStopReason,
    SectionPatch,
)
from reqstudio.modes.rewrite.models import (
    ReviewerFailure as PanelFailure,
)
from reqstudio.modes.rewrite.models import ReviewRound as RewriteRound
from reqstudio.modes.rewrite.outcome import STOP_OUTCOMES as REWRITE_STOPS
from reqstudio.modes.srs.cli import srs_exit_code
from reqstudio.modes.srs.outcome import SrsEnding
from reqstudio.modes.team.cli import team_exit_code
from reqstudio.modes.team.events import AgentStats, RunFinished
from reqstudio.modes.team.events import StopReason as TeamStopReason
from reqstudio.modes.team.outcome import STOP_OUTCOMES as TEAM_STOPS
from reqstudio.outcomes import Outcome
from reqstudio.web.agent import closing_mark as agent_mark
from reqstudio.web.chat import closing_mark as chat_mark
from reqstudio.web.endings import MARKS
from reqstudio.web.review import final_text
from reqstudio.web.review.tables import failure_note
from reqstudio.web.rewrite.flow import closing_text
from reqstudio.web.srs.flow import closing_mark as srs_mark
from reqstudio.web.team import end_text

# What a mark promises a script that reads the exit code (the table in docs/command-line.md).
AGREED = {"✅": {0}, "⚠️": {4}, "❌": {1, 3}, "⏹": {130}, "🧪": {0}}


def mark_of(text: str) -> str:
    """The mark a closing message starts with."""
    mark = next((m for m in AGREED if text.startswith(m)), None)
    assert mark is not None, f"no ending mark at the start of: {text[:80]!r}"
    return mark


def agree(mark: str, code: int, what: str) -> None:
    assert code in AGREED[mark], f"{what}: the browser shows {mark}, the CLI exits {code}"


def test_every_outcome_has_a_mark_and_every_mark_one_meaning():
    assert set(MARKS) == set(Outcome)
    assert set(MARKS.values()) == set(AGREED) - {"🧪"}


def test_a_pass_of_the_offline_demo_model_is_marked_as_its_result_never_ticked(monkeypatch):
    # The 135M model's document is for trying the app out: a pass shows 🧪 and says whose
    # result it is; every other ending keeps its mark. Exit code 0 all the same.
    from types import SimpleNamespace

    from reqstudio.web import session
    from reqstudio.web.endings import ending_mark

    monkeypatch.setattr(
        session, "_runtime", SimpleNamespace(endpoint=SimpleNamespace(embedded=True))
    )
    demo = ending_mark(Outcome.PASSED)
    assert demo.startswith("🧪") and "demo model" in demo
    agree(mark_of(demo), 0, "the demo model's pass")
    assert [ending_mark(o) for o in Outcome if o is not Outcome.PASSED] == [
        MARKS[o] for o in Outcome if o is not Outcome.PASSED
    ]
    assert srs_mark("done").startswith("🧪")
    monkeypatch.setattr(
        session, "_runtime", SimpleNamespace(endpoint=SimpleNamespace(embedded=False))
    )
    assert ending_mark(Outcome.PASSED) == "✅"


# --- Review ---------------------------------------------------------------------------------

DOCUMENT = DocumentStructure(
    title="Clinic", sections=[DocumentSection(id="sec-01", title="Booking", content="x\n")]
)


def review_result(stop: str, *, failed: bool, open_high: bool) -> ReviewResult:
    finding = Improvement(
        agent_id="sec-01", category="c", issue="no number", expected="give one", issue_id="I-1"
    )
    last = ReviewRound(
        round=1,
        red_team=None if failed else RedTeamReview(improvements=[]),
        improvements=[finding.model_copy(update={"priority": "high" if open_high else "low"})],
        failures=[ReviewerFailure(reviewer="red_team", reason="500")] if failed else [],
        decision=NextAction(action="approve", reason=stop),
        reviewed_document=DOCUMENT.model_dump(mode="json"),
    )
    return ReviewResult(
        original="x", document=DOCUMENT, rounds=[last], stop_reason=stop, best_round=1
    )


def test_review_maps_every_stop_reason():
    assert set(STOP_CAN_PASS) == set(get_args(StopReason))


@pytest.mark.parametrize("stop", get_args(StopReason))
@pytest.mark.parametrize("failed", [False, True], ids=["every reviewer", "a reviewer failed"])
@pytest.mark.parametrize("open_high", [False, True], ids=["none open", "high open"])
def test_review_endings_agree(stop, failed, open_high):
    result = review_result(stop, failed=failed, open_high=open_high)
    mark, code = mark_of(final_text(result)), review_exit_code(result)
    agree(mark, code, f"review {stop}")
    if failed or open_high:
        assert code == 4, "a failed reviewer or an open high-priority finding is no pass"


@pytest.mark.parametrize("rounds", [0, 1], ids=["nothing kept", "a round kept"])
def test_a_failed_review_agrees(rounds):
    partial = review_result("max_rounds", failed=False, open_high=True)
    partial = partial.model_copy(update={"stop_reason": None, "rounds": partial.rounds[:rounds]})
    mark = mark_of(failure_note("the provider failed", partial))
    agree(mark, failure_exit_code(partial), "a review that failed")
    assert failure_exit_code(partial) == (3 if rounds else 1)


# --- Rewrite --------------------------------------------------------------------------------


def rewrite_result(stop: str, *, failed: bool) -> RewriteResult:
    issue = ReviewIssue(section_id="sec-01", description="no number")
    patch = SectionPatch(section_id="sec-01", title="Booking", before="x", after="y", issues=[])
    rounds = {
        "review_off": [],
        "no_issues": [RewriteRound(round=1)],
        "max_rounds": [RewriteRound(round=1, issues=[issue], patches=[patch])],
        "unplaced_issues": [RewriteRound(round=1, ignored=[issue])],
        "reviewer_failed": [RewriteRound(round=1)],
        "patch_failed": [RewriteRound(round=1, issues=[issue])],
    }[stop]
    if failed or stop == "reviewer_failed":
        rounds = [*rounds, RewriteRound(round=len(rounds) + 1)]
        rounds[-1].failed_reviewers = [PanelFailure(reviewer="red_team", reason="500")]
    failures = [PatchFailure(section_id="sec-01", title="Booking", reason="cut")]
    return RewriteResult(
        structured_document=DOCUMENT,
        review_rounds=rounds,
        failed_patches=failures if stop == "patch_failed" else [],
    )


def test_rewrite_maps_every_stop_reason():
    assert set(REWRITE_STOPS) == set(get_args(RewriteStopReason))


@pytest.mark.parametrize("stop", get_args(RewriteStopReason))
@pytest.mark.parametrize("failed", [False, True], ids=["every reviewer", "a reviewer failed"])
def test_rewrite_endings_agree(stop, failed):
    result = rewrite_result(stop, failed=failed)
    expected = "reviewer_failed" if failed and stop != "patch_failed" else stop
    assert result.stop_reason == expected
    mark, code = mark_of(closing_text(result, 1.0)), rewrite_exit_code(result)
    agree(mark, code, f"rewrite {result.stop_reason}")
    if failed:
        assert not result.complete and code != 0


# --- Team -----------------------------------------------------------------------------------


def test_team_maps_every_stop_reason():
    assert set(TEAM_STOPS) == set(get_args(TeamStopReason))


@pytest.mark.parametrize("reason", get_args(TeamStopReason))
@pytest.mark.parametrize("failed", [False, True], ids=["every agent", "an agent failed"])
def test_team_endings_agree(reason, failed):
    agents = [AgentStats(agent_id="root", role_name="root")]
    if failed:  # another agent failed along the way: root heard of it
        agents.append(AgentStats(agent_id="agent-1", role_name="analyst"))
    done = RunFinished(reason=reason, agents=agents, limits_hit=["time"] if failed else [])
    agree(mark_of(end_text(done)), team_exit_code(done), f"team {reason}")


def test_a_team_run_without_an_ending_fails():
    assert team_exit_code(None) == 1


# --- Agent, Chat, SRS -----------------------------------------------------------------------


@pytest.mark.parametrize("ending", get_args(AgentEnding))
def test_agent_endings_agree(ending):
    agree(agent_mark(ending), agent_exit_code(ending), f"agent {ending}")


def test_the_agents_endings_come_from_its_events():
    from reqstudio.modes.agent.events import Failed

    assert ending_of(Failed(message="time is up", limit="time")) == "time_limit"
    assert agent_exit_code(ending_of(Failed(message="time is up", limit="time"))) == 4
    assert ending_of(Failed(message="500")) == "failed"
    assert ending_of(None, echoed=True) == "no_answer"
    assert ending_of(None) == "answered"


@pytest.mark.parametrize("ending", get_args(ChatEnding))
def test_chat_endings_agree(ending):
    agree(chat_mark(ending), chat_exit_code(ending), f"chat {ending}")


@pytest.mark.parametrize("ending", get_args(SrsEnding))
def test_srs_endings_agree(ending):
    agree(srs_mark(ending), srs_exit_code(ending), f"srs {ending}")
