"""Every wait is reported by the one call path (reqstudio/waits.py): a request sent, its answer
arriving, a try that failed with its cause as a code and values, the next try's wait, the
call's end; in order, through `complete`, `complete_text`, `ask_structured` and a team agent's
call, over real HTTP to the scripted server. And each retry's line in both languages."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from reqstudio import waits
from reqstudio.answers import answer_model
from reqstudio.calls import RetryPolicy, complete, complete_text
from reqstudio.llm import ModelFactory
from reqstudio.modes.team.calling import agent_answer
from reqstudio.structured import StructuredOutputError, ask_structured
from reqstudio.waits import (
    AnswerArrived,
    AnswerQuiet,
    CallEnded,
    CallEvent,
    Cause,
    RequestSent,
    TryFailed,
    retry_text,
    stderr_retries,
    watching,
)
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript

ASK = [HumanMessage("写一段需求说明")]
FAST = RetryPolicy(3, (0.01,))
TIMEOUT = 1.0  # OPENAI_TIMEOUT of these tests: a reply held longer is "no answer"


@answer_model("ReqExplore", bare_array="items")  # the one call path takes registered answers only
class Items(BaseModel):
    items: list[str]


@pytest.fixture
def impatient(factory: ModelFactory) -> ModelFactory:
    """The test factory with OPENAI_TIMEOUT=1."""
    return ModelFactory(
        factory.settings.model_copy(update={"request_timeout": TIMEOUT}), factory.endpoint
    )


def shape(events: list[CallEvent]) -> list[tuple]:
    """The events as (type, attempt, cause code and values) to compare in order."""
    shaped = []
    for event in events:
        if isinstance(event, RequestSent):
            shaped.append(("sent", event.attempt, event.attempts, event.streamed))
        elif isinstance(event, AnswerArrived):
            shaped.append(("arrived", event.attempt))
        elif isinstance(event, AnswerQuiet):
            shaped.append(("quiet", event.attempt))
        elif isinstance(event, TryFailed):
            shaped.append(("retry", event.attempt, event.cause, event.wait))
        elif isinstance(event, CallEnded):
            shaped.append(("ended", event.outcome, event.attempts_used, event.cause))
    return shaped


async def written_document(
    factory: ModelFactory, after: float = 0.0
) -> tuple[str, list[str], list[CallEvent]]:
    """DocGenerate's document, streamed, watched: its text, the pieces shown and the events
    (those reported up to `after` seconds after it ended too)."""
    events: list[CallEvent] = []
    shown: list[str] = []
    with watching(events.append):
        text = await complete_text(
            factory.for_role("DocGenerate"), ASK, policy=FAST, on_token=shown.append,
            label="DocGenerate",
        )  # fmt: skip
        await asyncio.sleep(after)
    return text, shown, events


async def test_a_first_try_without_an_answer_is_reported_then_its_retry_and_the_answer(
    impatient: ModelFactory, llm_server: ScriptedLLMServer
):
    llm_server.script(Reply(content="late", delay=3), Reply(content="系统应当可测试。"))
    events: list[CallEvent] = []
    with watching(events.append):
        reply = await complete(impatient.for_role("chat"), ASK, policy=FAST, label="chat")
    assert reply.content == "系统应当可测试。"
    assert shape(events) == [
        ("sent", 1, 3, False),
        ("retry", 1, Cause("no_answer", seconds=1), 0.01),
        ("sent", 2, 3, False),
        ("arrived", 2),
        ("ended", "answered", 2, None),
    ]
    assert {e.label for e in events} == {"chat"} and len({e.call for e in events}) == 1


async def test_a_stream_that_opens_then_stays_silent_is_no_answer_not_an_arrival(
    factory: ModelFactory, llm_server: ScriptedLLMServer, monkeypatch
):
    # The case: the provider opened the stream (a chunk with an empty text), then
    # nothing for LangChain's silence limit (StreamChunkTimeoutError), then a retry answered.
    monkeypatch.setenv("LANGCHAIN_OPENAI_STREAM_CHUNK_TIMEOUT_S", "1")
    llm_server.script(Reply(content="late answer", chunk_delay=3), Reply(content="可测试的需求"))
    text, shown, events = await written_document(factory)
    assert text == "可测试的需求" == "".join(shown)
    assert shape(events) == [
        ("sent", 1, 3, True),  # its text is shown as it comes
        ("retry", 1, Cause("no_answer", seconds=1), 0.01),
        ("sent", 2, 3, True),
        ("arrived", 2),
        ("ended", "answered", 2, None),
    ]


async def test_a_structured_call_reports_each_cause_and_gives_up_with_the_last(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    llm_server.script(
        Reply(fault="429"),
        Reply(content='["a", "b"', finish_reason="length"),
        Reply(content="not json at all"),
    )
    events: list[CallEvent] = []
    with watching(events.append), pytest.raises(StructuredOutputError):
        await ask_structured(
            factory.for_role("ReqExplore"), ASK, Items, response_format=None, policy=FAST,
            label="ReqExplore",
        )  # fmt: skip
    assert shape(events) == [
        ("sent", 1, 3, False),  # the JSON is never shown: the wait lasts until it is whole
        ("retry", 1, Cause("http", status=429), 0.01),
        ("sent", 2, 3, False),
        ("arrived", 2),
        ("retry", 2, Cause("length"), 0.01),
        ("sent", 3, 3, False),
        ("arrived", 3),
        ("ended", "gave_up", 3, Cause("unreadable")),
    ]


async def test_a_structured_answer_after_a_cut_stream_and_a_filter(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    llm_server.script(
        Reply(content='{"items": ["登录", "搜索"]}', fault="truncated"),
        Reply(content='{"items": ["登录"', finish_reason="content_filter"),
        Reply(content='{"items": ["登录", "搜索"]}'),
    )
    events: list[CallEvent] = []
    with watching(events.append):
        result = await ask_structured(
            factory.for_role("ReqExplore"), ASK, Items, response_format=None, policy=FAST
        )
    assert result.value.items == ["登录", "搜索"]
    causes = [e.cause for e in events if isinstance(e, TryFailed)]
    assert causes == [Cause("cut"), Cause("content_filter")]
    assert isinstance(events[-1], CallEnded) and events[-1].outcome == "answered"


async def test_a_team_agents_call_reports_its_waits_too(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    llm_server.script(Reply(fault="500"), Reply(content="收到，开始写需求。"))
    events: list[CallEvent] = []
    with watching(events.append):
        await agent_answer(factory.for_role("chat"), ASK, policy=FAST, label="team agent-1")
    assert [e.type for e in events] == ["sent", "retry", "sent", "arrived", "ended"]
    assert events[1].cause == Cause("http", status=500)


async def test_a_model_that_does_not_stream_reports_its_whole_answer_as_arrived(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    # Team's child agents answer in one piece: their model gives a whole AIMessage, with
    # tool calls and no text.
    llm_server.script(Reply(tool_calls=[ToolCallScript("send_message", {"to": "root"})]))
    events: list[CallEvent] = []
    with watching(events.append):
        reply = await agent_answer(
            factory.for_role("team", streaming=False), ASK, policy=FAST, label="team agent-1"
        )
    assert reply.tool_calls[0]["name"] == "send_message"
    assert [e.type for e in events] == ["sent", "arrived", "ended"]


async def test_parallel_calls_report_to_the_run_that_started_them(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    # Tasks copy their context when they start: calls in parallel branches are watched too.
    events: list[CallEvent] = []
    with watching(events.append):
        await asyncio.gather(
            *(complete(factory.for_role("chat"), ASK, policy=FAST, label=f"c{n}") for n in range(3))
        )
    assert sorted(e.label for e in events if isinstance(e, CallEnded)) == ["c0", "c1", "c2"]
    assert len({e.call for e in events}) == 3


async def test_without_an_observer_nothing_is_reported_and_a_broken_one_breaks_no_call(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    def broken(event: CallEvent) -> None:
        raise RuntimeError("a display that fails")

    llm_server.script(Reply(fault="500"), Reply(content="ok"))
    with watching(broken):
        reply = await complete(factory.for_role("chat"), ASK, policy=FAST)
    assert reply.content == "ok"


@pytest.mark.parametrize(
    ("cause", "en", "zh"),
    [
        (Cause("no_answer", seconds=120), "try 2 of 3 after 120 s without an answer",
         "第 2/3 次尝试：上一次 120 秒没有回答"),
        (Cause("http", status=429), "try 2 of 3 after HTTP 429 from the provider",
         "第 2/3 次尝试：上一次服务返回 HTTP 429"),
        (Cause("stalled", seconds=120), "try 2 of 3 after the answer stopped for 120 s",
         "第 2/3 次尝试：上一次回答中途停了 120 秒"),
        (Cause("cut"), "try 2 of 3 after an answer that broke off", "第 2/3 次尝试：上一次回答中途中断"),
        (Cause("no_such_code"), "try 2 of 3 after an error (no_such_code)",
         "第 2/3 次尝试：上一次出错（no_such_code）"),
    ],
)  # fmt: skip
def test_a_retry_reads_in_each_language(cause, en, zh):
    event = TryFailed(call=1, label="chat", attempt=1, attempts=3, cause=cause, wait=1.0)
    assert retry_text(event, "en") == en
    assert retry_text(event, "zh-CN") == zh


def test_a_command_prints_each_retry_in_its_language():
    said: list[str] = []
    event = TryFailed(1, "ReqParse", 1, 3, Cause("no_answer", seconds=60), 2.0)
    stderr_retries("zh", said.append)(event)
    stderr_retries("en", said.append)(event)
    stderr_retries("en", said.append)(CallEnded(1, "ReqParse", "answered", 2))
    assert said == [
        "reqstudio：ReqParse：第 2/3 次尝试：上一次 60 秒没有回答（2 秒后开始）",
        "reqstudio: ReqParse: try 2 of 3 after 60 s without an answer (in 2 s)",
    ]


async def test_a_whole_answer_asked_for_again_is_said_as_a_retry_too(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    # DocGenerate's answer that is no document, and an evaluation outside its ranges, are asked
    # again within their own policies: the user reads why, as for any retry.
    from reqstudio.modes.srs.engine import SrsRequest
    from reqstudio.modes.srs.evaluation import evaluate_srs
    from tests.test_srs_evaluation import ANSWER, OUT_OF_RANGE
    from tests.test_srs_support import EVALUATE, collect, doc_reply, finished, parse_reply

    not_a_document = "# IEEE Std 830-1998\n" + '[\n  {"id": "FR-01"}\n]'
    llm_server.script(
        parse_reply(("FR-01", "Readers borrow books.")), doc_reply(not_a_document), doc_reply()
    )
    request = SrsRequest(user_input="Readers borrow books.", ablation="no-explore-clarify")
    events: list[CallEvent] = []
    with watching(events.append):
        finished(await collect(request, factory))
    retries = [e for e in events if isinstance(e, TryFailed)]
    assert [(e.label, e.cause, e.next_attempt, e.attempts) for e in retries] == [
        ("DocGenerate document", Cause("not_a_document"), 2, 2)
    ]
    assert retry_text(retries[0], "zh") == "第 2/2 次尝试：上一次回答不是文档"

    llm_server.script(
        Reply(content=json.dumps(OUT_OF_RANGE), match=EVALUATE),
        Reply(content=json.dumps(ANSWER), match=EVALUATE),
    )
    events.clear()
    with watching(events.append):
        await evaluate_srs("ref", "cand", factory)
    retries = [e for e in events if isinstance(e, TryFailed)]
    assert [(e.label, e.cause) for e in retries] == [("evaluation answer", Cause("out_of_range"))]
    assert retry_text(retries[0], "en") == "try 2 of 3 after an evaluation outside its ranges"


async def test_an_answer_that_goes_quiet_midway_is_waited_for_again_until_it_goes_on(
    factory: ModelFactory, llm_server: ScriptedLLMServer, monkeypatch
):
    # The offline walk's Agent: the answer began, then nothing came for half a minute, with
    # nothing on screen. A quiet spell of QUIET_AFTER is reported, and the next chunk ends it;
    # once the stream is over, no quiet spell is reported (its timer went with it).
    monkeypatch.setattr(waits, "QUIET_AFTER", 0.3)
    llm_server.script(
        Reply(content="系统应当可测试，并且可以追溯到来源。", chunk_chars=6, stall=1.5)
    )
    # and for three quiet bounds after its end: nothing more comes
    text, shown, events = await written_document(factory, after=1.0)
    assert text == "系统应当可测试，并且可以追溯到来源。" == "".join(shown)
    assert shape(events) == [
        ("sent", 1, 3, True),
        ("arrived", 1),
        ("quiet", 1),
        ("arrived", 1),
        ("ended", "answered", 1, None),
    ]
    quiet = next(e for e in events if isinstance(e, AnswerQuiet))
    assert 0.3 <= quiet.seconds < 1.5


async def test_chunks_closer_than_the_quiet_bound_report_no_quiet_spell(
    factory: ModelFactory, llm_server: ScriptedLLMServer, monkeypatch
):
    # Chunks 0.2 s apart for 1.4 s, the bound at 0.6 s: the timer looks again at each
    # deadline and finds a newer chunk, so the answer is never called quiet.
    monkeypatch.setattr(waits, "QUIET_AFTER", 0.6)
    content = "系统应当可测试，" * 4
    llm_server.script(Reply(content=content, chunk_chars=4, chunk_delay=0.2))
    text, _, events = await written_document(factory)
    assert text == content
    assert [kind for kind, *_ in shape(events)] == ["sent", "arrived", "ended"]


async def test_a_quiet_spell_of_a_try_that_failed_ends_with_it(
    factory: ModelFactory, llm_server: ScriptedLLMServer, monkeypatch
):
    # The first try goes quiet, goes on, then its stream is cut (at its third of five pieces);
    # the second try answers at once: its
    # answer is not waited for again, and the first try's quiet spell ends with its retry.
    monkeypatch.setattr(waits, "QUIET_AFTER", 0.3)
    llm_server.script(
        Reply(content="系统应当可测试，" * 4, chunk_chars=6, stall=1.0, fault="cut"),
        Reply(content="可测试的需求"),
    )
    text, _, events = await written_document(factory)
    assert text == "可测试的需求"
    kinds = [item[:2] for item in shape(events)]
    assert kinds == [
        ("sent", 1), ("arrived", 1), ("quiet", 1), ("arrived", 1), ("retry", 1),
        ("sent", 2), ("arrived", 2), ("ended", "answered"),
    ]  # fmt: skip
