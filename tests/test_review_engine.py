"""Review mode's engine through the scripted server: each stop rule, the authors' scope,
`avoid_changes_to` in the author's prompt, the three reviewers running at once, unreadable
reviewers, failing authors, interrupted runs and pauses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from reqstudio.document_model import parse_markdown
from reqstudio.modes.review import ReviewRequest, determine_next_action, run_review
from reqstudio.modes.review.events import (
    AuthorToken,
    DecisionMade,
    Paused,
    ReviewerFailed,
    RunFailed,
    RunFinished,
)
from reqstudio.modes.review.models import Improvement
from tests.pure_documents import DOCUMENTS as PURE_DOCUMENTS
from tests.review_support import (
    AUTHOR,
    BLUE,
    CLIENT,
    DOCUMENT,
    DOCUMENT_ZH,
    JUDGE,
    RED,
    author_reply,
    blue_reply,
    client_reply,
    improvement,
    judge_reply,
    panel,
    red_reply,
    requests_for,
)
from tests.scripted_server import Reply

NEW_BOOKING = (
    "Owners book a visit with a vet. Free slots are listed within 2 s for 95 % of searches.\n"
)


async def run(factory, request: ReviewRequest, **kw):
    events = [event async for event in run_review(request, factory, **kw)]
    return events, events[-1]


def sections(markdown: str) -> dict[str, str]:
    return {s.id: s.render() for s in parse_markdown(markdown).sections}


def round_fixing_booking_and_reminders(**panel_changes) -> list:
    """A round finding high-priority issues in sections 3 and 4, and their authors' revisions."""
    return [
        *panel(improvement("sec-03"), improvement("sec-04"), **panel_changes),
        author_reply("sec-03", NEW_BOOKING),
        author_reply("sec-04", "Reminders go out by SMS 24 h before a visit.\n"),
    ]


async def test_no_high_priority_issue_stops_with_quality_sufficient(factory, llm_server):
    llm_server.script(*panel(improvement("sec-03", "medium"), improvement("sec-04", "low")))
    _events, last = await run(factory, ReviewRequest(document=DOCUMENT))
    assert isinstance(last, RunFinished)
    result = last.result
    assert result.stop_reason == "quality_sufficient"
    assert len(result.rounds) == 1
    assert not requests_for(llm_server, AUTHOR), "no author runs when nothing high is left"
    assert result.improved_markdown == DOCUMENT
    assert result.trajectory_text("zh") == "第1轮发现2个问题（无高优先级） → 完成"


async def test_a_round_revises_only_the_sections_in_focus(factory, llm_server):
    llm_server.script(
        *panel(
            improvement("sec-03"),
            improvement("sec-04", "medium"),
            keep=[("sec-03", "booking_flow")],
        ),
        author_reply("sec-03", NEW_BOOKING),
        *panel(improvement("sec-04", "low")),
    )
    events, last = await run(factory, ReviewRequest(document=DOCUMENT))
    assert isinstance(last, RunFinished), last
    result = last.result
    assert result.stop_reason == "quality_sufficient"
    assert [r.total_improvements for r in result.rounds] == [2, 1]
    before, after = sections(DOCUMENT), sections(result.improved_markdown)
    assert after["sec-03"] == "## 2. Booking\n\n" + NEW_BOOKING + "\n"
    for untouched in ("sec-01", "sec-02", "sec-04"):
        assert after[untouched] == before[untouched]
    # Everything but the revised section's body is byte for byte the original.
    assert result.improved_markdown == DOCUMENT.replace(
        "Owners book a visit with a vet. The search for free slots is fast.\n", NEW_BOOKING
    )
    # Only sec-03 had a high-priority issue: one author, with its feedback.
    prompts = requests_for(llm_server, AUTHOR)
    assert len(prompts) == 1
    assert '<section id="sec-03"' in prompts[0]
    assert "keep: booking_flow" in prompts[0]
    assert '"avoid_changes_to": [\n  "booking_flow"\n ]' in prompts[0]
    assert "free slots listed within 2 s" in prompts[0]  # the red team's `expected`
    revision = result.rounds[0].revisions[0]
    assert revision.agent_id == "sec-03" and revision.changed
    assert "".join(e.text for e in events if isinstance(e, AuthorToken)) == NEW_BOOKING
    assert result.improvement_trajectory["round_1"]["focus"] == ["2. Booking"]
    assert result.improvement_trajectory["round_2"]["status"] == "converged"
    assert (
        result.trajectory_text("zh")
        == "第1轮发现2个问题 → 修正；第2轮发现1个问题（无高优先级） → 完成"
    )
    feedback = result.rounds[0].feedback["sec-03"]
    assert feedback.iteration_context.round == 1
    assert feedback.specific_tasks[0].priority == "high"
    assert "sec-04" in result.rounds[0].feedback  # it had work (medium), but was not in focus


async def test_issue_count_that_does_not_fall_stops_with_no_convergence(factory, llm_server):
    llm_server.script(
        *round_fixing_booking_and_reminders(),
        *panel(improvement("sec-03"), improvement("sec-02")),
    )
    _, last = await run(factory, ReviewRequest(document=DOCUMENT, max_rounds=5))
    assert last.result.stop_reason == "no_convergence"
    assert len(last.result.rounds) == 2
    assert last.result.trajectory_text("en").endswith(
        "round 2 found 2 issues → stopped: the number of issues did not fall"
    )


async def test_a_falling_score_stops_with_score_declined(factory, llm_server):
    llm_server.script(
        *round_fixing_booking_and_reminders(score=70),
        # A new high-priority issue (a repeated one would stop with no_new_high_priority).
        *panel(improvement("sec-02"), score=60),
    )
    _, last = await run(factory, ReviewRequest(document=DOCUMENT, max_rounds=5))
    assert last.result.stop_reason == "score_declined"
    assert [r.score for r in last.result.rounds] == [70, 60]


async def test_the_round_limit_stops_with_max_rounds(factory, llm_server):
    llm_server.script(
        *round_fixing_booking_and_reminders(),
        *panel(improvement("sec-02")),  # new, so the round limit is what stops
    )
    _, last = await run(factory, ReviewRequest(document=DOCUMENT, max_rounds=2))
    result = last.result
    assert result.stop_reason == "max_rounds"
    assert len(result.rounds) == 2
    assert result.rounds[-1].decision.action == "approve"
    assert not result.rounds[-1].revisions  # the last round's findings are reported, not fixed


async def test_red_blue_and_client_review_at_the_same_time(factory, llm_server):
    llm_server.script(
        red_reply(improvement("sec-03", "low"), delay=0.5),
        blue_reply(delay=0.5),
        client_reply(delay=0.5),
        judge_reply(),
    )
    _, last = await run(factory, ReviewRequest(document=DOCUMENT))
    assert isinstance(last, RunFinished)
    spans = {}
    for request, span in zip(llm_server.requests, llm_server.timeline, strict=True):
        text = "\n".join(str(m.get("content") or "") for m in request["messages"])
        for name, marker in (("red", RED), ("blue", BLUE), ("client", CLIENT), ("judge", JUDGE)):
            if marker in text:
                spans[name] = span
    reviewers = [spans["red"], spans["blue"], spans["client"]]
    # All three were being answered at one moment: each arrived before any of them ended.
    assert max(s["received"] for s in reviewers) < min(s["answered"] for s in reviewers)
    # The judge reads the three: it starts after the last of them ended.
    assert spans["judge"]["received"] >= max(s["answered"] for s in reviewers)


async def test_an_unreadable_reviewer_is_named_and_the_round_goes_on(
    factory, llm_server, monkeypatch
):
    garbage = [Reply(content="I think the document is fine overall!", match=CLIENT)] * 3
    llm_server.script(
        red_reply(improvement("sec-03", "medium")), blue_reply(), *garbage, judge_reply()
    )
    events, last = await run(factory, ReviewRequest(document=DOCUMENT))
    assert isinstance(last, RunFinished)
    failed = [e for e in events if isinstance(e, ReviewerFailed)]
    assert [e.reviewer for e in failed] == ["client"]
    assert "not valid JSON after 3 attempts" in failed[0].reason
    assert failed[0].text("zh").startswith("模型多次返回无法解析或不符合要求的 JSON（3 次尝试）")
    record = last.result.rounds[0]
    assert record.client is None and record.red_team is not None and record.judge is not None
    assert [f.reviewer for f in record.failures] == ["client"]
    # what the user reads at the end, in Chinese: the round, the reviewer and why, in Chinese
    import reqstudio.web.review.tables
    import reqstudio.web.texts

    monkeypatch.setattr(reqstudio.web.texts, "lang", lambda: "zh")
    monkeypatch.setattr(reqstudio.web.review.tables, "lang", lambda: "zh")
    said = reqstudio.web.review.tables.final_text(last.result)
    assert "第 1 轮 甲方：模型多次返回无法解析或不符合要求的 JSON（3 次尝试）" in said
    assert len(requests_for(llm_server, CLIENT)) == 3  # the shared re-ask path, then given up
    judge_prompt = requests_for(llm_server, JUDGE)[0]
    assert '"unavailable": "the model\'s answer was not valid JSON' in judge_prompt


async def test_a_failing_author_keeps_its_section_and_says_so(factory, llm_server):
    llm_server.script(
        *panel(improvement("sec-03"), improvement("sec-04")),
        author_reply("sec-03", NEW_BOOKING),
        *[Reply(fault="500", match='<section id="sec-04"')] * 5,
        *panel(improvement("sec-04", "low")),
    )
    _, last = await run(factory, ReviewRequest(document=DOCUMENT))
    result = last.result
    revisions = {r.agent_id: r for r in result.rounds[0].revisions}
    assert revisions["sec-04"].failed and not revisions["sec-04"].changed
    assert revisions["sec-03"].changed
    assert sections(result.improved_markdown)["sec-04"] == sections(DOCUMENT)["sec-04"]


async def test_an_interrupted_run_keeps_its_finished_rounds_and_resumes(
    factory, llm_server, tmp_path
):
    llm_server.script(
        *round_fixing_booking_and_reminders(),
        # Round 2: the red team and the judge never answer (every try a 500).
        *[Reply(fault="500", match=RED)] * 3,
        blue_reply(),
        client_reply(),
        *[Reply(fault="500", match=JUDGE)] * 3,
    )
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "review.db")) as saver:
        _, last = await run(
            factory, ReviewRequest(document=DOCUMENT), checkpointer=saver, thread_id="t1"
        )
        assert isinstance(last, RunFailed)
        assert "neither the red team nor the judge" in last.message
        # the Chinese message is Chinese throughout, the reviewers named in Chinese
        assert last.text("zh").startswith("第 2 轮：红队和评委的回答都无法读取（红队、评委）")
        assert not re.search(r"[A-Za-z]{3,}", last.text("zh")), last.text("zh")
        kept = last.partial
        assert len(kept.rounds) == 1 and kept.rounds[0].revisions
        assert NEW_BOOKING in kept.improved_markdown
        llm_server.script(*panel(improvement("sec-02", "low")))
        _, resumed = await run(factory, None, checkpointer=saver, thread_id="t1", resume=True)
    assert isinstance(resumed, RunFinished), resumed
    assert resumed.result.stop_reason == "quality_sufficient"
    assert [r.round for r in resumed.result.rounds] == [1, 2]
    assert NEW_BOOKING in resumed.result.improved_markdown


async def test_pause_after_each_round_comes_before_the_authors(factory, llm_server):
    # The pause lists the round's findings before any author revises.
    llm_server.script(
        *panel(improvement("sec-03"), improvement("sec-04", "medium")),
        author_reply("sec-03", NEW_BOOKING),
    )
    _, paused = await run(factory, ReviewRequest(document=DOCUMENT, pause_after_round=True))
    assert isinstance(paused, Paused) and paused.round == 1
    assert paused.focus_on == ["sec-03"]
    assert [(f.issue_id, f.agent_id, f.priority) for f in paused.findings] == [
        ("I-1", "sec-03", "high"),
        ("I-2", "sec-04", "medium"),
    ]
    assert not requests_for(llm_server, AUTHOR), "no author before the user's word"
    assert NEW_BOOKING not in paused.document.to_markdown()


async def test_pause_resumes_with_the_edit(factory, llm_server, tmp_path):
    edited = "Pet owners (18+) and vets of the clinic use the system.\n"
    llm_server.script(
        *panel(improvement("sec-03"), improvement("sec-04", "medium")),
        author_reply("sec-03", NEW_BOOKING),
        *panel(improvement("sec-04", "low")),
    )
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "review.db")) as saver:
        request = ReviewRequest(document=DOCUMENT, pause_after_round=True)
        _, paused = await run(factory, request, checkpointer=saver, thread_id="p")
        assert isinstance(paused, Paused)
        _, last = await run(
            factory, None, checkpointer=saver, thread_id="p", resume=True, edits={"sec-02": edited}
        )
    assert isinstance(last, RunFinished), last
    markdown = last.result.improved_markdown
    assert "## 1. Users\n\n" + edited + "\n## 2. Booking" in markdown
    assert last.result.rounds[0].edited_by_user == ["sec-02"]
    # Round 2's reviewers saw the user's edit.
    assert edited.strip() in requests_for(llm_server, RED)[1]


async def test_chinese_documents_get_chinese_instructions(factory, llm_server):
    llm_server.script(*panel(improvement("sec-02", "low")))
    events, last = await run(factory, ReviewRequest(document=DOCUMENT_ZH))
    assert isinstance(last, RunFinished)
    assert "Chinese (简体中文)" in requests_for(llm_server, RED)[0]
    decision = next(e for e in events if isinstance(e, DecisionMade))
    assert decision.decision.reason == "quality_sufficient"
    assert last.result.improved_markdown == DOCUMENT_ZH


def test_each_stop_rule_is_named():
    high = Improvement(agent_id="sec-01", category="c", issue="i", expected="e", priority="high")
    low = high.model_copy(update={"priority": "low"})
    assert determine_next_action([low], 1, []).reason == "quality_sufficient"
    history = [{"total_improvements": 1, "score": 70}]
    assert determine_next_action([high], 2, history).reason == "no_convergence"
    history = [{"total_improvements": 3, "score": 70}]
    assert determine_next_action([high], 2, history, score=65).reason == "score_declined"
    assert determine_next_action([high], 3, history, score=75).reason == "max_rounds"
    going_on = determine_next_action([high, low], 2, history, max_rounds=3, score=75)
    assert going_on.action == "iterate" and going_on.focus_on == ["sec-01"]


@pytest.mark.parametrize("path", PURE_DOCUMENTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_documents_round_trip_unchanged(path: Path):
    text = path.read_text(encoding="utf-8")
    document = parse_markdown(text)
    assert len(document.sections) > 1 or "\n#" not in text
    assert document.to_markdown() == text


def test_a_converted_document_without_markdown_headings_is_cut_at_numbered_headings():
    text = (
        "E-Store SRS\n\nRevision history\n\n"
        "1.1   Purpose    5\n\n"  # a table-of-contents line: not a heading
        "2 Overall Description\n\nThe store sells computers.\n\n"
        "1 The system shall display all products.\n\n"  # a numbered sentence: not a heading
        "3.1 Functionality\n\nCustomers configure products\n"
    )
    document = parse_markdown(text, default_title="e-store")
    assert [(s.title, s.level) for s in document.sections] == [
        ("e-store", 1),
        ("2 Overall Description", 1),
        ("3.1 Functionality", 2),
    ]
    assert "1 The system shall display all products." in document.sections[1].content
    assert document.to_markdown() == text
    revised = document.with_content(
        "sec-02", "The store sells computers by card.\n\n1 The system shall display all products."
    )
    assert revised.to_markdown() == text.replace(
        "The store sells computers.", "The store sells computers by card."
    )
