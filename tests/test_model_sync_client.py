"""The model's synchronous SDK client is built when a synchronous call needs it, not before.

Every call ReqStudio makes is asynchronous; building the unused synchronous client (and its
certificate store) delayed every run's first request. A synchronous call still works, sent
where and as the asynchronous one is."""

from __future__ import annotations

import openai
from langchain_core.messages import HumanMessage

from reqstudio.llm import ModelFactory
from tests.scripted_server import Reply, ScriptedLLMServer


class CountedOpenAI(openai.OpenAI):
    built = 0

    def __init__(self, *args, **kwargs) -> None:
        CountedOpenAI.built += 1
        super().__init__(*args, **kwargs)


async def test_an_async_call_builds_no_synchronous_client(
    factory: ModelFactory, llm_server: ScriptedLLMServer, monkeypatch
):
    monkeypatch.setattr(openai, "OpenAI", CountedOpenAI)
    CountedOpenAI.built = 0
    llm_server.script(Reply(content="parsed"), Reply(content="document"))
    parse, generate = factory.for_role("ReqParse"), factory.for_role("DocGenerate")
    assert (await parse.ainvoke([HumanMessage("p")])).content == "parsed"
    assert (await generate.ainvoke([HumanMessage("g")])).content == "document"
    assert CountedOpenAI.built == 0


def test_a_synchronous_call_is_sent_like_an_async_one(
    factory: ModelFactory, llm_server: ScriptedLLMServer, monkeypatch
):
    monkeypatch.setattr(openai, "OpenAI", CountedOpenAI)
    CountedOpenAI.built = 0
    llm_server.script(
        Reply(content="streamed", prompt_tokens=5, completion_tokens=2),
        Reply(content="whole"),
        Reply(content="again"),
    )
    streamed = factory.for_role("DocGenerate")
    whole = factory.for_role("DocGenerate", streaming=False)
    assert CountedOpenAI.built == 0
    assert streamed.invoke([HumanMessage("s")]).content == "streamed"
    assert whole.invoke([HumanMessage("w")]).content == "whole"
    assert streamed.invoke([HumanMessage("a")]).content == "again"
    assert CountedOpenAI.built == 1  # on the first synchronous call, shared on the endpoint
    first, second, third = llm_server.requests[-3:]
    assert first["model"] == second["model"] == "scripted-model"
    assert first["temperature"] == 0.1  # DocGenerate's seed temperature
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    assert not second.get("stream")
    assert third["stream"] is True
    assert llm_server.authorizations[-3:] == ["Bearer sk-test-not-a-real-key"] * 3
