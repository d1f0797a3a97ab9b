"""Seed 004, acceptance criteria 1.1-10.6, through the society's API (the tools agents call
go to these same methods; tests/test_team_run.py drives them through scripted models)."""

from __future__ import annotations

import json

import pytest

from reqstudio.modes.team.context import initial_context, system_prompt
from reqstudio.modes.team.events import ContactAdded, Introduced, MessageDelivered, Refused
from reqstudio.modes.team.protocol import ROOT_ID, USER_ID, format_delivery
from reqstudio.modes.team.society import AgentSociety, SocietyLimits
from reqstudio.prompts import render_prompt
from tests.test_team_run import PY_BRIEF

SPEC = {
    "services": ["非功能需求分析"],
    "input_format": "系统描述 + 关注的质量属性",
    "output_format": "NFR 列表（可度量）",
    "examples": ["分析校园二手平台的性能需求"],
}


def brief(**changes):
    value = {**PY_BRIEF, "outputs": ["FR 列表（Markdown）"]}
    value.update(changes)
    return {k: v for k, v in value.items() if v is not None}


def spawn(society, parent, role, **brief_changes):
    if role not in society.roles:
        society.create_role(parent, role, f"你是{role}。", interface_spec=SPEC)
    outcome = society.spawn_agent(parent, role, brief(**brief_changes))
    assert outcome.ok, outcome.message
    return outcome.data["agent_id"]


def writer_and_reviewer(society, collaborator: dict, **brief_changes) -> tuple[str, str]:
    """A writer, then a reviewer whose brief names the writer as a collaborator (with
    `collaborator`'s fields); their ids."""
    writer = spawn(society, ROOT_ID, "写作者")
    reviewer = spawn(
        society,
        ROOT_ID,
        "评审者",
        collaborators=[{"agent_id": writer, **collaborator}],
        **brief_changes,
    )
    return writer, reviewer


def ask_introduction(society, sender: str, to: str, reason: str, capability: str):
    """`sender` asks `to` for an introduction to someone with `capability`."""
    payload = {"reason": reason, "required_capability": capability}
    return society.send_message(sender, to, "introduction_request", "", payload)


@pytest.fixture
def society():
    return AgentSociety()


def refusals(society, code):
    return [e for e in society.events if isinstance(e, Refused) and e.code == code]


# --- Requirement 1: Task Brief ------------------------------------------------------------


def test_1_1_spawn_requires_a_brief(society):
    society.create_role(ROOT_ID, "分析师", "你是分析师。")
    outcome = society.spawn_agent(ROOT_ID, "分析师", None)
    assert not outcome.ok and outcome.code == "missing_brief_fields"
    assert list(society.agents) == [ROOT_ID]


@pytest.mark.parametrize(
    "field", ["objective", "constraints", "inputs", "outputs", "completion_criteria"]
)
def test_1_2_and_1_4_each_required_field_missing_is_refused_by_name(society, field):
    society.create_role(ROOT_ID, "分析师", "你是分析师。")
    outcome = society.spawn_agent(ROOT_ID, "分析师", brief(**{field: None}))
    assert not outcome.ok
    assert outcome.code == "missing_brief_fields"
    assert outcome.data["missing"] == [field]
    assert field in json.loads(outcome.text())["message"]
    assert len(society.agents) == 1  # no child created
    assert refusals(society, "missing_brief_fields")


def test_1_4_an_empty_field_counts_as_missing(society):
    society.create_role(ROOT_ID, "分析师", "你是分析师。")
    outcome = society.spawn_agent(ROOT_ID, "分析师", brief(constraints=[], objective="  "))
    assert outcome.data["missing"] == ["objective", "constraints"]


def test_1_3_optional_fields_are_accepted(society):
    writer, child = writer_and_reviewer(
        society,
        {"role_description": "写作者", "collaboration_note": "评审其初稿"},
        references=["IEEE 830"],
        priority="high",
    )
    kept = society.agents[child].brief
    assert kept.references == ["IEEE 830"] and kept.priority == "high"
    assert kept.collaborators[0].agent_id == writer


def test_1_5_the_brief_is_in_the_childs_initial_context(society):
    child = spawn(society, ROOT_ID, "分析师")
    context = initial_context(society, child)
    text = "\n".join(str(m.content) for m in context)
    assert "写出校园二手交易平台的功能需求" in text
    assert "Python 后端" in text and "静态网页前端" in text
    assert "完成标准" in text


# --- Requirement 2: Contact Registry -----------------------------------------------------


def test_2_1_and_2_2_a_child_gets_a_registry_with_its_creator(society):
    child = spawn(society, ROOT_ID, "分析师")
    entry = society.registries[child][ROOT_ID]
    assert entry.how == "creator"
    assert [c.agent_id for c in society.contacts(child)] == [ROOT_ID]


def test_2_3_root_knows_only_the_user_and_2_4_user_knows_only_root(society):
    assert [c.agent_id for c in society.contacts(ROOT_ID)] == [USER_ID]
    assert [c.agent_id for c in society.contacts(USER_ID)] == [ROOT_ID]


def test_2_5_the_child_is_added_to_the_parents_registry(society):
    child = spawn(society, ROOT_ID, "分析师")
    assert society.registries[ROOT_ID][child].how == "child"


def test_2_6_sending_to_an_unknown_agent_is_refused(society):
    a = spawn(society, ROOT_ID, "分析师")
    b = spawn(society, ROOT_ID, "写作者")
    outcome = society.send_message(a, b, "collaboration_request", "帮我看看")
    assert not outcome.ok and outcome.code == "unknown_contact"
    assert "introduction_request" in outcome.message  # tells the agent what to do
    assert refusals(society, "unknown_contact")
    assert all(m.sender != a for m in society.agents[b].inbox)


def test_2_7_an_entry_has_id_role_spec_and_source(society):
    child = spawn(society, ROOT_ID, "分析师")
    entry = society.registries[ROOT_ID][child]
    assert entry.agent_id == child and entry.role_name == "分析师"
    assert entry.interface_spec is not None and entry.interface_spec.services == ["非功能需求分析"]
    assert entry.introduced_by == "society"


def test_2_8_and_7_2_collaborators_in_the_brief_join_the_childs_registry(society):
    writer, reviewer = writer_and_reviewer(
        society, {"role_description": "SRS 写作者", "collaboration_note": "初稿找他"}
    )
    entry = society.registries[reviewer][writer]
    assert entry.how == "collaborator" and entry.introduced_by == ROOT_ID
    assert "初稿找他" in entry.note


def test_collaborators_must_be_known_to_the_parent(society):
    a = spawn(society, ROOT_ID, "分析师")
    b = spawn(society, a, "助手")
    outcome = society.spawn_agent(
        ROOT_ID, "分析师", brief(collaborators=[{"agent_id": b}])
    )  # root never met b
    assert outcome.code == "unknown_contact"


# --- Requirement 3: introductions ---------------------------------------------------------


def test_3_1_and_3_2_an_introduction_request_needs_reason_and_capability(society):
    a = spawn(society, ROOT_ID, "分析师")
    bad = society.send_message(a, ROOT_ID, "introduction_request", "找人", {"reason": "需要 NFR"})
    assert bad.code == "invalid_payload" and "required_capability" in bad.message
    good = ask_introduction(society, a, ROOT_ID, "需要 NFR", "性能")
    assert good.ok
    assert "required_capability: 性能" in format_delivery(society.agents[ROOT_ID].inbox[-1])


def test_3_3_3_4_3_7_3_8_an_introduction_response_adds_the_target_with_its_spec(society):
    a = spawn(society, ROOT_ID, "分析师")
    nfr = spawn(society, ROOT_ID, "NFR 专家")
    outcome = society.send_message(
        ROOT_ID, a, "introduction_response", "", {"target_id": nfr, "usage_advice": "发需求给他"}
    )
    assert outcome.ok
    entry = society.registries[a][nfr]
    assert entry.how == "introduction" and entry.introduced_by == ROOT_ID
    assert entry.interface_spec.output_format == "NFR 列表（可度量）"
    delivered = society.agents[a].inbox[-1]
    assert delivered.payload["target_id"] == nfr
    assert delivered.payload["role_name"] == "NFR 专家"
    assert delivered.payload["interface_spec"]["services"] == ["非功能需求分析"]
    assert delivered.payload["usage_advice"] == "发需求给他"
    assert any(
        isinstance(e, Introduced) and e.requester == a and e.target == nfr for e in society.events
    )


def test_an_introducer_can_only_introduce_whom_it_knows(society):
    a = spawn(society, ROOT_ID, "分析师")
    b = spawn(society, ROOT_ID, "写作者")
    outcome = society.send_message(b, ROOT_ID, "introduction_response", "", {"target_id": a})
    assert outcome.code == "unknown_contact"  # b does not know a


def test_3_5_and_3_6_an_introducer_asks_its_contacts_and_forwards_the_answer(society):
    # root -> writer -> helper; analyst (root's child) needs the helper, whom root does not know.
    analyst = spawn(society, ROOT_ID, "分析师")
    writer = spawn(society, ROOT_ID, "写作者")
    helper = spawn(society, writer, "术语专家")
    # analyst asks root; root does not know a glossary expert and asks writer (3.5)
    assert ask_introduction(society, analyst, ROOT_ID, "术语", "术语表").ok
    assert ask_introduction(society, ROOT_ID, writer, "替分析师找", "术语表").ok
    # writer knows the helper and answers root; root now knows the helper
    assert society.send_message(
        writer, ROOT_ID, "introduction_response", "", {"target_id": helper}
    ).ok
    assert society.knows(ROOT_ID, helper)
    # root forwards it to the analyst (3.6), who can now reach the helper directly
    assert society.send_message(
        ROOT_ID, analyst, "introduction_response", "", {"target_id": helper}
    ).ok
    forwarded = [e for e in society.events if isinstance(e, Introduced) and e.requester == analyst]
    assert forwarded[0].introducer == ROOT_ID and forwarded[0].forwarded_from == writer
    assert society.send_message(analyst, helper, "collaboration_request", "请给出术语表").ok


# --- Requirement 4: Interface Spec --------------------------------------------------------


def test_4_1_and_4_2_create_role_takes_an_optional_interface_spec(society):
    assert society.create_role(ROOT_ID, "无接口", "你是助手。").ok
    assert society.roles["无接口"].interface_spec is None
    assert society.create_role(ROOT_ID, "有接口", "你是 NFR 专家。", interface_spec=SPEC).ok
    spec = society.roles["有接口"].interface_spec
    assert (spec.services, spec.input_format, spec.output_format, spec.examples) == (
        ["非功能需求分析"], "系统描述 + 关注的质量属性", "NFR 列表（可度量）", ["分析校园二手平台的性能需求"]
    )  # fmt: skip
    bad = society.create_role(ROOT_ID, "坏接口", "x", interface_spec={"services": ["a"]})
    assert bad.code == "invalid_interface_spec" and "input_format" in bad.message


def test_4_3_an_introduction_carries_the_interface_spec_into_the_receivers_prompt(society):
    a = spawn(society, ROOT_ID, "分析师")
    nfr = spawn(society, ROOT_ID, "NFR 专家")
    society.send_message(ROOT_ID, a, "introduction_response", "", {"target_id": nfr})
    prompt = system_prompt(society, a)
    assert nfr in prompt and "NFR 列表（可度量）" in prompt  # 4.4: the sender sees the format


# --- Requirement 5: one-sided acquaintance and first contact ------------------------------


def test_5_1_to_5_3_first_message_makes_contact_mutual_with_a_self_introduction(society):
    a = spawn(society, ROOT_ID, "分析师")
    nfr = spawn(society, ROOT_ID, "NFR 专家")
    society.send_message(ROOT_ID, a, "introduction_response", "", {"target_id": nfr})
    assert not society.knows(nfr, a)  # one-sided
    assert society.send_message(a, nfr, "collaboration_request", "请分析性能", reason="需要 NFR").ok
    assert society.registries[nfr][a].how == "first_message"
    first = society.agents[nfr].inbox[-1]
    assert first.self_introduction.startswith("我是 分析师（" + a + "）")
    assert "职责：" in first.self_introduction and "联系原因：需要 NFR" in first.self_introduction
    assert "自我介绍：我是 分析师" in format_delivery(first)
    society.send_message(a, nfr, "collaboration_request", "补充一点")
    assert society.agents[nfr].inbox[-1].self_introduction is None  # only the first


def test_5_4_to_5_7_the_receiver_replies_to_from_without_naming_itself(society):
    a = spawn(society, ROOT_ID, "分析师")
    nfr = spawn(society, ROOT_ID, "NFR 专家")
    society.send_message(ROOT_ID, a, "introduction_response", "", {"target_id": nfr})
    society.send_message(a, nfr, "collaboration_request", "请分析性能")
    received = society.agents[nfr].inbox[-1]
    assert received.as_dict()["from"] == a
    reply = society.send_message(received.sender, received.sender, "status_report", "x")
    assert reply.code == "self_message" or not reply.ok  # from is never chosen by the agent
    assert society.send_message(nfr, received.sender, "collaboration_response", "P95 < 2 s").ok
    assert society.agents[a].inbox[-1].sender == nfr


# --- Requirement 6: prompts ------------------------------------------------------------------


def test_6_prompts_explain_briefs_contacts_introductions_and_constraints():
    root = render_prompt("team/root.txt")
    for field in ("objective", "constraints", "inputs", "outputs", "completion_criteria"):
        assert field in root  # 6.1, 6.3
    assert "静态网页" in root and "Python" in root  # 6.5
    base = render_prompt(
        "team/base.txt",
        agent_id="agent-1",
        role_name="分析师",
        role_prompt="",
        brief="",
        parent="root",
        contacts=[],
    )
    assert "联系人注册表" in base and "unknown_contact" in base  # 6.2
    assert "introduction_request" in base and "introduction_response" in base  # 6.4
    assert "转发" in base  # answering by asking around and forwarding
    assert "静态网页" in base and "Python" in base  # 6.5


# --- Requirement 7: preset collaborators --------------------------------------------------


def test_7_1_7_3_7_4_a_preset_collaborator_is_reachable_without_an_introduction(society):
    writer, reviewer = writer_and_reviewer(
        society,
        {
            "role_description": "写作者",
            "collaboration_note": "评审意见发给他",
            "interface_spec": SPEC,
        },
    )
    assert society.send_message(reviewer, writer, "collaboration_request", "第 3 节不可测").ok
    assert not refusals(society, "unknown_contact")


def test_7_5_and_7_6_a_role_prompt_may_name_whom_to_contact(society):
    writer = spawn(society, ROOT_ID, "写作者")
    society.create_role(ROOT_ID, "评审者", f"你是评审者。文档问题请联系 {writer}（写作者）。")
    reviewer = spawn(society, ROOT_ID, "评审者")
    assert f"文档问题请联系 {writer}" in system_prompt(society, reviewer)


# --- Requirement 8: message types ----------------------------------------------------------


def test_8_1_the_six_message_types_and_only_those(society):
    a = spawn(society, ROOT_ID, "分析师")
    for kind in ("status_report", "collaboration_request", "collaboration_response"):
        assert society.send_message(a, ROOT_ID, kind, "x").ok
    assert society.send_message(a, ROOT_ID, "gossip", "x").code == "invalid_message_type"


def test_8_2_a_task_assignment_carries_a_brief(society):
    a = spawn(society, ROOT_ID, "分析师")
    bad = society.send_message(ROOT_ID, a, "task_assignment", "再做一件事", {"objective": "x"})
    assert bad.code == "invalid_payload" and "constraints" in bad.message
    assert society.send_message(ROOT_ID, a, "task_assignment", "再做一件事", brief()).ok
    assert "Python 后端" in format_delivery(society.agents[a].inbox[-1])


def test_8_3_to_8_5_introduction_payloads_are_validated(society):
    a = spawn(society, ROOT_ID, "分析师")
    assert (
        society.send_message(a, ROOT_ID, "introduction_request", "", {}).code == "invalid_payload"
    )
    assert (
        society.send_message(ROOT_ID, a, "introduction_response", "", {}).code == "invalid_payload"
    )
    status = society.send_message(a, ROOT_ID, "status_report", "", {"status": "finished?"})
    assert status.code == "invalid_payload"


# --- Requirement 9: from ---------------------------------------------------------------------


def test_9_1_and_9_5_from_is_filled_by_the_society(society):
    a = spawn(society, ROOT_ID, "分析师")
    # even a payload that claims another sender cannot change `from`
    society.send_message(a, ROOT_ID, "status_report", "完成", {"status": "done", "from": "user"})
    delivered = [e for e in society.events if isinstance(e, MessageDelivered)][-1]
    assert delivered.message["from"] == a


def test_9_2_9_3_9_4_the_delivered_text_names_sender_role_and_how_to_reply(society):
    a = spawn(society, ROOT_ID, "分析师")
    society.send_message(a, ROOT_ID, "status_report", "FR 已完成", {"status": "done"})
    text = format_delivery(society.agents[ROOT_ID].inbox[-1])
    assert f"分析师（{a}）" in text and "FR 已完成" in text
    assert f"send_message(to='{a}', ...)" in text


# --- Requirement 10: presentation --------------------------------------------------------


def test_10_1_to_10_5_the_exact_presentation(society):
    a = spawn(society, ROOT_ID, "分析师")
    society.send_message(a, ROOT_ID, "status_report", "FR 已完成")
    lines = format_delivery(society.agents[ROOT_ID].inbox[-1]).splitlines()
    assert lines[0] == f"【来自 分析师（{a}）的消息】"
    assert "FR 已完成" in lines
    assert lines[-1] == f"如需回复，请使用 send_message(to='{a}', ...)"
    society.submit_task("写 SRS")
    user_lines = format_delivery(society.agents[ROOT_ID].inbox[-1]).splitlines()
    assert user_lines[0] == "【来自用户的消息】"
    assert user_lines[-1] == "如需回复，请使用 send_message(to='user', ...)"


def test_10_6_messages_enter_the_context_in_that_format(society):
    a = spawn(society, ROOT_ID, "分析师")
    context = initial_context(society, a)
    assert context[1].content.startswith(f"【来自 {society.role_name_of(ROOT_ID)}（root）的消息】")


# --- limits the society enforces ---------------------------------------------------------------


def test_agent_depth_and_message_limits_are_refusals_the_agent_can_read():
    society = AgentSociety(SocietyLimits(max_agents=3, max_depth=1, max_messages=5))
    a = spawn(society, ROOT_ID, "分析师")
    assert society.spawn_agent(a, "分析师", brief()).code == "depth_limit"
    spawn(society, ROOT_ID, "写作者")
    assert society.spawn_agent(ROOT_ID, "分析师", brief()).code == "agent_limit"
    assert society.limits_hit == ["depth", "agents"]
    while society.send_message(a, ROOT_ID, "status_report", f"进度 {len(society.messages)}").ok:
        pass
    assert society.halt.reason == "messages"


def test_a_repeated_exchange_is_a_loop():
    society = AgentSociety()
    a = spawn(society, ROOT_ID, "分析师")
    for _ in range(2):
        society.send_message(a, ROOT_ID, "collaboration_request", "请确认")
        society.send_message(ROOT_ID, a, "collaboration_response", "请先确认")
    assert society.halt is not None and society.halt.reason == "loop"


def test_every_contact_change_is_an_event(society):
    spawn(society, ROOT_ID, "分析师")
    owners = [(e.owner, e.contact["how"]) for e in society.events if isinstance(e, ContactAdded)]
    assert (ROOT_ID, "child") in owners and ("agent-1", "creator") in owners
