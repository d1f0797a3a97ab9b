"""Edited and regenerated messages rewind a mode's memory."""

from __future__ import annotations

from reqstudio.modes.agent.state import AgentMemory, ToolResult
from reqstudio.modes.chat import ChatMemory


def test_chat_memory_forgets_the_edited_turn_and_everything_after():
    memory = ChatMemory()
    for number in (1, 2, 3):
        memory.add("user", f"q{number}", f"m{number}")
        memory.add("assistant", f"a{number}", f"m{number}")
    assert memory.rewind_to("m2") == 4
    assert [m.content for m in memory.as_messages()] == ["q1", "a1"]
    assert memory.rewind_to("unknown") == 0 and memory.rewind_to(None) == 0
    reloaded = ChatMemory.load(memory.dump())  # the ids survive the thread's metadata
    assert reloaded.rewind_to("m1") == 2 and reloaded.turns == []


def test_chat_memory_of_older_threads_loads_without_ids():
    memory = ChatMemory.load(
        [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    )
    assert memory.rewind_to("m1") == 0 and len(memory.turns) == 2


def test_agent_memory_forgets_turns_and_their_tool_records():
    memory = AgentMemory()
    result = ToolResult(
        call_id="c1", tool="web_search", arguments={"query": "x"}, ok=True, text="hit"
    )
    for number in (1, 2, 3):
        before = len(memory.turns)
        memory.record(f"q{number}", f"a{number}", [result])
        memory.tag_turns_since(before, f"m{number}")
    assert memory.rewind_to("m2") == 2
    assert [t.question for t in memory.turns] == ["q1"]
    assert [r.turn for r in memory.tool_records] == [1]
    reloaded = AgentMemory.load(memory.dump())
    assert reloaded.turns[0].message_id == "m1"
