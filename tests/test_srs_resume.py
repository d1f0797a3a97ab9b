"""Stopping a run (the UI's stop button cancels its task) and resuming it from the checkpoint."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from reqstudio.modes.srs.engine import SrsRequest, pending_resume, run_srs
from reqstudio.modes.srs.events import NodeFinished, NodeStarted, RunFinished
from tests import test_srs_support as srs

REQUEST = SrsRequest(
    user_input="Customers buy products online.",
    reference_srs="# Reference\nCustomers buy products online.",
    max_iterations=3,  # two ReqExplore/ReqClarify rounds (ReqParse is iteration 1)
)


async def until(condition, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


async def stop_when(run, should_stop, then=None) -> list:
    """Consume `run` in a task and cancel that task as soon as an event satisfies `should_stop`
    (and the condition `then`, if given, holds)."""
    seen: list = []
    reached = asyncio.Event()

    async def consume() -> None:
        async for event in run:
            seen.append(event)
            if should_stop(event):
                reached.set()

    task = asyncio.create_task(consume())
    waiter = asyncio.create_task(reached.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    assert reached.is_set(), f"the run ended before the stop point: {seen[-1]!r}"
    if then is not None:
        await until(then)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return seen


async def test_stopped_run_resumes_without_redoing_completed_nodes(llm_server, factory, tmp_path):
    llm_server.script(
        srs.parse_reply(("FR-01", "Place an order."), ("FR-02", "Cancel an order.")),
        srs.explore_reply(("FR-01", "Place an order."), ("FR-02", "Cancel an order.")),
        srs.clarify_reply(FR_01=2, FR_02=0),
        # round 2's ReqExplore hangs; the user presses stop while it is running
        srs.explore_reply(("FR-02", "never seen"), delay=1),
        srs.explore_reply(("FR-02", "Cancel an order before it ships."), ("NFR-01", "Log it.")),
        srs.clarify_reply(FR_02=1, NFR_01=0),
        srs.doc_reply(),
    )
    logs = tmp_path / "logs"
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "srs.sqlite")) as saver:
        seen = await stop_when(
            run_srs(REQUEST, factory, checkpointer=saver, thread_id="t-1", log_dir=logs),
            lambda e: isinstance(e, NodeStarted) and e.agent == "ReqExplore" and e.round == 2,
            then=lambda: len(llm_server.requests) == 4,  # the hanging request has arrived
        )
        assert srs.node_sequence(seen) == ["ReqParse", "ReqExplore", "ReqClarify"]
        assert await pending_resume(saver, "t-1") == "ReqClarify"
        assert await pending_resume(saver, "another-thread") is None

    before = len(llm_server.requests)
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "srs.sqlite")) as saver:
        events = await srs.collect_resumed(factory, saver, "t-1", log_dir=logs)
        assert await pending_resume(saver, "t-1") is None
    assert list(logs.iterdir()) == []  # the finished run's log file went with its checkpoints

    assert srs.node_sequence(events) == ["ReqExplore", "ReqClarify", "DocGenerate"]
    resumed = llm_server.requests[before:]
    assert len(resumed) == 3  # ReqParse, round 1 and its ReqClarify were not asked again
    assert not srs.prompts_for(resumed, srs.PARSE)
    result = srs.finished(events)
    assert result.srs_markdown == srs.SRS_TEXT
    assert result.frozen_ids == ["FR-01", "FR-02"]
    assert [r.id for r in result.requirements] == ["FR-01", "FR-02", "NFR-01"]
    assert [e["agent"] for e in result.logs] == [
        "ReqParse",
        "ReqExplore",
        "ReqClarify",
        "ReqExplore",
        "ReqClarify",
        "DocGenerate",
    ]
    assert result.thread_id == "t-1" and result.completed


async def test_stop_during_the_document_keeps_the_list_and_resume_writes_it(
    llm_server, factory, tmp_path
):
    llm_server.script(
        srs.parse_reply(("FR-01", "Place an order.")),
        srs.doc_reply("# Slow document\n" * 20, chunk_delay=0.5),
        srs.doc_reply(),
    )
    request = REQUEST.model_copy(update={"ablation": "no-explore-clarify"})
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "srs.sqlite")) as saver:
        seen = await stop_when(
            run_srs(request, factory, checkpointer=saver, thread_id="t-2"),
            lambda e: type(e).__name__ == "DocumentToken",
        )
        assert not any(isinstance(e, RunFinished) for e in seen)
        assert await pending_resume(saver, "t-2") == "ReqParse"
        events = await srs.collect(
            request, factory, checkpointer=saver, thread_id="t-2", resume=True
        )
    assert srs.node_sequence(events) == ["DocGenerate"]
    assert srs.finished(events).srs_markdown == srs.SRS_TEXT
    assert len(srs.prompts_for(llm_server, srs.PARSE)) == 1
    assert len(srs.prompts_for(llm_server, srs.DOC)) == 2


async def test_finished_run_has_nothing_to_resume(llm_server, factory, tmp_path):
    llm_server.script(srs.parse_reply(("FR-01", "Place an order.")), srs.doc_reply())
    request = REQUEST.model_copy(update={"ablation": "no-explore-clarify"})
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "srs.sqlite")) as saver:
        events = await srs.collect(request, factory, checkpointer=saver, thread_id="t-3")
        assert isinstance(events[-1], RunFinished)
        assert await pending_resume(saver, "t-3") is None
        assert not [e for e in events if isinstance(e, NodeFinished) and e.skipped]
    assert not srs.prompts_for(llm_server, srs.EXPLORE) and not srs.prompts_for(
        llm_server, srs.CLARIFY
    )


async def test_resume_without_a_saved_run_is_refused(factory, tmp_path):
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "srs.sqlite")) as saver:
        with pytest.raises(ValueError, match="no saved SRS run"):
            await srs.collect(REQUEST, factory, checkpointer=saver, thread_id="nope", resume=True)
