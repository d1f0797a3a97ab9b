"""Rewrite mode's engine (seed 003) through the real client and a scripted server over HTTP."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reqstudio.calls import policy_for
from reqstudio.modes.rewrite import (
    ClarificationItem,
    RewriteChain,
    RewriteOptions,
    RewriteRequest,
    RewriteStageError,
)
from tests import rewrite_support as rewrite
from tests.scripted_server import Reply

ROOT = Path(__file__).resolve().parent.parent
REQUEST = rewrite.english_request()


def chain(factory, **options) -> RewriteChain:
    return RewriteChain(factory, options=RewriteOptions(**options))


async def test_outline_is_parsed_into_the_document_model(factory, llm_server):
    llm_server.script(rewrite.outline_reply(), *rewrite.fill_replies(), rewrite.review_reply())
    result = await chain(factory).ainvoke(REQUEST)
    document = result.structured_document
    assert document.title == "Pet Clinic Booking System"
    assert [(s.id, s.title, s.goal, s.level, s.order) for s in document.sections] == [
        (f"sec-0{i + 1}", title, goal, level, i)
        for i, (title, goal, level) in enumerate(rewrite.SECTIONS)
    ]
    assert [s.content for s in document.sections] == rewrite.BODIES
    assert result.rewritten_content == document.to_markdown()
    assert result.rewritten_content.startswith("# Pet Clinic Booking System\n\n## Overview\n\n")
    dumped = result.model_dump(mode="json")
    assert dumped["rewritten_content"] == result.rewritten_content  # serialised from the document
    assert dumped["structured_document"]["sections"][1]["goal"] == rewrite.SECTIONS[1][1]
    assert result.rounds == 1 and result.issues_fixed == 0
    assert result.usage["calls"] == 5
    assert llm_server.pending == 0


async def test_each_filling_call_carries_exactly_the_earlier_sections_and_its_goal(
    factory, llm_server
):
    llm_server.script(rewrite.outline_reply(), *rewrite.fill_replies(), rewrite.review_reply())
    await chain(factory).ainvoke(REQUEST)
    fills = rewrite.prompts_for(llm_server, rewrite.FILL)
    assert len(fills) == 3
    for index, prompt in enumerate(fills):
        assert rewrite.ORIGINAL_EN.strip() in prompt  # the whole background
        assert all(c["answer"] in prompt for c in rewrite.CLARIFICATIONS)
        assert f"Section {index + 1}/3: {rewrite.SECTIONS[index][0]}" in prompt
        assert f"Goal: {rewrite.SECTIONS[index][1]}" in prompt
        for earlier in range(index):
            assert (
                f"## {rewrite.SECTIONS[earlier][0]}\n\n{rewrite.BODIES[earlier].strip()}" in prompt
            )
        for later in range(index, 3):
            assert rewrite.BODIES[later].strip() not in prompt
            if later > index:
                assert rewrite.SECTIONS[later][1] not in prompt  # no other section's goal


async def test_a_review_issue_patches_only_its_section(factory, llm_server):
    patched_body = "Owners pick a vet and a free slot, and see the clinic's opening hours.\n"
    llm_server.script(
        rewrite.outline_reply(),
        *rewrite.fill_replies(),
        rewrite.review_reply(("sec-02", "Opening hours are missing.")),
        rewrite.patch_reply(patched_body),
        rewrite.review_reply(),
    )
    handler = rewrite.RecordingHandler()
    result = await chain(factory).ainvoke(REQUEST, handler)
    sections = result.structured_document.sections
    assert [s.content for s in sections] == [rewrite.BODIES[0], patched_body, rewrite.BODIES[2]]
    unpatched = result.structured_document.with_content("sec-02", rewrite.BODIES[1]).to_markdown()
    assert result.rewritten_content.replace(patched_body, rewrite.BODIES[1]) == unpatched
    patch_prompt = rewrite.prompts_for(llm_server, rewrite.PATCH)
    assert len(patch_prompt) == 1
    assert "Opening hours are missing." in patch_prompt[0]
    assert "[sec-02] Booking" in patch_prompt[0]
    assert [r.round for r in result.review_rounds] == [1, 2]
    [patch] = result.review_rounds[0].patches
    assert (patch.section_id, patch.before, patch.after) == (
        "sec-02",
        rewrite.BODIES[1],
        patched_body,
    )
    assert result.issues_fixed == 1
    assert (
        len(rewrite.prompts_for(llm_server, rewrite.REVIEW)) == 2
    )  # the review ran again after the patch
    assert (
        "opening hours" in rewrite.prompts_for(llm_server, rewrite.REVIEW)[1]
    )  # on the patched draft


async def test_independent_sections_are_patched_concurrently(factory, llm_server):
    """Both patch replies wait at a gate the test opens only once both patch requests have
    reached the server: patched one after the other, the second request never comes."""
    llm_server.script(
        rewrite.outline_reply(),
        *rewrite.fill_replies(),
        rewrite.review_reply(("sec-01", "Too vague."), ("sec-03", "SMS provider unnamed.")),
        rewrite.patch_reply("Overview, sharper.\n", hold="patches"),
        rewrite.patch_reply("Payment by card; SMS via the clinic's provider.\n", hold="patches"),
        rewrite.review_reply(),
    )
    run = asyncio.create_task(chain(factory).ainvoke(REQUEST, rewrite.RecordingHandler()))
    deadline = time.monotonic() + 30
    while len(rewrite.prompts_for(llm_server, rewrite.PATCH)) < 2:
        assert not run.done(), run.result()
        assert time.monotonic() < deadline, "no second patch request while the first waited"
        await asyncio.sleep(0.02)
    llm_server.open_gate("patches")
    result = await run
    contents = [s.content for s in result.structured_document.sections]
    assert contents[1] == rewrite.BODIES[1]
    assert contents[0] == "Overview, sharper.\n"
    assert result.issues_fixed == 2


async def test_review_loop_stops_at_the_limit(factory, llm_server):
    llm_server.script(rewrite.outline_reply(), *rewrite.fill_replies())
    for n in range(2):
        llm_server.script(
            rewrite.review_reply(("sec-03", f"Still unclear ({n}).")),
            rewrite.patch_reply(f"Try {n}.\n"),
        )
    result = await chain(factory, max_review_rounds=2).ainvoke(REQUEST)
    assert len(rewrite.prompts_for(llm_server, rewrite.REVIEW)) == 2
    assert len(rewrite.prompts_for(llm_server, rewrite.PATCH)) == 2
    assert result.rounds == 2
    assert result.structured_document.sections[2].content == "Try 1.\n"
    assert llm_server.pending == 0


def test_review_rounds_default_to_the_setting(factory):
    assert factory.settings.rewrite_max_review_rounds == 3
    assert RewriteChain(factory).options.max_review_rounds == 3


async def test_review_switched_off_with_zero_rounds(factory, llm_server):
    llm_server.script(rewrite.outline_reply(), *rewrite.fill_replies())
    handler = rewrite.RecordingHandler()
    result = await chain(factory, max_review_rounds=0).ainvoke(REQUEST, handler)
    assert rewrite.prompts_for(llm_server, rewrite.REVIEW) == []
    assert result.rounds == 0
    assert handler.lines()[-2:] == ["start:review_revision", "end:review_revision"]


async def test_issue_naming_no_section_is_not_patched(factory, llm_server):
    llm_server.script(
        rewrite.outline_reply(),
        *rewrite.fill_replies(),
        rewrite.review_reply(("sec-99", "Nowhere.")),
        rewrite.placement_reply((1, "none")),
        rewrite.review_reply(),
    )
    result = await chain(factory).ainvoke(REQUEST)
    assert rewrite.prompts_for(llm_server, rewrite.PATCH) == []
    assert (
        len(rewrite.prompts_for(llm_server, rewrite.PLACE)) == 1
    )  # asked again once, with the valid ids
    assert result.review_rounds[0].ignored[0].section_id == "sec-99"
    assert [s.content for s in result.structured_document.sections] == rewrite.BODIES


async def test_format_repair_succeeds_on_the_second_answer(factory, llm_server):
    llm_server.script(
        Reply(content="Here is the outline: Overview, Booking, Payment.", match=rewrite.OUTLINE),
        rewrite.outline_reply(),
        *rewrite.fill_replies(),
        rewrite.review_reply(),
    )
    result = await chain(factory).ainvoke(REQUEST)
    assert len(result.structured_document.sections) == 3
    outline_calls = [r for r in llm_server.requests if rewrite.OUTLINE in str(r["messages"][0])]
    assert len(outline_calls) == 2
    repair = outline_calls[1]["messages"]
    assert rewrite.OUTLINE in repair[0]["content"]  # the original request goes back
    assert repair[1]["content"] == "Here is the outline: Overview, Booking, Payment."
    assert "could not be used" in repair[2]["content"]  # with what was wrong


async def test_outline_stage_fails_by_name_after_the_repair_limit(factory, llm_server):
    tries = policy_for("RewriteOutline", factory.settings).attempts
    assert tries == 3  # the first answer and two repairs
    llm_server.script(
        *[Reply(content="no JSON, sorry", match=rewrite.OUTLINE) for _ in range(tries)]
    )
    with pytest.raises(RewriteStageError) as failure:
        await chain(factory).ainvoke(REQUEST)
    assert failure.value.stage == "outline_generation"
    assert "outline_generation" in str(failure.value)
    assert "3 attempts" in failure.value.reason
    assert len(rewrite.prompts_for(llm_server, rewrite.OUTLINE)) == 3
    assert failure.value.partial is None
    assert (
        rewrite.prompts_for(llm_server, rewrite.FILL) == []
    )  # nothing written from a failed outline


async def test_review_stage_fails_by_name_and_keeps_the_draft(factory, llm_server):
    llm_server.script(
        rewrite.outline_reply(),
        *rewrite.fill_replies(),
        *[Reply(content="LGTM", match=rewrite.REVIEW) for _ in range(3)],
    )
    with pytest.raises(RewriteStageError) as failure:
        await chain(factory).ainvoke(REQUEST)
    assert failure.value.stage == "review_revision"
    assert [s.content for s in failure.value.partial.sections] == rewrite.BODIES


async def test_a_cut_stream_is_retried_not_accepted(factory, llm_server):
    full = "Owners pick a vet and a free slot; the booking is confirmed by e-mail at once.\n"
    llm_server.script(
        rewrite.outline_reply(),
        Reply(content=rewrite.BODIES[0], match=rewrite.FILL),
        Reply(content=full, match=rewrite.FILL, fault="cut", chunk_chars=10),
        Reply(content=full, match=rewrite.FILL),
        Reply(content=rewrite.BODIES[2], match=rewrite.FILL),
        rewrite.review_reply(),
    )
    handler = rewrite.RecordingHandler()
    result = await chain(factory).ainvoke(REQUEST, handler)
    assert result.structured_document.sections[1].content == full
    assert handler.resets == ["sec-02"]  # the streamed part was discarded
    assert handler.tokens["sec-02"] == full
    assert len(rewrite.prompts_for(llm_server, rewrite.FILL)) == 4


async def test_a_stream_cut_on_every_attempt_fails_the_filling_stage(factory, llm_server):
    attempts = policy_for("RewriteFill", factory.settings).attempts
    assert attempts == 5
    llm_server.script(
        rewrite.outline_reply(),
        Reply(content=rewrite.BODIES[0], match=rewrite.FILL),
        *[
            Reply(content=rewrite.BODIES[1] * 3, match=rewrite.FILL, fault="cut")
            for _ in range(attempts)
        ],
    )
    with pytest.raises(RewriteStageError) as failure:
        await chain(factory).ainvoke(REQUEST)
    error = failure.value
    assert (error.stage, error.section_id) == ("content_filling", "sec-02")
    assert [s.content for s in error.partial.sections] == [rewrite.BODIES[0], "", ""]
    assert len(rewrite.prompts_for(llm_server, rewrite.FILL)) == 1 + attempts


async def test_callbacks_are_called_in_order_with_progress_messages(factory, llm_server):
    llm_server.script(rewrite.outline_reply(), *rewrite.fill_replies(), rewrite.review_reply())
    handler = rewrite.RecordingHandler()
    await chain(factory).ainvoke(REQUEST, handler)
    assert handler.lines() == [
        "start:outline_generation",
        "end:outline_generation",
        "start:content_filling",
        "progress:content_filling:Writing section 1/3...",
        "progress:content_filling:Writing section 2/3...",
        "progress:content_filling:Writing section 3/3...",
        "end:content_filling",
        "start:review_revision",
        "progress:review_revision:Review round 1...",
        "progress:review_revision:Review round 1: 0 issue(s) found",
        "end:review_revision",
    ]
    assert handler.tokens == {f"sec-0{i + 1}": rewrite.BODIES[i] for i in range(3)}
    outline_end = handler.calls[1][3]
    assert [s.title for s in outline_end["document"].sections] == [
        t for t, _, _ in rewrite.SECTIONS
    ]


async def test_async_handlers_are_awaited(factory, llm_server):
    llm_server.script(rewrite.outline_reply(), *rewrite.fill_replies(), rewrite.review_reply())
    seen: list[str] = []

    class AsyncHandler:
        async def on_stage_start(self, stage_name, **kwargs):
            seen.append(stage_name)

    await chain(factory).ainvoke(REQUEST, AsyncHandler())
    assert seen == ["outline_generation", "content_filling", "review_revision"]


async def test_a_chinese_original_gets_chinese_prompts_and_sections(factory, llm_server):
    llm_server.script(
        rewrite.outline_reply(
            [("概述", "说明系统用途。", 2), ("预约", "说明预约流程。", 2)],
            title="宠物医院预约系统",
            match=rewrite.OUTLINE_ZH,
        ),
        *rewrite.fill_replies(
            ["系统供宠物主人在线预约。\n", "主人选择兽医和时段。\n"], match=rewrite.FILL_ZH
        ),
        rewrite.review_reply(match=rewrite.REVIEW_ZH),
    )
    request = RewriteRequest(
        original_content=rewrite.ORIGINAL_ZH,
        clarifications=[ClarificationItem(question="如何支付？", answer="仅到店刷卡。")],
    )
    result = await chain(factory).ainvoke(request)
    assert result.rewritten_content.startswith("# 宠物医院预约系统\n\n## 概述\n\n系统供宠物主人")
    assert result.structured_document.metadata["language"] == "zh"
    fills = rewrite.prompts_for(llm_server, rewrite.FILL_ZH)
    assert "答：仅到店刷卡。" in fills[0]
    assert "第 2/2 节：预约" in fills[1] and "## 概述\n\n系统供宠物主人在线预约。" in fills[1]
    assert rewrite.prompts_for(llm_server, rewrite.FILL) == []


INVOKE_TWICE = """
import sys
from reqstudio.modes.rewrite import RewriteChain, RewriteRequest
from reqstudio.llm import Endpoint, ModelFactory
from reqstudio.settings import load_settings

url = sys.argv[1]
settings = load_settings(OPENAI_BASE_URL=url, OPENAI_API_KEY="sk-test", OPENAI_MODEL="m")
chain = RewriteChain(ModelFactory(settings, Endpoint(url, "sk-test", "m")))
for _ in range(2):
    result = chain.invoke(RewriteRequest(original_content="Owners book visits online."))
    print(len(result.structured_document.sections))
"""


def test_invoke_works_twice_in_one_process(llm_server, tmp_path):
    # A process of its own: the synchronous entry point owns its event loop there.
    for _ in range(2):
        llm_server.script(rewrite.outline_reply(), *rewrite.fill_replies(), rewrite.review_reply())
    done = subprocess.run(
        [sys.executable, "-c", INVOKE_TWICE, llm_server.base_url],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["3", "3"]


def test_request_refuses_an_empty_original():
    with pytest.raises(ValueError, match="empty"):
        RewriteRequest(original_content="  \n", clarifications=[])


async def test_questions_answered_one_at_a_time_reach_the_background(factory, llm_server):
    from reqstudio.modes.rewrite.questions import Reply as UserReply
    from reqstudio.modes.rewrite.questions import ask_one_at_a_time, propose_questions
    from tests.rewrite_support import QUESTIONS, fenced

    asked = ["How do owners pay?", "Which vets use it?", "When are reminders sent?", "Extra?"]
    llm_server.script(Reply(content=fenced({"questions": asked}), match=QUESTIONS))
    questions = await propose_questions(rewrite.ORIGINAL_EN, factory, max_questions=3)
    assert questions == asked[:3]  # at most N
    assert "at most 3 clarifying" in rewrite.prompts_for(llm_server, QUESTIONS)[0]

    replies = iter(
        [
            UserReply("answer", "By card at the clinic."),
            UserReply("skip"),
            UserReply("answer", "SMS, a day before."),
        ]
    )
    seen: list[tuple[int, int, str]] = []

    async def ask(index: int, total: int, question: str) -> UserReply:
        seen.append((index, total, question))
        return next(replies)

    outcome = await ask_one_at_a_time(questions, ask)
    assert seen == [(i + 1, 3, q) for i, q in enumerate(questions)]
    assert outcome.skipped == ["Which vets use it?"]

    llm_server.script(rewrite.outline_reply(), *rewrite.fill_replies(), rewrite.review_reply())
    await chain(factory).ainvoke(
        RewriteRequest(original_content=rewrite.ORIGINAL_EN, clarifications=outcome.clarifications)
    )
    background = rewrite.prompts_for(llm_server, rewrite.FILL)[0]
    assert "1. Q: How do owners pay?\n   A: By card at the clinic." in background
    assert "2. Q: When are reminders sent?\n   A: SMS, a day before." in background
    assert "Which vets use it?" not in background  # skipped


async def test_stop_asking_leaves_the_rest_unasked():
    from reqstudio.modes.rewrite.questions import Reply as UserReply
    from reqstudio.modes.rewrite.questions import ask_one_at_a_time

    replies = iter([UserReply("answer", "Yes."), UserReply("stop")])

    async def ask(index, total, question):
        return next(replies)

    outcome = await ask_one_at_a_time(["A?", "B?", "C?"], ask)
    assert [c.question for c in outcome.clarifications] == ["A?"]
    assert outcome.not_asked == ["B?", "C?"]


async def test_another_reviewer_plugs_in_and_only_named_sections_are_patched(factory, llm_server):
    from reqstudio.modes.rewrite import ReviewInput
    from reqstudio.modes.rewrite.models import ReviewIssue

    class PanelLike:
        name = "panel"

        def __init__(self) -> None:
            self.seen: list[int] = []

        async def review(self, draft: ReviewInput, callbacks) -> list[ReviewIssue]:
            self.seen.append(draft.round)
            if draft.round == 1:
                return [ReviewIssue(section_id="sec-03", description="Card only, per answer 1.")]
            return []

    panel = PanelLike()
    llm_server.script(
        rewrite.outline_reply(),
        *rewrite.fill_replies(),
        rewrite.patch_reply("Card at the clinic only.\n"),
    )
    result = await RewriteChain(factory, reviewer=panel).ainvoke(REQUEST)
    assert panel.seen == [1, 2]
    assert [s.content for s in result.structured_document.sections] == [
        rewrite.BODIES[0],
        rewrite.BODIES[1],
        "Card at the clinic only.\n",
    ]


def test_panel_setting_picks_review_modes_four_perspective_panel(settings, factory):
    from reqstudio.modes.review.rewrite_panel import PanelReviewer

    panel_settings = settings.model_copy(update={"rewrite_reviewer": "panel"})
    panel_factory = type(factory)(panel_settings, factory.endpoint)
    assert isinstance(RewriteChain(panel_factory).reviewer, PanelReviewer)


async def test_an_empty_section_fails_the_filling_stage_with_a_plain_reason(factory, llm_server):
    llm_server.script(
        rewrite.outline_reply(), *[Reply(content="\n\n", match=rewrite.FILL) for _ in range(5)]
    )
    with pytest.raises(RewriteStageError) as failure:
        await chain(factory).ainvoke(REQUEST)
    assert (failure.value.stage, failure.value.section_id) == ("content_filling", "sec-01")
    assert failure.value.reason == "the model's answer was empty (no text), also after 5 tries"
    assert failure.value.finish_reason == "empty"
    assert (
        len(rewrite.prompts_for(llm_server, rewrite.FILL)) == 5
    )  # retried within the policy, not accepted


async def test_a_section_cut_at_the_length_limit_is_continued_not_shortened(factory, llm_server):
    first, rest = "Owners pick a vet and a free slot; ", "the booking is confirmed by e-mail.\n"
    llm_server.script(
        rewrite.outline_reply(),
        Reply(content=rewrite.BODIES[0], match=rewrite.FILL),
        Reply(content=first, match=rewrite.FILL, finish_reason="length"),
        Reply(content=rest, match="Continue exactly where it stopped"),
        Reply(content=rewrite.BODIES[2], match=rewrite.FILL),
        rewrite.review_reply(),
    )
    result = await chain(factory).ainvoke(REQUEST, rewrite.RecordingHandler())
    assert result.structured_document.sections[1].content.strip() == (first + rest).strip()
