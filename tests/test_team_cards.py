"""Interface specs as A2A-shaped agent cards: either shape is accepted,
briefs and messages that name a skill are checked against the receiver's card, an
introduction carries the card the society knows, and the browser renders cards."""

from __future__ import annotations

import json

import pytest

from reqstudio.modes.team.events import MessageDelivered, Refused, RoleCreated
from reqstudio.modes.team.protocol import InterfaceSpec
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript
from tests.test_team_run import (
    PY_BRIEF,
    SPEC,
    answer,
    me,
    requests_of,
    role,
    run_team,
    send,
    spawn,
    turn,
)

CARD = {
    "name": "术语专家",
    "description": "统一 SRS 里的术语",
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/markdown"],
    "skills": [
        {
            "id": "glossary",
            "name": "术语表",
            "description": "给术语写定义",
            "examples": ["请定义：商品、订单"],
            "outputModes": ["text/markdown"],
        },
        {"id": "term-check", "name": "术语检查", "examples": ["检查第 3 节的用词"]},
    ],
}


def test_a_card_and_an_old_flat_spec_are_both_accepted_and_fill_each_other():
    card = InterfaceSpec.model_validate(CARD)
    assert card.services == ["术语表", "术语检查"]
    assert card.examples == ["请定义：商品、订单", "检查第 3 节的用词"]
    assert card.output_format == "text/markdown" and card.skills[0].output_modes == [
        "text/markdown"
    ]
    assert card.skill("GLOSSARY") is card.skills[0] and card.skill("术语检查") is card.skills[1]
    assert "技能（skill）：glossary（术语表：给术语写定义）" in card.as_text()

    flat = InterfaceSpec.model_validate(SPEC | {"examples": "术语：订单"})
    assert [(s.name, s.examples) for s in flat.skills] == [("术语表", ["术语：订单"])]
    assert flat.description == "术语表" and flat.default_input_modes == ["text/plain"]
    assert flat.as_text().startswith("服务：术语表\n输入格式：术语列表\n输出格式：定义表")

    with pytest.raises(ValueError):
        InterfaceSpec.model_validate({"services": ["a"]})  # the seed's fields stay required
    with pytest.raises(ValueError):
        InterfaceSpec.model_validate({"name": "x", "skills": [{"id": "", "name": "y"}]})


async def test_briefs_and_messages_are_checked_against_the_receivers_card(
    factory, llm_server: ScriptedLLMServer
):
    wrong = spawn("术语专家", PY_BRIEF | {"skill": "写代码"})
    right = spawn("术语专家", PY_BRIEF | {"skill": "glossary"})
    llm_server.script(
        Reply(match="名片检查", tool_calls=[role("术语专家", CARD), wrong]),
        *turn("root", right, match="名片检查"),
        *turn("agent-1", then="就绪。"),
        *turn("root", send("agent-1", "collaboration_request", "画架构图", {"skill": "architecture"}),
              send("agent-1", "collaboration_request", "请定义：订单", {"skill": "术语表"}),
              match="名片检查"),
        *turn("agent-1", send("root", "collaboration_response", "订单：一次交易")),
        answer("订单：一次交易。", "名片检查"),
    )  # fmt: skip
    _, events = await run_team(factory, "名片检查")
    assert events[-1].reason == "answered", events[-1]
    refused = [e for e in events if isinstance(e, Refused)]
    assert [(e.tool, e.code) for e in refused] == [
        ("spawn_agent", "unknown_skill"),
        ("send_message", "unknown_skill"),
    ]
    # the tool result lists the card's skills, so root can fix its call
    second = requests_of(llm_server, "root")[1]
    result = json.loads(
        next(
            m["content"] for m in second if m["role"] == "tool" and "unknown_skill" in m["content"]
        )
    )
    assert "glossary (术语表)" in result["message"] and "term-check (术语检查)" in result["message"]
    created = next(e for e in events if isinstance(e, RoleCreated))
    assert created.interface_spec["skills"][0]["id"] == "glossary"
    # root's contact list shows the child's card
    assert "glossary（术语表：给术语写定义）" in requests_of(llm_server, "root")[-1][0]["content"]
    asked = [
        e.message["payload"] for e in events
        if isinstance(e, MessageDelivered) and e.message["to"] == "agent-1"
    ]  # fmt: skip
    assert asked[-1] == {"skill": "术语表"}


async def test_an_introduction_carries_the_card_the_society_knows(
    factory, llm_server: ScriptedLLMServer
):
    made_up = {"services": ["写代码"], "input_format": "任意", "output_format": "代码"}
    llm_server.script(
        *turn("root", role("分析师"), role("术语专家", CARD), spawn("分析师"), spawn("术语专家"),
              match="名片介绍"),
        *turn("agent-1", then="就绪。"),
        *turn("agent-2", then="就绪。"),
        *turn("root", send("agent-1", "introduction_response", "",
                           {"target_id": "agent-2", "interface_spec": made_up}), match="名片介绍"),
        *turn("agent-1", send("root", "status_report", "已认识", {"status": "done"})),
        answer("完成。", "名片介绍"),
    )  # fmt: skip
    run, events = await run_team(factory, "名片介绍")
    assert events[-1].reason == "answered", events[-1]
    intro = next(
        e
        for e in events
        if isinstance(e, MessageDelivered) and e.message["message_type"] == "introduction_response"
    )
    card = intro.message["payload"]["interface_spec"]
    assert card["name"] == "术语专家" and [s["id"] for s in card["skills"]] == [
        "glossary",
        "term-check",
    ]
    assert run.society.registries["agent-1"]["agent-2"].interface_spec.skills[0].id == "glossary"
    assert "写代码" not in json.dumps(intro.message, ensure_ascii=False)
    assert "glossary（术语表" in requests_of(llm_server, "agent-1")[-1][0]["content"]


async def test_create_role_takes_a_card_through_the_tool_call(
    factory, llm_server: ScriptedLLMServer
):
    camel = ToolCallScript(
        "create_role",
        {"name": "评审者", "role_prompt": "你是评审者。", "interface_spec": CARD},
    )
    llm_server.script(*turn("root", camel, match="名片工具"), answer("好。", "名片工具"))
    run, events = await run_team(factory, "名片工具")
    assert not [e for e in events if isinstance(e, Refused)]
    spec = run.society.roles["评审者"].interface_spec
    assert spec is not None and spec.default_output_modes == ["text/markdown"]
    assert [s.id for s in spec.skills] == ["glossary", "term-check"]
    assert me("root") in str(requests_of(llm_server, "root")[0][0]["content"])


def test_the_browser_renders_cards_old_and_new():
    from reqstudio.web.team import card_markdown

    new = card_markdown(CARD, "术语专家")
    assert new.startswith("🪪 Card: **术语专家**")
    assert (
        "| `glossary` 术语表 | 给术语写定义 | 请定义：商品、订单 | text/plain | text/markdown |"
        in new
    )
    assert "Input: text/plain · Output: text/markdown" in new
    old = card_markdown(SPEC, "写作者")
    assert old.startswith("🪪 Card: **写作者**")
    assert "Request format: 术语列表 · Answer format: 定义表" in old
    assert "| `skill-1` 术语表 | 术语表 |  | text/plain | text/plain |" in old
    assert card_markdown(None) == ""
