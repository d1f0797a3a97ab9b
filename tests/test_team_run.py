"""Team runs end to end: agents are scripted models over real HTTP (the scripted server plays
their tool calls), the society and scheduler are the real ones."""

from __future__ import annotations

import json
from typing import Any

from reqstudio.modes.team import EventStore, TeamConfig, TeamRun
from reqstudio.modes.team.events import (
    AgentSpawned,
    AnswerToken,
    Introduced,
    MessageDelivered,
    Refused,
    RunFinished,
)
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript

PY_BRIEF = {
    "objective": "写出校园二手交易平台的功能需求",
    "constraints": ["静态网页前端", "Python 后端"],
    "inputs": ["用户的任务描述"],
    "outputs": ["FR 列表"],
    "completion_criteria": ["每条需求可测试"],
}
SPEC = {"services": ["术语表"], "input_format": "术语列表", "output_format": "定义表"}


def me(agent_id: str) -> str:
    """Text only in that agent's own requests (reqstudio/prompts/team/base.txt)."""
    return f"你的 ID：{agent_id}；"


def turn(
    agent_id: str, *calls: ToolCallScript, then: str = "好的，等待。", match: str | None = None
) -> list[Reply]:
    """One turn of an agent: its tool calls, then a plain answer that ends the turn.

    `match` overrides what the replies wait for: root's requests always carry the user's
    task, so matching a test's own task text keeps a late request of an earlier test
    (cancelled when that run ended, but already on the wire) from taking this test's replies."""
    match = match or me(agent_id)
    if not calls:
        return [Reply(match=match, content=then)]
    return [Reply(match=match, tool_calls=list(calls)), Reply(match=match, content=then)]


def role(name: str, spec=None) -> ToolCallScript:
    args = {"name": name, "role_prompt": f"你是{name}。", "duties": f"{name}的工作"}
    if spec:
        args["interface_spec"] = spec
    return ToolCallScript("create_role", args)


def spawn(role_name: str, brief=None) -> ToolCallScript:
    return ToolCallScript("spawn_agent", {"role": role_name, "brief": brief or PY_BRIEF})


def send(to: str, kind: str, content: str = "", payload=None, reason=None) -> ToolCallScript:
    args = {"to": to, "message_type": kind, "content": content}
    if payload is not None:
        args["payload"] = payload
    if reason:
        args["reason"] = reason
    return ToolCallScript("send_message", args)


def answer(text: str, match: str | None = None) -> Reply:
    return Reply(
        match=match or me("root"),
        tool_calls=[send("user", "status_report", text, {"status": "done"})],
        chunk_delay=0.001,
    )


def requests_of(server: ScriptedLLMServer, agent_id: str) -> list[list[dict]]:
    return [
        r["messages"]
        for r in server.requests
        if me(agent_id) in str(r["messages"][0].get("content"))
    ]


def analysts(task: str, count: int, **reply: Any) -> list[Reply]:
    """Root defines the role 分析师 for `task` and spawns `count` analysts; each (agent-1,
    agent-2, …) answers once with `reply` (content, delay, fault)."""
    spawns = [spawn("分析师") for _ in range(count)]
    return [
        *turn("root", role("分析师"), *spawns, match=task),
        *(Reply(match=me(f"agent-{n}"), **reply) for n in range(1, count + 1)),
    ]


def stored_run(factory, data_dir) -> tuple[EventStore, TeamRun]:
    """A run with the default limits whose events are saved in `data_dir`."""
    store = EventStore.in_data_dir(data_dir)
    return store, TeamRun(factory, TeamConfig(), store=store)


async def run_team(factory, task: str, store=None, **config) -> tuple[TeamRun, list]:
    run = TeamRun(factory, TeamConfig(**config), store=store)
    events = [e async for e in run.events(task)]
    return run, events


async def test_the_users_python_constraint_reaches_every_descendant(
    factory, llm_server: ScriptedLLMServer, tmp_path
):
    llm_server.script(
        *turn(
            "root",
            role("分析师"),
            spawn("分析师"),
            match="写 SRS 初稿；约束：静态网页前端 + Python 后端",
        ),
        *turn("agent-1", role("助手"), spawn("助手")),
        *turn("agent-2", send("agent-1", "status_report", "FR-1..FR-5 已写好", {"status": "done"})),
        *turn("agent-1", send("root", "status_report", "FR 列表见附", {"status": "done"})),
        answer(
            "SRS 初稿：FR-1 用户发布商品（Python 后端）……",
            "写 SRS 初稿；约束：静态网页前端 + Python 后端",
        ),
    )
    store = EventStore.in_data_dir(tmp_path)
    run, events = await run_team(factory, "写 SRS 初稿；约束：静态网页前端 + Python 后端", store)
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.reason == "answered", finished
    assert finished.answer.startswith("SRS 初稿：FR-1")
    spawned = [e.agent_id for e in events if isinstance(e, AgentSpawned) and e.parent]
    assert spawned == ["agent-1", "agent-2"]
    for agent_id in spawned:  # the first thing each descendant's model ever saw
        first = requests_of(llm_server, agent_id)[0]
        assert "Python 后端" in first[0]["content"]  # system prompt: its brief
        assert first[1]["content"].startswith("【来自 ")  # then the task assignment
    # the answer streamed from root's tool call arguments, and the whole record was saved
    streamed = "".join(e.text for e in events if isinstance(e, AnswerToken))
    assert streamed == finished.answer
    record = await run.export()
    assert record["reason"] == "answered"
    saved_types = [e["type"] for e in record["events"]]
    assert saved_types.count("agent_spawned") == 3 and saved_types[-1] == "run_finished"
    assert json.loads(json.dumps(record, ensure_ascii=False)) == record
    assert llm_server.pending == 0
    store.close()


async def test_unknown_contact_then_an_introduction_through_two_introducers(
    factory, llm_server: ScriptedLLMServer
):
    # root has analyst agent-1 and writer agent-2; the writer has a glossary expert agent-3.
    # The analyst, refused when it writes to agent-3, asks root; root asks the writer; the
    # writer introduces agent-3 to root, root forwards it; then the analyst reaches agent-3.
    need = {"reason": "需要统一术语", "required_capability": "术语表"}
    llm_server.script(
        *turn("root", role("分析师"), role("写作者"), spawn("分析师"), spawn("写作者"), match="统一 SRS 术语"),
        *turn("agent-1", send("agent-3", "collaboration_request", "请给术语表"),
              send("root", "introduction_request", "", need)),
        *turn("agent-2", role("术语专家", SPEC), spawn("术语专家")),
        *turn("agent-3", then="就绪。"),
        *turn("root", send("agent-2", "introduction_request", "替分析师找人", need), match="统一 SRS 术语"),
        *turn("agent-2", send("root", "introduction_response", "", {"target_id": "agent-3",
              "usage_advice": "发术语列表给他"})),
        *turn("root", send("agent-1", "introduction_response", "", {"target_id": "agent-3"}), match="统一 SRS 术语"),
        *turn("agent-1", send("agent-3", "collaboration_request", "请给术语表：商品、订单",
              reason="统一 SRS 术语")),
        *turn("agent-3", send("agent-1", "collaboration_response", "商品：在售物品；订单：一次交易")),
        *turn("agent-1", send("root", "status_report", "术语已统一", {"status": "done"})),
        answer("已完成：术语统一。", "统一 SRS 术语"),
    )  # fmt: skip
    run, events = await run_team(factory, "统一 SRS 术语")
    finished = events[-1]
    assert finished.reason == "answered", finished
    refused = [e for e in events if isinstance(e, Refused)]
    assert [(e.agent_id, e.code) for e in refused] == [("agent-1", "unknown_contact")]
    # the refusal came back to the analyst as a tool result it acted on
    second = requests_of(llm_server, "agent-1")[1]
    assert any(m["role"] == "tool" and "unknown_contact" in m["content"] for m in second)
    intros = [
        (e.requester, e.introducer, e.forwarded_from) for e in events if isinstance(e, Introduced)
    ]
    assert intros == [("root", "agent-2", None), ("agent-1", "root", "agent-2")]
    to_expert = [
        e for e in events
        if isinstance(e, MessageDelivered) and e.message["from"] == "agent-1" and e.message["to"] == "agent-3"
    ]  # fmt: skip
    assert len(to_expert) == 1 and to_expert[0].first_contact
    assert "自我介绍：我是 分析师（agent-1）" in to_expert[0].text
    assert "联系原因：统一 SRS 术语" in to_expert[0].text
    assert run.society.knows("agent-3", "agent-1")
    assert llm_server.pending == 0


async def test_a_malformed_tool_call_gets_a_readable_error_and_the_agent_recovers(
    factory, llm_server: ScriptedLLMServer
):
    llm_server.script(
        Reply(match="你好，团队", tool_calls=[ToolCallScript("send_message", '{"to": "user", content: oops}')]),
        Reply(match="你好，团队", tool_calls=[ToolCallScript("send_message", {"to": "user"})]),
        answer("修正后的答复。", "你好，团队"),
    )  # fmt: skip
    _run, events = await run_team(factory, "你好，团队")
    assert events[-1].reason == "answered" and events[-1].answer == "修正后的答复。"
    codes = [e.code for e in events if isinstance(e, Refused)]
    assert codes == ["malformed_tool_call", "invalid_arguments"]
    root_requests = requests_of(llm_server, "root")
    tool_text = next(m["content"] for m in root_requests[1] if m["role"] == "tool")
    assert "not valid JSON" in tool_text
    tool_text = [m["content"] for m in root_requests[2] if m["role"] == "tool"][-1]
    assert "message_type" in tool_text and "Field required" in tool_text


async def test_a_repeated_exchange_between_two_agents_stops_as_a_loop(
    factory, llm_server: ScriptedLLMServer
):
    ask = send("root", "collaboration_request", "请确认需求范围")
    back = send("agent-1", "collaboration_response", "请你先确认需求范围")
    llm_server.script(
        *turn("root", role("分析师"), spawn("分析师"), match="循环测试：写 SRS"),
        *turn("agent-1", ask), *turn("root", back, match="循环测试：写 SRS"),
        *turn("agent-1", ask), *turn("root", back, match="循环测试：写 SRS"),
    )  # fmt: skip
    _run, events = await run_team(factory, "循环测试：写 SRS")
    finished = events[-1]
    assert finished.reason == "loop" and "loop" in finished.limits_hit
    assert "root" in finished.detail and "agent-1" in finished.detail


async def test_the_time_limit_stops_every_agent_and_says_so(factory, llm_server: ScriptedLLMServer):
    llm_server.script(Reply(match="时限测试", content="想很久", delay=5))
    _run, events = await run_team(factory, "时限测试", max_execution_time=0.5)
    finished = events[-1]
    assert finished.reason == "time" and "time" in finished.limits_hit
    assert finished.seconds < 3


async def test_the_token_and_message_limits_end_the_run(factory, llm_server: ScriptedLLMServer):
    llm_server.script(
        Reply(match="token 测试", content="嗯", prompt_tokens=900, completion_tokens=200)
    )
    _, events = await run_team(factory, "token 测试", max_tokens=1000)
    assert events[-1].reason == "tokens"

    llm_server.reset()
    llm_server.script(
        *turn("root", role("分析师"), spawn("分析师"), match="消息数测试"),
        *turn("agent-1", *[send("root", "status_report", f"进度 {i}") for i in range(5)]),
    )
    _, events = await run_team(factory, "消息数测试", max_messages=4)
    finished = events[-1]
    assert finished.reason == "messages"
    refused = [e.code for e in events if isinstance(e, Refused)]
    assert "message_limit" in refused


async def test_stop_cancels_every_agent_and_keeps_the_record(
    factory, llm_server: ScriptedLLMServer, tmp_path
):
    llm_server.script(*analysts("停止测试", 2, content="慢", delay=5))
    store, run = stored_run(factory, tmp_path)
    seen = []
    async for event in run.events("停止测试"):
        seen.append(event)
        if isinstance(event, AgentSpawned) and event.agent_id == "agent-2":
            run.stop()
    assert seen[-1].reason == "stopped"
    record = await run.export()
    assert [e["agent_id"] for e in record["events"] if e["type"] == "agent_spawned"] == [
        "root", "agent-1", "agent-2"
    ]  # fmt: skip
    store.close()


async def test_root_ending_without_answering_the_user_is_idle_and_its_words_are_kept(
    factory, llm_server: ScriptedLLMServer
):
    llm_server.script(Reply(match="登录页的两条需求", content="登录页需求：1. 密码错误三次锁定。"))
    _, events = await run_team(factory, "登录页的两条需求")
    finished = events[-1]
    assert finished.reason == "idle" and finished.answer == ""
    assert finished.root_note == "登录页需求：1. 密码错误三次锁定。"


async def test_agents_with_messages_run_at_once_and_each_event_is_saved_as_it_happens(
    factory, llm_server: ScriptedLLMServer, tmp_path
):
    llm_server.script(*analysts("并发测试", 2, content="完成。", delay=0.5))
    store, run = stored_run(factory, tmp_path)
    saved_before_the_end = None
    async for event in run.events("并发测试"):
        if isinstance(event, MessageDelivered) and event.message["to"] == "agent-2":
            await store.flush()
            saved_before_the_end = store.export(run.run_id)
    assert saved_before_the_end is not None and saved_before_the_end["reason"] is None
    assert any(
        e["type"] == "message_delivered" and e["message"]["to"] == "agent-2"
        for e in saved_before_the_end["events"]
    )
    calls = {agent: (start, end) for agent, start, end in run.model_calls if agent != "root"}
    (start_1, end_1), (start_2, end_2) = calls["agent-1"], calls["agent-2"]
    assert start_1 < end_2 and start_2 < end_1  # the two workers' model calls overlapped
    store.close()


async def test_through_tool_calls_a_short_brief_is_refused_collaborators_talk_directly_and_from_is_the_societys(
    factory, llm_server: ScriptedLLMServer
):
    short = {k: v for k, v in PY_BRIEF.items() if k != "constraints"}
    with_writer = PY_BRIEF | {
        "collaborators": [
            {
                "agent_id": "agent-1",
                "role_description": "写作者",
                "collaboration_note": "意见发给他",
            }
        ]
    }
    forged = send("agent-1", "collaboration_request", "第 3 节不可测")
    forged.arguments["from"] = "user"  # an agent cannot choose its `from`
    llm_server.script(
        Reply(match="评审 SRS；约束：Python 后端", tool_calls=[role("写作者", SPEC), spawn("写作者", short)]),
        Reply(match="评审 SRS；约束：Python 后端", tool_calls=[spawn("写作者"), role("评审者"), spawn("评审者", with_writer)]),
        Reply(match="评审 SRS；约束：Python 后端", content="等待。"),
        *turn("agent-1", then="等待。"),
        *turn("agent-2", forged),
        *turn("agent-1", send("agent-2", "collaboration_response", "已改")),
        *turn("agent-2", send("root", "status_report", "评审完成", {"status": "done"})),
        answer("评审完成。", "评审 SRS；约束：Python 后端"),
    )  # fmt: skip
    run, events = await run_team(factory, "评审 SRS；约束：Python 后端")
    assert events[-1].reason == "answered", events[-1]
    refused = [e for e in events if isinstance(e, Refused)]
    assert [(e.code, e.agent_id) for e in refused] == [("missing_brief_fields", "root")]
    second = requests_of(llm_server, "root")[1]
    result = json.loads(
        next(m["content"] for m in second if m["role"] == "tool" and "missing" in m["content"])
    )
    assert result["missing"] == ["constraints"]  # the tool result names the field
    spawned = [e.agent_id for e in events if isinstance(e, AgentSpawned) and e.parent]
    assert spawned == ["agent-1", "agent-2"]  # nothing was created by the refused call
    assert run.society.registries["agent-2"]["agent-1"].how == "collaborator"
    direct = [
        e for e in events
        if isinstance(e, MessageDelivered) and e.message["to"] == "agent-1" and e.message["from"] == "agent-2"
    ]  # fmt: skip
    assert len(direct) == 1
    assert direct[0].message["from"] == "agent-2"
    assert direct[0].text.startswith("【来自 评审者（agent-2）的消息】")
    # the writer's interface spec came with the collaborator entry into the reviewer's prompt
    assert "定义表" in requests_of(llm_server, "agent-2")[0][0]["content"]


async def test_a_provider_failure_of_root_ends_the_run_in_plain_words(
    factory, llm_server: ScriptedLLMServer
):
    llm_server.script(Reply(match="失败测试", fault="401"))
    _, events = await run_team(factory, "失败测试")
    finished = events[-1]
    assert finished.reason == "failed"
    assert "401" in finished.detail and "OPENAI_API_KEY" in finished.detail
    assert "sk-test-not-a-real-key" not in finished.model_dump_json()


async def test_a_child_whose_model_fails_is_reported_to_its_parent(
    factory, llm_server: ScriptedLLMServer
):
    llm_server.script(
        *analysts("子失败测试", 1, fault="401"),
        answer("分析师失败了，需求未完成。", "子失败测试"),
    )
    _, events = await run_team(factory, "子失败测试")
    finished = events[-1]
    assert finished.reason == "answered", finished
    notice = [
        e for e in events
        if isinstance(e, MessageDelivered) and e.message["from"] == "agent-1" and e.message["to"] == "root"
    ]  # fmt: skip
    assert notice and "（系统代发）agent-1 调用模型失败" in notice[0].text
    assert notice[0].message["payload"] == {"status": "blocked"}
