"""The model factory and structured-output path, through the real client over HTTP."""

from __future__ import annotations

import openai
import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from reqstudio.answers import answer_model
from reqstudio.calls import RetryPolicy, complete
from reqstudio.errors import describe_failure
from reqstudio.llm import Endpoint, ModelFactory
from reqstudio.structured import StructuredOutputError, ask_structured, extract_json
from reqstudio.usage import UsageTracker
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript


class Requirement(BaseModel):
    id: str
    content: str


@answer_model("ReqParse", bare_array="items")  # the one call path takes registered answers only
class RequirementList(BaseModel):
    items: list[Requirement]


async def test_streaming_answer_and_usage_are_recorded_per_role(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    llm_server.script(
        Reply(content="系统应在 2 秒内响应。", prompt_tokens=30, completion_tokens=12)
    )
    tracker = UsageTracker()
    model = factory.for_role("DocGenerate", callbacks=[tracker])
    text = "".join([c.content async for c in model.astream([HumanMessage("写一条需求")])])
    assert text == "系统应在 2 秒内响应。"
    usage = tracker.roles["DocGenerate"]
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (1, 30, 12)
    sent = llm_server.requests[-1]
    assert sent["temperature"] == 0.1  # DocGenerate's seed temperature
    assert sent["stream_options"] == {"include_usage": True}


async def test_tool_call_arguments_arrive_whole(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    llm_server.script(
        Reply(tool_calls=[ToolCallScript("web_search", {"query": "IEEE 830 SRS 模板"})])
    )
    model = factory.for_role("function_call").bind_tools(
        [{"type": "function", "function": {"name": "web_search", "parameters": {}}}]
    )
    message = None
    async for chunk in model.astream([HumanMessage("找模板")]):
        message = chunk if message is None else message + chunk
    assert message.tool_calls[0]["name"] == "web_search"
    assert message.tool_calls[0]["args"] == {"query": "IEEE 830 SRS 模板"}


FAST = RetryPolicy(3, (0.01,))


async def test_rate_limit_is_retried_then_succeeds(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    llm_server.script(Reply(fault="429"), Reply(content="ok"))
    reply = await complete(factory.for_role("chat"), [HumanMessage("hi")], policy=FAST)
    assert reply.content == "ok"
    assert len(llm_server.requests) == 2


async def test_persistent_server_error_is_described_in_plain_words(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    llm_server.script(*[Reply(fault="500") for _ in range(5)])
    policy = factory.policy("chat").scaled(0.01)
    with pytest.raises(openai.InternalServerError) as error:
        await complete(factory.for_role("chat"), [HumanMessage("hi")], policy=policy)
    assert len(llm_server.requests) == 3  # chat: 3 tries, the SDK adds none
    assert "500" in describe_failure(error.value, "zh")
    assert "retries" in describe_failure(error.value, "en")


async def test_timeout_is_reported(factory: ModelFactory, llm_server: ScriptedLLMServer):
    llm_server.script(*[Reply(content="late", delay=2.5) for _ in range(2)])
    impatient = factory.settings.model_copy(update={"request_timeout": 1.0, "max_retries": 1})
    slow_factory = ModelFactory(impatient, factory.endpoint)
    with pytest.raises(openai.APITimeoutError) as error:
        await complete(
            slow_factory.for_role("chat"), [HumanMessage("hi")],
            policy=slow_factory.policy("chat").scaled(0.01),
        )  # fmt: skip
    assert len(llm_server.requests) == 2  # one retry, then the user is told
    assert "超时" in describe_failure(error.value, "zh")


def with_structured_output(factory: ModelFactory, mode: str) -> ModelFactory:
    return ModelFactory(
        factory.settings.model_copy(update={"structured_output": mode}), factory.endpoint
    )


async def test_schema_output_is_requested_when_supported(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    factory = with_structured_output(factory, "json_schema")
    llm_server.script(Reply(content='{"items": [{"id": "FR-01", "content": "用户可以登录"}]}'))
    result = await ask_structured(
        factory.for_role("ReqParse"),
        [HumanMessage("解析")],
        RequirementList,
        response_format=factory.response_format(RequirementList),
        policy=FAST,
    )
    assert result.value.items[0].id == "FR-01"
    response_format = llm_server.requests[-1]["response_format"]
    assert response_format["type"] == "json_schema"
    assert "items" in response_format["json_schema"]["schema"]["properties"]


async def test_fenced_array_with_damage_is_repaired_without_reasking(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    llm_server.script(
        Reply(content='好的：\n```json\n[{"id":"FR-01","content":"导出报表",},]\n```')
    )
    result = await ask_structured(
        factory.for_role("ReqParse"), [HumanMessage("解析")], RequirementList,
        response_format=None, policy=FAST,
    )  # fmt: skip
    assert [r.id for r in result.value.items] == ["FR-01"]
    assert result.attempts == 1
    assert "response_format" not in llm_server.requests[-1]


async def test_unparseable_answer_is_reasked_with_the_parse_error(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    llm_server.script(
        Reply(content="我认为需求如下：用户登录。"),
        Reply(content='```json\n[{"id": "FR-01", "content": "用户登录"}]\n```'),
    )
    result = await ask_structured(
        factory.for_role("ReqParse"), [HumanMessage("解析")], RequirementList,
        response_format=None, policy=FAST,
    )  # fmt: skip
    assert result.attempts == 2
    reask = llm_server.requests[-1]["messages"][-1]["content"]
    assert "could not be used" in reask and "no JSON" in reask


async def test_reasking_is_bounded(factory: ModelFactory, llm_server: ScriptedLLMServer):
    llm_server.script(*[Reply(content="no json here") for _ in range(3)])
    with pytest.raises(StructuredOutputError) as error:
        await ask_structured(
            factory.for_role("ReqParse"),
            [HumanMessage("x")],
            RequirementList,
            response_format=None,
            policy=FAST,
        )
    assert error.value.attempts == 3
    assert len(llm_server.requests) == 3
    assert error.value.finish_reason is None
    assert "unparseable JSON" in describe_failure(error.value, "en")


async def test_answers_cut_at_the_length_limit_are_named_not_called_unparseable(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    cut = '```json\n[{"id": "FR-01", "content": "用户登'
    llm_server.script(
        Reply(content="no json here"),  # a whole answer without JSON first, then two cut ones
        *[Reply(content=cut, finish_reason="length") for _ in range(2)],
    )
    with pytest.raises(StructuredOutputError) as error:
        await ask_structured(
            factory.for_role("ReqParse"), [HumanMessage("x")], RequirementList,
            response_format=None, policy=FAST,
        )  # fmt: skip
    assert error.value.finish_reason == "length" and error.value.raw_output == cut
    assert "finish reason: length" in str(error.value)
    for language, words in (("en", "finish_reason: length"), ("zh", "长度上限")):
        described = describe_failure(error.value, language)
        assert words in described and "unparseable" not in described


async def test_broken_response_body_is_retried(
    factory: ModelFactory, llm_server: ScriptedLLMServer
):
    llm_server.script(
        Reply(content="x", fault="malformed"),
        Reply(content='[{"id": "NFR-01", "content": "99.9% 可用"}]'),
    )
    result = await ask_structured(
        factory.for_role("ReqParse", streaming=False),
        [HumanMessage("x")],
        RequirementList,
        response_format=None,
        policy=FAST,
    )
    assert result.value.items[0].id == "NFR-01"
    assert result.parse_errors and result.parse_errors[0].startswith("transport")


def test_extract_json_prefers_the_fence_and_falls_back_to_brackets():
    assert extract_json('text ```json\n{"a": 1}\n``` more') == {"a": 1}
    assert extract_json("prefix [1, 2] suffix") == [1, 2]
    with pytest.raises(ValueError):
        extract_json("no structure at all")


def test_response_format_follows_the_provider(factory: ModelFactory):
    # auto: an unknown OpenAI-compatible provider gets the prompt + repair path
    assert factory.response_format(RequirementList) is None
    assert (
        with_structured_output(factory, "json_schema").response_format(RequirementList)["type"]
        == "json_schema"
    )
    openai = ModelFactory(factory.settings, Endpoint(None, "k", "gpt-4o-mini"))
    assert openai.response_format(RequirementList)["type"] == "json_schema"
    # the embedded llama-cpp-python server refuses that form and takes its own
    embedded = ModelFactory(factory.settings, Endpoint("http://127.0.0.1:1/v1", "k", "m", True))
    assert embedded.response_format(RequirementList) == {
        "type": "json_object",
        "schema": RequirementList.model_json_schema(),
    }


async def test_roles_on_one_endpoint_share_a_client_and_the_judge_keeps_its_own_key(
    settings, llm_server: ScriptedLLMServer
):
    """Each role's model is built once per factory; roles on one endpoint share the SDK
    client, and a judge with its own key is never sent with the main one."""
    from pydantic import SecretStr

    judged = settings.model_copy(update={"openai_evaluation_api_key": SecretStr("sk-judge")})
    factory = ModelFactory(judged, Endpoint(llm_server.base_url, "sk-main", "scripted-model"))
    parse, generate, judge = (
        factory.for_role(r) for r in ("ReqParse", "DocGenerate", "evaluation")
    )
    assert parse.root_async_client is generate.root_async_client
    assert judge.root_async_client is not parse.root_async_client
    assert parse.model_name == generate.model_name == "scripted-model"
    llm_server.script(Reply(content="parsed"), Reply(content="document"), Reply(content="judged"))
    answers = [
        (await model.ainvoke([HumanMessage(content=role)])).content
        for model, role in ((parse, "p"), (generate, "g"), (judge, "j"))
    ]
    assert answers == ["parsed", "document", "judged"]
    assert llm_server.authorizations == ["Bearer sk-main", "Bearer sk-main", "Bearer sk-judge"]
