"""A rewrite that fails or is stopped resumes from its last saved step:
each written section and each review round is checkpointed, as SRS mode's nodes are."""

from __future__ import annotations

import asyncio

import pytest

from reqstudio.modes.rewrite import (
    RewriteChain,
    RewriteStageError,
)
from reqstudio.modes.rewrite.chain import RewriteResumeError
from reqstudio.persistence import open_checkpointer, prepare_checkpoints
from tests.rewrite_support import (
    BODIES,
    FILL,
    OUTLINE,
    PATCH,
    REVIEW,
    RecordingHandler,
    english_request,
    fill_replies,
    outline_reply,
    patch_reply,
    prompts_for,
    review_reply,
)
from tests.scripted_server import Reply

REQUEST = english_request()


@pytest.fixture
async def saver(settings):
    await prepare_checkpoints(settings)
    async with open_checkpointer(settings) as checkpointer:
        yield checkpointer


async def saved_rows(saver, run_id: str) -> int:
    cursor = await saver.conn.execute(
        "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", (run_id,)
    )
    return (await cursor.fetchone())[0]


async def test_a_run_failing_at_section_2_resumes_at_section_2(factory, llm_server, saver):
    llm_server.script(
        outline_reply(),
        Reply(content=BODIES[0], match=FILL),
        *[
            Reply(content="Owners pick", match=FILL, finish_reason="content_filter")
            for _ in range(5)
        ],
    )
    chain = RewriteChain(factory)
    with pytest.raises(RewriteStageError) as failure:
        await chain.ainvoke(REQUEST, checkpointer=saver, run_id="run-a")
    assert failure.value.run_id == "run-a"
    assert await chain.pending(saver, "run-a") == "fill_section"
    assert await saved_rows(saver, "run-a") == 1  # only the latest step is kept

    llm_server.reset()
    llm_server.script(*fill_replies(BODIES[1:]), review_reply())
    handler = RecordingHandler()
    result = await chain.ainvoke(None, handler, checkpointer=saver, run_id="run-a", resume=True)
    assert [s.content for s in result.structured_document.sections] == BODIES
    assert prompts_for(llm_server, OUTLINE) == []
    fills = prompts_for(llm_server, FILL)
    assert len(fills) == 2 and BODIES[0].strip() in fills[0]  # the rolling context survives
    assert handler.lines()[:3] == [
        "start:content_filling",
        "progress:content_filling:Writing section 2/3...",
        "progress:content_filling:Writing section 3/3...",
    ]
    assert handler.calls[0][3]["resumed_at"] == 2
    assert result.complete and result.run_id == "run-a"
    assert await chain.pending(saver, "run-a") is None  # a finished run's checkpoints are gone
    assert await saved_rows(saver, "run-a") == 0
    with pytest.raises(RewriteResumeError):
        await chain.ainvoke(None, checkpointer=saver, run_id="run-a", resume=True)


async def test_a_review_failing_in_round_2_keeps_round_1s_patch(factory, llm_server, saver):
    patched = "Owners pick a vet and a free slot, within opening hours.\n"
    llm_server.script(
        outline_reply(),
        *fill_replies(),
        review_reply(("sec-02", "Opening hours are missing.")),
        patch_reply(patched),
        *[Reply(content="LGTM", match=REVIEW) for _ in range(3)],
    )
    chain = RewriteChain(factory)
    with pytest.raises(RewriteStageError) as failure:
        await chain.ainvoke(REQUEST, checkpointer=saver, run_id="run-b")
    assert failure.value.stage == "review_revision"
    assert failure.value.partial.sections[1].content == patched

    llm_server.reset()
    llm_server.script(review_reply())
    result = await chain.ainvoke(None, checkpointer=saver, run_id="run-b", resume=True)
    assert result.structured_document.sections[1].content == patched
    assert [r.round for r in result.review_rounds] == [1, 2]
    assert prompts_for(llm_server, PATCH) == [] and prompts_for(llm_server, FILL) == []
    assert "within opening hours" in prompts_for(llm_server, REVIEW)[0]


async def test_a_stopped_run_resumes(factory, llm_server, saver):
    llm_server.script(
        outline_reply(),
        Reply(content=BODIES[0], match=FILL),
        Reply(content=BODIES[1], match=FILL, chunk_delay=0.05),
    )

    class Stopping(RecordingHandler):
        def on_section_token(self, section_id, text):
            if section_id == "sec-02":
                task.cancel()  # the stop button while section 2 streams

    chain = RewriteChain(factory)
    task = asyncio.ensure_future(
        chain.ainvoke(REQUEST, Stopping(), checkpointer=saver, run_id="run-c")
    )
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await chain.pending(saver, "run-c") == "fill_section"

    llm_server.reset()
    llm_server.script(*fill_replies(BODIES[1:]), review_reply())
    result = await chain.ainvoke(None, checkpointer=saver, run_id="run-c", resume=True)
    assert [s.content for s in result.structured_document.sections] == BODIES
    assert len(prompts_for(llm_server, FILL)) == 2
