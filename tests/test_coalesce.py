"""A provider's stream, coalesced: fewer chunks, the same answer, nothing held back."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import StreamChunkTimeoutError

from reqstudio.calls import RetryPolicy, complete, finish_reason, is_transient
from reqstudio.coalesce import coalesced
from reqstudio.llm import ModelFactory
from reqstudio.usage import UsageTracker
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript


def join(items: list[str]) -> str:
    return "".join(items)


class Source:
    """A stream the test drives: it gives what it is told, when it is told."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue = asyncio.Queue()
        self.closed = asyncio.Event()

    async def stream(self):
        try:
            while True:
                batch = await self.queue.get()
                if isinstance(batch, BaseException):
                    raise batch
                if batch is None:
                    return
                for item in batch:  # given back to back, with no wait between them
                    yield item
        finally:
            await asyncio.sleep(0.01)  # closing takes a moment, as an HTTP response's does
            self.closed.set()


async def test_the_first_token_after_a_pause_comes_at_once_and_a_burst_comes_joined():
    source = Source()
    stream = coalesced(source.stream(), 0.05, join)
    source.queue.put_nowait(["一"])
    # The source now waits for the test: what came is given without waiting for more.
    assert await asyncio.wait_for(anext(stream), 5) == "一"
    source.queue.put_nowait(["二", "三", "四"])
    assert await asyncio.wait_for(anext(stream), 5) == "二三四"
    source.queue.put_nowait(None)
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(anext(stream), 5)
    assert source.closed.is_set()


async def test_the_last_tokens_are_not_held_back_when_the_answer_ends():
    source = Source()
    stream = coalesced(source.stream(), 30.0, join)  # at most one chunk per 30 s
    source.queue.put_nowait(["一"])
    assert await asyncio.wait_for(anext(stream), 5) == "一"
    source.queue.put_nowait(["二", "三"])
    source.queue.put_nowait(None)  # the end: what is held goes now, not 30 s later
    assert await asyncio.wait_for(anext(stream), 5) == "二三"
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(anext(stream), 5)


async def test_a_failure_comes_after_everything_received_before_it():
    source = Source()
    source.queue.put_nowait(["a", "b"])
    source.queue.put_nowait(ConnectionResetError("cut"))
    received = []
    with pytest.raises(ConnectionResetError):
        async for item in coalesced(source.stream(), 0.05, join):
            received.append(item)
    assert "".join(received) == "ab"
    assert source.closed.is_set()


async def test_a_reader_cancelled_from_elsewhere_ends_the_stream_with_an_error():
    """Whatever ends the provider's reader, the consumer hears of it: it never waits for an
    end that cannot come."""
    source = Source()
    source.queue.put_nowait(["a"])
    source.queue.put_nowait(asyncio.CancelledError())  # e.g. a cancel scope deep in the client
    received = []

    async def read_all() -> None:
        async for item in coalesced(source.stream(), 0.01, join):
            received.append(item)

    with pytest.raises(ConnectionError):
        await asyncio.wait_for(read_all(), 5)  # without the fix: waits, and times out here
    assert received == ["a"]


async def test_a_reader_that_stops_early_closes_the_provider_stream():
    source = Source()
    stream = coalesced(source.stream(), 0.05, join)
    source.queue.put_nowait(["a"])
    assert await anext(stream) == "a"
    await stream.aclose()  # e.g. Stop pressed while the provider is still sending
    assert source.closed.is_set()


async def test_a_streamed_answer_comes_in_fewer_chunks_with_the_same_text_usage_and_finish(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    answer = "系统应在两秒内响应用户的查询请求。" * 40  # 680 characters, 170 chunks of 4
    llm_server.script(
        Reply(
            content=answer, chunk_chars=4, chunk_delay=0.002, prompt_tokens=9, completion_tokens=170
        )
    )
    tracker = UsageTracker()
    model = factory.for_role("DocGenerate", callbacks=[tracker])
    chunks = [chunk async for chunk in model.astream([HumanMessage("写需求")])]
    with_text = [chunk for chunk in chunks if chunk.content]
    # 170 tokens sent over at least 0.34 s, given at most every 50 ms: far fewer chunks.
    assert 2 <= len(with_text) < 60
    assert "".join(chunk.content for chunk in chunks) == answer
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged = merged + chunk
    assert finish_reason(merged) == "stop"
    usage = tracker.roles["DocGenerate"]
    assert (usage.input_tokens, usage.output_tokens) == (9, 170)


async def test_tool_call_pieces_joined_early_still_make_the_whole_call(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    arguments = {"query": "IEEE 830 软件需求规格说明 模板 " * 8}
    llm_server.script(Reply(tool_calls=[ToolCallScript("web_search", arguments)]))
    model = factory.for_role("function_call").bind_tools(
        [{"type": "function", "function": {"name": "web_search", "parameters": {}}}]
    )
    chunks = [chunk async for chunk in model.astream([HumanMessage("找模板")])]
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged = merged + chunk
    assert [(call["name"], call["args"]) for call in merged.tool_calls] == [
        ("web_search", arguments)
    ]
    assert finish_reason(merged) == "tool_calls"


async def test_a_source_silent_past_the_limit_ends_after_what_it_gave():
    source = Source()
    source.queue.put_nowait(["a"])  # then nothing, and no end
    received = []
    with pytest.raises(TimeoutError, match="after 1"):
        async for item in coalesced(
            source.stream(),
            0.01,
            join,
            silence_limit=0.2,
            on_silence=lambda n: TimeoutError(f"silent after {n}"),
        ):
            received.append(item)
    assert received == ["a"]
    assert source.closed.is_set()


async def test_a_provider_that_goes_silent_mid_answer_is_a_timeout_that_is_tried_again(
    factory: ModelFactory, llm_server: ScriptedLLMServer, monkeypatch
):
    """LangChain's per-chunk bound is kept, once per stream: a provider that stops sending
    (its connection still open) ends the try with `StreamChunkTimeoutError`."""
    monkeypatch.setenv("LANGCHAIN_OPENAI_STREAM_CHUNK_TIMEOUT_S", "0.5")
    llm_server.script(
        Reply(content="第一段" + "。" * 4, chunk_chars=3, chunk_delay=30.0),  # 30 s a chunk
        Reply(content="系统应记录每次登录。"),
    )
    model = factory.for_role("DocGenerate", callbacks=[])
    started = asyncio.get_running_loop().time()
    answer = await complete(model, [HumanMessage("写需求")], policy=RetryPolicy(2, (0.0,)))
    assert answer.content == "系统应记录每次登录。"
    assert asyncio.get_running_loop().time() - started < 20
    assert is_transient(StreamChunkTimeoutError(0.5))
