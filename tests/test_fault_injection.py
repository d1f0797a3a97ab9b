"""Faults injected by the scripted server, through SRS and Chat as they run: streams closed
before the finish reason, `length` finishes, 429/500 bursts, malformed bodies, a provider that
hangs. Each run ends complete or with a clear message, never silently shorter, and within the
worst-case wait the README documents (`RetryPolicy.worst_case_seconds`)."""

from __future__ import annotations

import logging
import time

import openai
import pytest

from reqstudio.calls import IncompleteAnswerError
from reqstudio.llm import ModelFactory
from reqstudio.modes.chat import ChatEngine, ChatMemory
from reqstudio.modes.srs.engine import SrsRequest
from reqstudio.modes.srs.evaluation import evaluate_srs
from reqstudio.modes.srs.events import DocumentContinued, NodeFinished
from tests import test_srs_support as srs
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript

REQUEST = SrsRequest(
    user_input="Customers buy products online and get an e-mail confirmation.",
    reference_srs="# Reference\nCustomers buy products online; orders are confirmed by e-mail.",
    max_iterations=2,  # one ReqExplore/ReqClarify round (ReqParse is iteration 1)
)
PARSED = (("FR-01", "Place an order."), ("FR-02", "Confirm an order by e-mail."))


def until_the_document() -> list[Reply]:
    """A run's answers before DocGenerate: PARSED, explored as they are, scored 0 (one round)."""
    return [
        srs.parse_reply(*PARSED),
        srs.explore_reply(*PARSED),
        srs.clarify_reply(FR_01=0, FR_02=0),
    ]


TWELVE = tuple(
    (f"FR-{n:02d}", f"Requirement number {n} of the explored list.") for n in range(1, 13)
)


def requests_for(server: ScriptedLLMServer, marker: str) -> int:
    return len(srs.prompts_for(server, marker))


# --- streams that end before their finish reason ---------------------------------------------


async def test_an_explore_list_cut_short_is_asked_again_and_arrives_whole(llm_server, factory):
    llm_server.script(
        srs.parse_reply(*PARSED),
        srs.explore_reply(*TWELVE, fault="truncated"),  # closes cleanly after half: no [DONE]
        srs.explore_reply(*TWELVE),
        srs.clarify_reply(FR_01=0),
        srs.doc_reply(),
    )
    result = srs.finished(await srs.collect(REQUEST, factory))
    assert [r.id for r in result.requirements] == [rid for rid, _ in TWELVE]
    assert requests_for(llm_server, srs.EXPLORE) == 2
    assert result.logs[1]["attempts"] == 2


async def test_an_explore_list_cut_every_time_fails_clearly_and_keeps_the_parsed_list(
    llm_server, factory
):
    llm_server.script(
        srs.parse_reply(*PARSED), *[srs.explore_reply(*TWELVE, fault="truncated")] * 3
    )
    failure = srs.failed(await srs.collect(REQUEST, factory))
    assert failure.agent == "ReqExplore"
    assert "broke off before it finished" in failure.message
    assert "中断" in failure.text("zh")
    # what was produced before is kept: ReqParse's list, not a shortened explored one
    assert [(r.id, r.content) for r in failure.partial.requirements] == list(PARSED)
    assert requests_for(llm_server, srs.EXPLORE) == 3  # the seed's three tries, counted once


async def test_a_complete_answer_holding_a_cut_list_is_reasked_not_repaired_shorter(
    llm_server, factory
):
    whole = srs.fenced(srs.items(*TWELVE))
    cut_inside = whole[: len(whole) // 2]  # finish reason "stop", but the list stops midway
    llm_server.script(
        srs.parse_reply(*PARSED),
        Reply(content=cut_inside, match=srs.EXPLORE),
        srs.explore_reply(*TWELVE),
        srs.clarify_reply(FR_01=0),
        srs.doc_reply(),
    )
    result = srs.finished(await srs.collect(REQUEST, factory))
    assert len(result.requirements) == 12
    reask = llm_server.requests[2]["messages"][-1]["content"]
    assert "cut off" in reask


async def test_a_document_cut_every_time_is_an_error_not_a_shorter_srs(llm_server, factory):
    long_doc = srs.SRS_TEXT + "\n## 2. Overall description\n\n" + "The E-Store ... " * 40
    llm_server.script(
        *until_the_document(),
        *[srs.doc_reply(long_doc, fault="truncated") for _ in range(5)],
    )
    failure = srs.failed(await srs.collect(REQUEST, factory))
    assert failure.agent == "DocGenerate"
    assert "broke off" in failure.message
    assert requests_for(llm_server, srs.DOC) == 5  # DocGenerate: the seed's five tries
    assert failure.partial.srs_markdown == "" and not failure.partial.completed
    assert [r.id for r in failure.partial.requirements] == ["FR-01", "FR-02"]


# --- length finishes ---------------------------------------------------------------------------


async def test_a_document_at_the_length_limit_is_continued_and_the_run_says_so(llm_server, factory):
    first = "# SRS\n\n## 1. Introduction\nThe library lends books to its readers.\n"
    rest = "## 2. Overall description\nReaders search, reserve and borrow books.\n"
    llm_server.script(
        *until_the_document(),
        srs.doc_reply(first, finish_reason="length"),
        Reply(content=rest, match="Continue exactly where it stopped"),
    )
    events = await srs.collect(REQUEST, factory)
    result = srs.finished(events)
    assert result.srs_markdown == first + rest
    assert [e.count for e in events if isinstance(e, DocumentContinued)] == [1]
    assert result.continuations == 1
    assert "length: continued" in result.logs[-1]["parse_errors"]


async def test_scores_cut_at_the_length_limit_are_asked_again(llm_server, factory):
    whole = srs.fenced(srs.scored(FR_01=2, FR_02=0))
    llm_server.script(
        srs.parse_reply(*PARSED),
        srs.explore_reply(*PARSED),
        Reply(content=whole[:30], finish_reason="length", match=srs.CLARIFY),
        Reply(content=whole, match=srs.CLARIFY),
        srs.doc_reply(),
    )
    events = await srs.collect(REQUEST, factory)
    clarify = next(e for e in events if isinstance(e, NodeFinished) and e.agent == "ReqClarify")
    assert {(s.id, s.score) for s in clarify.scores} == {("FR-01", 2), ("FR-02", 0)}
    assert "length limit" in llm_server.requests[3]["messages"][-1]["content"]


async def test_a_list_cut_at_the_length_limit_every_time_names_the_finish_reason(
    llm_server, factory
):
    whole = srs.fenced(srs.items(*TWELVE))
    llm_server.script(
        srs.parse_reply(*PARSED),
        *[Reply(content=whole[:40], finish_reason="length", match=srs.EXPLORE) for _ in range(3)],
    )
    failure = srs.failed(await srs.collect(REQUEST, factory))
    assert failure.agent == "ReqExplore"
    assert "finish_reason: length" in failure.message and "length" in failure.text("zh")
    assert "unparseable" not in failure.message  # it was cut, not unreadable
    assert [(r.id, r.content) for r in failure.partial.requirements] == list(PARSED)


# --- content_filter finishes and empty answers --------------------------------------------------


async def test_a_filtered_or_empty_list_is_asked_again_and_arrives_whole(llm_server, factory):
    llm_server.script(
        srs.parse_reply(*PARSED, finish_reason="content_filter"),  # the whole list, but filtered
        srs.parse_reply(*PARSED),
        Reply(content="", match=srs.EXPLORE),  # no text, no tool call
        srs.explore_reply(*TWELVE),
        srs.clarify_reply(FR_01=0),
        srs.doc_reply(),
    )
    result = srs.finished(await srs.collect(REQUEST, factory))
    assert [r.id for r in result.requirements] == [rid for rid, _ in TWELVE]
    assert requests_for(llm_server, srs.PARSE) == 2 and requests_for(llm_server, srs.EXPLORE) == 2


@pytest.mark.parametrize(
    ("fault", "words", "words_zh"),
    [
        ({"finish_reason": "content_filter"}, "finish_reason: content_filter", "内容过滤"),
        ({"content": ""}, "empty answer", "空回答"),
    ],
    ids=["content_filter", "empty"],
)
async def test_a_document_filtered_or_empty_every_time_fails_naming_it(
    llm_server, factory, fault, words, words_zh
):
    llm_server.script(
        *until_the_document(),
        *[Reply(**{"content": srs.SRS_TEXT, "match": srs.DOC, **fault}) for _ in range(5)],
    )
    failure = srs.failed(await srs.collect(REQUEST, factory))
    assert failure.agent == "DocGenerate"
    assert words in failure.message and words_zh in failure.text("zh")
    assert requests_for(llm_server, srs.DOC) == 5  # retried as transient, the seed's five tries
    assert failure.partial.srs_markdown == "" and not failure.partial.completed


# --- 429 / 500 bursts, broken bodies ----------------------------------------------------------


async def test_a_burst_within_the_tries_is_absorbed(llm_server, factory):
    llm_server.script(
        Reply(fault="429", match=srs.PARSE),
        Reply(fault="500", match=srs.PARSE),
        srs.parse_reply(*PARSED),
        Reply(content="x", fault="malformed", match=srs.EXPLORE),  # a chunk that is not JSON
        srs.explore_reply(*PARSED),
        srs.clarify_reply(FR_01=1, FR_02=0),
        *[Reply(fault="500", match=srs.DOC) for _ in range(4)],  # DocGenerate has five tries
        srs.doc_reply(),
    )
    result = srs.finished(await srs.collect(REQUEST, factory))
    assert result.srs_markdown == srs.SRS_TEXT
    assert requests_for(llm_server, srs.PARSE) == 3 and requests_for(llm_server, srs.DOC) == 5


async def test_a_burst_longer_than_the_tries_fails_clearly_after_exactly_those_tries(
    llm_server, factory, caplog
):
    llm_server.script(*[Reply(fault="429", match=srs.PARSE) for _ in range(5)])
    with caplog.at_level(logging.WARNING, logger="reqstudio.calls"):
        failure = srs.failed(await srs.collect(REQUEST, factory))
    assert failure.agent == "ReqParse"
    assert "429" in failure.message and "429" in failure.text("zh")
    assert len(llm_server.requests) == 3
    retries = [r.getMessage() for r in caplog.records if "try" in r.getMessage()]
    assert retries == [
        "ReqParse: try 1 of 3 failed (OpenAIRateLimitError 429); trying again in 0.0 s",
        "ReqParse: try 2 of 3 failed (OpenAIRateLimitError 429); trying again in 0.0 s",
    ]


# --- a provider that hangs ---------------------------------------------------------------------

TIMEOUT = 1.0  # OPENAI_TIMEOUT for these tests
SLACK = 4.0  # process start-up of the tries, a loaded machine


def impatient(factory: ModelFactory) -> ModelFactory:
    return ModelFactory(
        factory.settings.model_copy(update={"request_timeout": TIMEOUT}), factory.endpoint
    )


@pytest.mark.parametrize(
    ("role", "marker", "tries"), [("ReqParse", srs.PARSE, 3), ("DocGenerate", srs.DOC, 5)]
)
async def test_a_hanging_provider_gets_the_seeds_tries_within_the_documented_bound(
    llm_server, factory, role, marker, tries
):
    factory = impatient(factory)
    if role == "DocGenerate":
        llm_server.script(srs.parse_reply(*PARSED))
    llm_server.script(*[Reply(content="late", delay=30, match=marker) for _ in range(tries + 2)])
    request = REQUEST.model_copy(update={"ablation": "no-explore-clarify"})
    started = time.monotonic()
    failure = srs.failed(await srs.collect(request, factory))
    elapsed = time.monotonic() - started
    assert failure.agent == role
    assert "超时" in failure.text("zh") and "timed out" in failure.message
    assert requests_for(llm_server, marker) == tries  # counted once: no SDK retries beneath
    assert elapsed <= factory.policy(role).worst_case_seconds(TIMEOUT) + SLACK


async def test_a_hanging_evaluation_gets_six_tries_within_the_documented_bound(llm_server, factory):
    factory = impatient(factory)
    llm_server.script(*[Reply(content="late", delay=30, match=srs.EVALUATE) for _ in range(8)])
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        await evaluate_srs("# Reference", srs.SRS_TEXT, factory)
    elapsed = time.monotonic() - started
    assert len(llm_server.requests) == 6
    assert elapsed <= factory.policy("evaluation").worst_case_seconds(TIMEOUT) + SLACK


# --- Chat ------------------------------------------------------------------------------------

WHOLE = "一个好的需求可测试、无歧义、可追溯，并且只描述一件事。" * 3


@pytest.mark.parametrize(
    "broken",
    [[Reply(content=WHOLE, fault="truncated")],
     [Reply(content=WHOLE[:20], finish_reason="content_filter"), Reply(content="")]],
    ids=["cut_short", "filtered_then_empty"],
)  # fmt: skip
async def test_chat_answer_broken_off_is_retried_and_only_the_whole_one_is_shown(
    llm_server, factory, broken
):
    llm_server.script(*broken, Reply(content=WHOLE))
    shown: list[str] = []

    def drop(attempt: int, error: BaseException, wait: float) -> None:
        shown.clear()

    answer = await ChatEngine(factory).reply(
        ChatMemory(), "什么是好的需求？", on_token=shown.append, on_retry=drop
    )
    assert answer == WHOLE == "".join(shown)
    assert len(llm_server.requests) == len(broken) + 1


async def test_chat_answer_cut_every_time_is_an_error_keeping_what_arrived(llm_server, factory):
    llm_server.script(*[Reply(content=WHOLE, fault="truncated") for _ in range(3)])
    with pytest.raises(IncompleteAnswerError) as error:
        await ChatEngine(factory).reply(ChatMemory(), "什么是好的需求？")
    assert error.value.reason == "cut"
    assert 0 < len(error.value.partial) < len(WHOLE) and WHOLE.startswith(error.value.partial)
    assert len(llm_server.requests) == 3


async def test_chat_length_finish_is_not_a_whole_answer(llm_server, factory):
    llm_server.script(Reply(content=WHOLE[:10], finish_reason="length"))
    with pytest.raises(IncompleteAnswerError) as error:
        await ChatEngine(factory).reply(ChatMemory(), "什么是好的需求？")
    assert error.value.reason == "length" and error.value.partial == WHOLE[:10]


@pytest.mark.parametrize(
    ("reply", "reason"),
    [(Reply(content=WHOLE[:20], finish_reason="content_filter"), "content_filter"),
     (Reply(content=""), "empty"),
     # a tool call with no text, from a chat model that has no tools: no answer either
     (Reply(tool_calls=[ToolCallScript("web_search", {"query": "q"})]), "empty")],
    ids=["content_filter", "empty", "tool-calls-only"],
)  # fmt: skip
async def test_chat_filtered_or_empty_every_time_is_an_error(llm_server, factory, reply, reason):
    llm_server.script(*[reply] * 3)
    with pytest.raises(IncompleteAnswerError) as error:
        await ChatEngine(factory).reply(ChatMemory(), "什么是好的需求？")
    assert error.value.reason == reason
    assert len(llm_server.requests) == 3


async def test_chat_burst_then_answer(llm_server, factory):
    llm_server.script(Reply(fault="429"), Reply(fault="500"), Reply(content=WHOLE))
    assert await ChatEngine(factory).reply(ChatMemory(), "hi") == WHOLE
    assert len(llm_server.requests) == 3


async def test_chat_hanging_provider_gets_three_tries_within_the_documented_bound(
    llm_server, factory
):
    factory = impatient(factory)
    llm_server.script(*[Reply(content="late", delay=30) for _ in range(5)])
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        await ChatEngine(factory).reply(ChatMemory(), "hi")
    elapsed = time.monotonic() - started
    assert len(llm_server.requests) == 3
    assert elapsed <= factory.policy("chat").worst_case_seconds(TIMEOUT) + SLACK


def test_every_srs_and_chat_model_has_the_sdk_retries_off(factory):
    for role in ("chat", "ReqParse", "ReqExplore", "ReqClarify", "DocGenerate", "evaluation"):
        assert factory.for_role(role).max_retries == 0
