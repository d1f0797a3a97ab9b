"""Every mode speaks the one event union (`reqstudio.events`): each mode runs once through its
entry (`reqstudio.modes.<mode>.entry.run`, the same shape for all six) against the scripted
provider, and every event it yields is one of the union's eight types."""

from __future__ import annotations

import inspect
from collections import Counter

import pytest

from reqstudio.events import EVENT_TYPES, EventAdapter, in_union
from reqstudio.modes.agent import AgentConfig
from reqstudio.modes.agent.entry import AgentRequest
from reqstudio.modes.agent.entry import run as run_agent
from reqstudio.modes.chat.entry import ChatRequest
from reqstudio.modes.chat.entry import run as run_chat
from reqstudio.modes.review import ReviewRequest
from reqstudio.modes.review.entry import run as run_review
from reqstudio.modes.rewrite import ClarificationItem, RewriteRequest
from reqstudio.modes.rewrite.entry import run as run_rewrite
from reqstudio.modes.srs.entry import run as run_srs
from reqstudio.modes.team import TeamConfig
from reqstudio.modes.team.entry import run as run_team
from tests import rewrite_support as rewrite
from tests.review_support import DOCUMENT, improvement, panel
from tests.scripted_server import Reply
from tests.test_agent_engine import FakeSearchBackend, answer_reply, search_call
from tests.test_srs_engine import REQUEST as SRS_REQUEST
from tests.test_srs_engine import script_two_rounds
from tests.test_team_run import answer as team_answer

ENTRIES = [run_chat, run_agent, run_srs, run_review, run_rewrite, run_team]


def test_every_mode_has_the_same_entry_shape():
    for entry in ENTRIES:
        parameters = inspect.signature(entry).parameters
        assert list(parameters)[:5] == ["request", "models", "checkpointer", "thread_id", "resume"]
        assert all(parameters[p].kind is inspect.Parameter.KEYWORD_ONLY for p in
                   ("checkpointer", "thread_id", "resume"))  # fmt: skip


def outside_the_union(events: list) -> list:
    return [e for e in events if not in_union(e)]


async def collected(stream) -> list:
    return [event async for event in stream]


def check(events: list, last: str) -> Counter:
    assert events, "the mode yielded nothing"
    assert outside_the_union(events) == []
    assert events[0].type == "started" and events[-1].type == last
    for event in events:  # a dumped event reads back as its core type
        assert EventAdapter.validate_python(event.model_dump()).type == event.type
    return Counter(e.type for e in events)


async def test_chat_emits_only_union_events(llm_server, factory):
    llm_server.script(Reply(content="A requirement says what the system shall do."))
    events = await collected(run_chat(ChatRequest(text="What is a requirement?"), factory))
    kinds = check(events, "finished")
    assert kinds["token"] >= 1 and events[-1].result.startswith("A requirement")


async def test_agent_emits_only_union_events(llm_server, factory):
    from reqstudio.tools.web_search import WebSearch

    llm_server.script(
        Reply(content="Search.", tool_calls=[search_call("ISO 29148")]),
        Reply(content="That is enough."),
        answer_reply("ISO/IEC/IEEE 29148 replaced IEEE 830."),
    )
    request = AgentRequest(question="Which standard replaced IEEE 830?")
    tools = [WebSearch(FakeSearchBackend()).as_tool()]
    events = await collected(
        run_agent(request, factory, tools=tools, config=AgentConfig(language="en"))
    )
    kinds = check(events, "finished")
    assert {"step_started", "step_finished", "token", "notice"} <= set(kinds)


async def test_srs_emits_only_union_events(llm_server, factory):
    script_two_rounds(llm_server)
    events = await collected(run_srs(SRS_REQUEST, factory))
    kinds = check(events, "finished")
    assert {"step_started", "step_finished", "token", "notice"} <= set(kinds)


async def test_review_emits_only_union_events(llm_server, factory):
    llm_server.script(*panel(improvement("sec-03", "medium"), improvement("sec-04", "low")))
    events = await collected(run_review(ReviewRequest(document=DOCUMENT), factory))
    kinds = check(events, "finished")
    assert {"step_started", "step_finished"} <= set(kinds)


async def test_rewrite_emits_only_union_events(llm_server, factory):
    llm_server.script(rewrite.outline_reply(), *rewrite.fill_replies(), rewrite.review_reply())
    request = RewriteRequest(
        original_content=rewrite.ORIGINAL_EN,
        clarifications=[ClarificationItem(**c) for c in rewrite.CLARIFICATIONS],
    )
    events = await collected(run_rewrite(request, factory))
    kinds = check(events, "finished")
    assert {"step_started", "step_finished", "token", "notice"} <= set(kinds)


async def test_team_emits_only_union_events(llm_server, factory):
    llm_server.script(team_answer("需求：登录失败三次锁定。"))
    events = await collected(run_team("整理登录页的需求", factory, config=TeamConfig()))
    kinds = check(events, "finished")
    assert events[-1].reason == "answered" and kinds["notice"] >= 1


@pytest.mark.parametrize("thing", [{"type": "node_started"}, object()])
def test_something_outside_the_union_is_found(thing):
    assert not in_union(thing) and "node_started" not in EVENT_TYPES
