"""`reqstudio.events.sent_events`: an engine that reports through a callback, as one stream.

Chat's entry and Rewrite's `astream` are built on it; what they rely on is checked here
without a model: the order (the engine goes on only once its event was taken), the ending
(the returned event, or the failure's), and a stream closed early (the engine is cancelled,
and what it sends while it ends does not hang the close)."""

from __future__ import annotations

import asyncio

import pytest

from reqstudio.events import Failed, Finished, Notice, Send, sent_events


def notice(code: str) -> Notice:
    return Notice(name="notice", code=code)


def failed(error: Exception) -> Failed:
    return Failed(name="failed", code=type(error).__name__, values={"why": str(error)})


async def test_the_engine_goes_on_only_once_the_consumer_took_its_event():
    log: list[str] = []

    async def work(send: Send) -> Finished:
        for code in ("a", "b"):
            await send(notice(code))
            log.append(f"engine after {code}")
        return Finished(name="finished", result="done")

    async for event in sent_events(work, failed):
        await asyncio.sleep(0)  # the consumer takes its time: the engine must not run ahead
        await asyncio.sleep(0)
        log.append(f"shown {getattr(event, 'code', event.type)}")
    assert log == ["shown a", "engine after a", "shown b", "engine after b", "shown finished"]


async def test_what_the_engine_raises_ends_the_stream_as_its_failure_after_what_it_sent():
    async def work(send: Send) -> Finished:
        await send(notice("a"))
        raise ValueError("the provider said no")

    seen = [event async for event in sent_events(work, failed)]
    assert [event.type for event in seen] == ["notice", "failed"]
    assert seen[-1].values == {"why": "the provider said no"}


async def test_a_stream_closed_early_cancels_the_engine_and_what_it_sends_on_its_way_out_does_not_hang():
    ended: list[str] = []

    async def work(send: Send) -> Finished:
        try:
            await send(notice("a"))
            await send(notice("b"))
            await asyncio.Event().wait()  # would run forever
        except asyncio.CancelledError:
            await send(notice("stage failed"))  # as Rewrite reports the stage a stop ended
            ended.append("cancelled")
            raise
        return Finished(name="finished", result="never")

    stream = sent_events(work, failed)
    first = await anext(stream)
    assert first.code == "a"
    await asyncio.wait_for(stream.aclose(), 5)
    assert ended == ["cancelled"]


async def test_a_consumer_cancelled_while_it_waits_cancels_the_engine_too():
    waiting, cancelled = asyncio.Event(), asyncio.Event()

    async def work(send: Send) -> Finished:
        try:
            waiting.set()
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await send(notice("stage failed"))
            cancelled.set()
            raise
        return Finished(name="finished", result="never")

    async def consume() -> None:
        async for _ in sent_events(work, failed):
            pass

    consumer = asyncio.create_task(consume())
    await asyncio.wait_for(waiting.wait(), 5)
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(consumer, 5)
    assert cancelled.is_set()
