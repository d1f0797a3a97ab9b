"""Rewrite mode against a provider that misbehaves on purpose:
content_filter and empty answers, failed patches, misaddressed review issues, a context that
is too small, and every stage ending visibly. Real HTTP to the scripted server."""

from __future__ import annotations

import asyncio

import pytest

from reqstudio.llm import ModelFactory
from reqstudio.modes.rewrite import (
    RewriteChain,
    RewriteOptions,
    RewriteRequest,
    RewriteStageError,
    RewriteTooLarge,
)
from tests import rewrite_support as rewrite
from tests.scripted_server import Reply

REQUEST = rewrite.english_request()
CUT_TEXT = "Owners pick a vet and a free"  # what a filtered answer looks like: cut mid-sentence


def chain(factory, **options) -> RewriteChain:
    return RewriteChain(factory, options=RewriteOptions(**options))


def assert_every_stage_ended(handler: rewrite.RecordingHandler) -> None:
    """Each start is followed by its end or error before the next start."""
    open_stage = None
    for kind, stage, _, _ in handler.calls:
        if kind == "start":
            assert open_stage is None, f"{stage} started while {open_stage} was open"
            open_stage = stage
        elif kind in ("end", "error"):
            assert open_stage == stage
            open_stage = None
    assert open_stage is None, f"{open_stage} never ended"


# --- item 1: only `stop` is a whole section ------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        (dict(finish_reason="content_filter"), "finish reason: content_filter"),
        (dict(fault="truncated"), "without a finish reason"),
        (dict(content=""), "was empty"),
    ],
    ids=["content_filter", "no-finish-reason", "empty"],
)
async def test_a_section_that_never_ends_with_stop_fails_naming_section_and_reason(
    factory, llm_server, fault, words
):
    reply = {"content": CUT_TEXT, "match": rewrite.FILL, **fault}
    llm_server.script(rewrite.outline_reply(), Reply(content=rewrite.BODIES[0], match=rewrite.FILL))
    llm_server.script(*[Reply(**reply) for _ in range(5)])
    handler = rewrite.RecordingHandler()
    with pytest.raises(RewriteStageError) as failure:
        await chain(factory).ainvoke(REQUEST, handler)
    error = failure.value
    assert (error.stage, error.section_id, error.section_title) == (
        "content_filling",
        "sec-02",
        "Booking",
    )
    assert words in str(error) and "sec-02 “Booking”" in str(error)
    assert "after 5 tries" in error.reason
    assert (
        len(rewrite.prompts_for(llm_server, rewrite.FILL)) == 6
    )  # retried within the policy, then failed
    assert [s.content for s in error.partial.sections] == [
        rewrite.BODIES[0],
        "",
        "",
    ]  # nothing cut kept
    assert handler.calls[-1][:2] == ("error", "content_filling")
    assert_every_stage_ended(handler)


async def test_a_filtered_section_is_asked_again_and_only_the_whole_answer_kept(
    factory, llm_server
):
    llm_server.script(
        rewrite.outline_reply(),
        Reply(content=rewrite.BODIES[0], match=rewrite.FILL),
        Reply(content=CUT_TEXT, match=rewrite.FILL, finish_reason="content_filter"),
        *rewrite.fill_replies(rewrite.BODIES[1:]),
        rewrite.review_reply(),
    )
    handler = rewrite.RecordingHandler()
    result = await chain(factory).ainvoke(REQUEST, handler)
    assert [s.content for s in result.structured_document.sections] == rewrite.BODIES
    assert handler.resets == ["sec-02"]  # the filtered text shown was taken back
    assert result.complete


async def test_a_section_at_the_length_limit_after_every_continuation_fails_naming_length(
    factory, llm_server
):
    llm_server.script(
        rewrite.outline_reply(),
        *[
            Reply(content="Owners pick ", match=rewrite.FILL, finish_reason="length")
            for _ in range(3)
        ],
    )
    with pytest.raises(RewriteStageError) as failure:
        await chain(factory).ainvoke(REQUEST)
    assert failure.value.section_id == "sec-01"
    assert failure.value.finish_reason == "length"
    assert "(`finish reason: length`)" in failure.value.reason


def filtered_every_try(content: str, match: str) -> list[Reply]:
    """The answer to the prompt containing `match`, cut by the content filter on each of the
    three tries a stage has."""
    return [Reply(content=content, match=match, finish_reason="content_filter")] * 3


async def filtered_stage(factory, stage: str) -> tuple[RewriteStageError, rewrite.RecordingHandler]:
    """The run's failure, in `stage`, naming the content filter; and what the handler saw."""
    handler = rewrite.RecordingHandler()
    with pytest.raises(RewriteStageError) as failure:
        await chain(factory).ainvoke(REQUEST, handler)
    assert failure.value.stage == stage
    assert "finish reason: content_filter" in failure.value.reason
    return failure.value, handler


async def test_a_filtered_outline_fails_the_outline_stage_naming_the_reason(factory, llm_server):
    llm_server.script(*filtered_every_try(rewrite.outline_reply().content[:40], rewrite.OUTLINE))
    failure, handler = await filtered_stage(factory, "outline_generation")
    assert rewrite.prompts_for(llm_server, rewrite.FILL) == []
    assert handler.lines() == [
        "start:outline_generation",
        f"error:outline_generation:{failure.reason}",
    ]


async def test_a_filtered_review_fails_the_review_stage_and_keeps_the_draft(factory, llm_server):
    llm_server.script(
        rewrite.outline_reply(),
        *rewrite.fill_replies(),
        *filtered_every_try('```json\n{"issues": [', rewrite.REVIEW),
    )
    failure, handler = await filtered_stage(factory, "review_revision")
    assert [s.content for s in failure.partial.sections] == rewrite.BODIES
    assert_every_stage_ended(handler)


# --- item 2: a failed patch keeps the patches that worked -----------------------------------


@pytest.mark.parametrize(
    ("fault", "finish"),
    [(dict(finish_reason="content_filter"), "content_filter"), (dict(content=""), "empty")],
    ids=["content_filter", "empty"],
)
async def test_a_failed_patch_leaves_its_section_as_drafted_and_keeps_the_others(
    factory, llm_server, fault, finish
):
    sharper = "The system lets owners book visits; vets see their schedule; nothing else.\n"
    llm_server.script(
        rewrite.outline_reply(),
        *rewrite.fill_replies(),
        rewrite.review_reply(("sec-01", "Too vague."), ("sec-03", "SMS provider unnamed.")),
        Reply(content=sharper, match="[sec-01] Overview (heading"),
        *[
            Reply(
                **{"content": CUT_TEXT, "match": "[sec-03] Payment and reminders (heading", **fault}
            )
            for _ in range(5)
        ],
    )
    handler = rewrite.RecordingHandler()
    result = await chain(factory).ainvoke(REQUEST, handler)
    assert not result.complete
    assert [s.content for s in result.structured_document.sections] == [
        sharper,
        rewrite.BODIES[1],
        rewrite.BODIES[2],
    ]
    [failed] = result.failed_patches
    assert (failed.section_id, failed.title, failed.finish_reason) == (
        "sec-03",
        "Payment and reminders",
        finish,
    )
    assert [i.description for i in failed.issues] == ["SMS provider unnamed."]
    [round_] = result.review_rounds
    assert [p.section_id for p in round_.patches] == ["sec-01"]
    assert [f.section_id for f in round_.failed_patches] == ["sec-03"]
    assert (
        len(rewrite.prompts_for(llm_server, rewrite.REVIEW)) == 1
    )  # the loop ends: the result is incomplete
    assert len(rewrite.prompts_for(llm_server, rewrite.PATCH)) == 1 + 5
    dumped = result.model_dump(mode="json")
    assert dumped["complete"] is False and dumped["failed_patches"][0]["section_id"] == "sec-03"
    end = handler.calls[-1]
    assert end[:2] == ("end", "review_revision")
    assert [f.section_id for f in end[3]["failed_patches"]] == ["sec-03"]
    assert any("Could not patch “Payment and reminders” (sec-03)" in m for m in handler.lines())


# --- item 3: review issues with inexact ids -------------------------------------------------


async def test_inexact_ids_are_matched_by_number_and_title_without_asking_again(
    factory, llm_server
):
    llm_server.script(
        rewrite.outline_reply(),
        *rewrite.fill_replies(),
        rewrite.review_reply(
            ("Section 2", "Opening hours missing."),
            ("sec-3", "SMS provider unnamed."),
            ("Overview", "Too vague."),
        ),
        rewrite.patch_reply("Overview, sharper.\n"),
        rewrite.patch_reply("Booking with opening hours.\n"),
        rewrite.patch_reply("Card; SMS via the clinic's provider.\n"),
        rewrite.review_reply(),
    )
    handler = rewrite.RecordingHandler()
    result = await chain(factory).ainvoke(REQUEST, handler)
    first = result.review_rounds[0]
    assert sorted(i.section_id for i in first.issues) == ["sec-01", "sec-02", "sec-03"]
    assert first.ignored == []
    assert rewrite.prompts_for(llm_server, rewrite.PLACE) == []
    assert sorted(p.section_id for p in first.patches) == ["sec-01", "sec-02", "sec-03"]
    assert "progress:review_revision:Review round 1: 3 issue(s) found" in handler.lines()


async def test_an_unknown_id_is_asked_again_once_with_the_valid_ids(factory, llm_server):
    llm_server.script(
        rewrite.outline_reply(),
        *rewrite.fill_replies(),
        rewrite.review_reply(
            ("the payment part", "Card only, per answer 1."), ("appendix", "Nowhere.")
        ),
        rewrite.placement_reply((1, "sec-03"), (2, "none")),
        rewrite.patch_reply("Card at the clinic only.\n"),
        rewrite.review_reply(),
    )
    handler = rewrite.RecordingHandler()
    result = await chain(factory).ainvoke(REQUEST, handler)
    [asked] = rewrite.prompts_for(llm_server, rewrite.PLACE)
    assert "- sec-01: Overview" in asked and "- sec-03: Payment and reminders" in asked
    assert 'named "the payment part": Card only, per answer 1.' in asked
    first = result.review_rounds[0]
    assert [(i.section_id, i.description) for i in first.issues] == [
        ("sec-03", "Card only, per answer 1.")
    ]
    assert [i.section_id for i in first.ignored] == ["appendix"]  # kept and reported, not dropped
    assert result.structured_document.sections[2].content == "Card at the clinic only.\n"
    lines = handler.lines()
    assert any(
        "1 issue(s) name no section and are not patched: “appendix”: Nowhere." in m for m in lines
    )


# --- item 5: context ----------------------------------------------------------------------


async def test_a_context_length_refusal_keeps_the_providers_words(factory, llm_server):
    said = "This model's maximum context length is 8192 tokens. However, you requested 9100 tokens."
    llm_server.script(Reply(content=said, match=rewrite.OUTLINE, fault="400"))
    with pytest.raises(RewriteStageError) as failure:
        await chain(factory).ainvoke(REQUEST)
    reason = failure.value.reason
    assert "exceeds the model's context length" in reason and said in reason
    assert "(about " in reason and " tokens)" in reason
    assert len(llm_server.requests) == 1  # a 400 is not retried


async def test_a_background_larger_than_the_context_is_refused_before_any_call(
    settings, llm_server
):
    small = settings.model_copy(update={"context_tokens": 1000})
    factory = ModelFactory(small, type("E", (), {})())  # never reached: no endpoint needed
    big = RewriteRequest(original_content="Owners book visits online. " * 400)
    with pytest.raises(RewriteTooLarge) as failure:
        await RewriteChain(factory, reviewer=object()).ainvoke(big)  # type: ignore[arg-type]
    assert "the model's context 1000 tokens" in str(failure.value)
    assert "background (original + clarifications) about " in str(failure.value)
    assert failure.value.limit == 1000 and failure.value.needed > 1000
    assert llm_server.requests == []


# --- item 6: every stage ends visibly, in the user's language ------------------------------


async def test_a_cancelled_run_ends_its_open_stage(factory, llm_server):
    # Section 2 streams in paced chunks, so the stop lands while the answer is still coming.
    llm_server.script(
        rewrite.outline_reply(),
        Reply(content=rewrite.BODIES[0], match=rewrite.FILL),
        Reply(content=rewrite.BODIES[1], match=rewrite.FILL, chunk_delay=0.05),
    )

    class Cancelling(rewrite.RecordingHandler):
        def on_section_token(self, section_id, text):
            if section_id == "sec-02":
                task.cancel()  # a user's stop while section 2 streams

    handler = Cancelling()
    task = asyncio.ensure_future(chain(factory).ainvoke(REQUEST, handler))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert handler.calls[-1][:3] == ("error", "content_filling", "cancelled")
    assert_every_stage_ended(handler)


async def test_a_seed_style_handler_hears_a_failed_stage_end(factory, llm_server):
    llm_server.script(
        rewrite.outline_reply(), *[Reply(content="", match=rewrite.FILL) for _ in range(5)]
    )
    seen: list[tuple[str, str, bool]] = []

    class SeedHandler:  # only the seed's three methods
        def on_stage_start(self, stage_name, **kwargs):
            seen.append(("start", stage_name, False))

        def on_stage_end(self, stage_name, **kwargs):
            seen.append(("end", stage_name, kwargs.get("failed", False)))

        def on_stage_progress(self, stage_name, message, **kwargs):
            pass

    with pytest.raises(RewriteStageError):
        await chain(factory).ainvoke(REQUEST, SeedHandler())
    assert seen[-2:] == [("start", "content_filling", False), ("end", "content_filling", True)]


@pytest.mark.parametrize("language", ["zh", "en"])
async def test_progress_lines_follow_the_users_language(factory, llm_server, language):
    llm_server.script(rewrite.outline_reply(match="解决方案架构师"))
    llm_server.script(
        *rewrite.fill_replies(["一。\n", "二。\n", "三。\n"], match="按照既定大纲逐节撰写")
    )
    llm_server.script(rewrite.review_reply(match="文档评审专家"))
    handler = rewrite.RecordingHandler()
    await chain(factory, language=language).ainvoke(RewriteRequest(rewrite.ORIGINAL_ZH), handler)
    progress = [m for kind, _, m, _ in handler.calls if kind == "progress"]
    if language == "zh":
        assert (
            progress[0] == "正在生成第 1/3 节..." and progress[-1] == "第 1 轮评审：发现 0 个问题"
        )
    else:
        assert (
            progress[0] == "Writing section 1/3..."
            and progress[-1] == "Review round 1: 0 issue(s) found"
        )
