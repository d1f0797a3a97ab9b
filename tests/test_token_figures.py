"""Token figures read the same in every mode: the count when every call reported it, else one
word ("unknown" / "未知"), never a 0 or a dash; and a call a time limit cut off is counted, with
its tokens unknown (the Agent showed "0 calls" and "0 tokens" after 45 s of reasoning)."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import HumanMessage

from reqstudio.document_model import parse_markdown
from reqstudio.modes.agent import AgentConfig, ReactAgent, Stats
from reqstudio.modes.review import ReviewRequest, run_review
from reqstudio.modes.rewrite.models import RewriteResult
from reqstudio.modes.srs.events import NodeFinished
from reqstudio.modes.team.events import AgentStats
from reqstudio.modes.team.events import RunFinished as TeamFinished
from reqstudio.usage import RoleUsage, UsageTracker
from reqstudio.web.agent import stats_markdown
from reqstudio.web.chat import stats_line
from reqstudio.web.review.tables import final_text
from reqstudio.web.rewrite.flow import closing_text
from reqstudio.web.srs.tables import node_output
from reqstudio.web.team import stats_markdown as team_stats
from tests.review_support import DOCUMENT, improvement, panel
from tests.scripted_server import Reply

ANSWER = "Write the final answer now"  # reqstudio/prompts/agent/answer_context.md
REASONING = "research agent"  # reqstudio/prompts/agent/react_system.md
WORD = {"en-US": "unknown", "zh-CN": "未知"}


async def test_a_call_stopped_midway_is_counted_with_its_tokens_unknown(factory, llm_server):
    llm_server.script(Reply(content="slow " * 200, chunk_chars=5, chunk_delay=0.05))
    tracker = UsageTracker()
    model = factory.for_role("chat", callbacks=[tracker])

    async def read() -> None:
        async for _ in model.astream([HumanMessage("hi")]):
            pass

    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.5):
            await read()
    usage = tracker.roles["chat"]
    assert (usage.calls, usage.unfinished) == (0, 1) and usage.seconds >= 0.4
    assert not tracker.tokens_known and tracker.as_dict()["tokens_known"] is False


async def test_a_refused_call_generated_nothing_and_leaves_the_count_known(factory, llm_server):
    llm_server.script(Reply(fault="401"))
    tracker = UsageTracker()
    model = factory.for_role("chat", callbacks=[tracker])
    with pytest.raises(Exception, match="401"):
        await model.ainvoke([HumanMessage("hi")])
    assert tracker.roles["chat"].unfinished == 0 and tracker.tokens_known


async def agent_cut_by_the_time_limit(factory, llm_server) -> Stats:
    """The reasoning call outlives the tool phase; the answer comes, with usage."""
    llm_server.script(
        Reply(match=REASONING, content="thinking " * 100, chunk_chars=9, chunk_delay=0.1),
        Reply(match=ANSWER, content="An answer.", prompt_tokens=30, completion_tokens=4),
    )
    agent = ReactAgent(factory, [], AgentConfig(language="en", max_execution_time=2.0))
    events = [e async for e in agent.run("What time is it?")]
    stats = events[-1]
    assert isinstance(stats, Stats)
    return stats


async def test_the_agent_counts_a_reasoning_call_the_time_limit_cut_off(
    factory, llm_server, language
):
    stats = await agent_cut_by_the_time_limit(factory, llm_server)
    reasoning = stats.per_model["function_call"]
    assert (reasoning.calls, reasoning.unfinished, reasoning.tokens_known) == (0, 1, False)
    assert reasoning.seconds > 0.5
    assert stats.per_model["answer"].tokens_known and not stats.tokens_known
    for code, role, cut in (
        ("en-US", "function call", "| 1 (1 stopped before the answer ended) |"),
        ("zh-CN", "工具调用", "| 1（其中 1 次在回答结束前被中止） |"),
    ):
        language(code)
        table = stats_markdown(stats)
        row = next(line for line in table.splitlines() if f"| {role} |" in line)
        assert cut in row, table
        assert f"| {WORD[code]} | {WORD[code]} |" in row, table
        assert "| 30 | 4 |" in table  # the answer's own call reported its tokens
        assert f"{WORD[code]} tokens" in table, table


def tracker_of(tokens: tuple[int, int] | None) -> UsageTracker:
    """A run's usage of one call: `tokens` (in, out) reported, or None (no usage sent)."""
    tracker = UsageTracker()
    usage = RoleUsage(model="m", calls=1, unreported=0 if tokens else 1)
    if tokens:
        usage.input_tokens, usage.output_tokens = tokens
    tracker.roles["chat"] = usage
    return tracker


def closing_lines() -> dict[str, tuple[str, str]]:
    """Each mode's closing figures for a run whose provider sent no usage, and for one that
    reported 31 + 4 tokens."""
    silent, reported = tracker_of(None), tracker_of((31, 4))
    lines = {"chat": (stats_line(silent, 1.0), stats_line(reported, 1.0))}
    node = dict(agent="ReqParse", round=0, requirements=[], counts={}, llm_calls=1)
    lines["srs step"] = (
        node_output(NodeFinished(**node)),
        node_output(NodeFinished(**node, input_tokens=31, output_tokens=4)),
    )
    member = dict(agent_id="a", role_name="r", model_calls=1)
    lines["team"] = tuple(
        team_stats(TeamFinished(reason="answered", agents=[AgentStats(**member, **tokens)]))
        for tokens in ({}, {"input_tokens": 31, "output_tokens": 4})
    )
    document = parse_markdown("# T\n\n## A\n\nText.\n")
    lines["rewrite"] = tuple(
        closing_text(RewriteResult(structured_document=document, usage=t.as_dict()), 1.0)
        for t in (silent, reported)
    )
    return lines


async def test_every_mode_says_an_unknown_count_with_one_word(factory, llm_server, language):
    llm_server.script(*panel(improvement("sec-03", "medium")))
    events = [e async for e in run_review(ReviewRequest(document=DOCUMENT), factory)]
    reviewed = events[-1].result
    for code in ("en-US", "zh-CN"):
        language(code)
        lines = closing_lines()
        silent = reviewed.model_copy(
            update={"usage": {**reviewed.usage, "total_tokens": 0, "tokens_known": False}}
        )
        lines["review"] = (final_text(silent), final_text(reviewed))
        for mode, (unknown, known) in lines.items():
            assert f"{WORD[code]} tokens" in unknown or (
                f"| {WORD[code]} | {WORD[code]} |" in unknown
            ), f"{mode}: {unknown}"
            assert "— " not in unknown and " 0 tokens" not in unknown, f"{mode}: {unknown}"
            assert WORD[code] not in known, f"{mode}: {known}"


def test_the_command_line_says_the_same_unknown_not_0(llm_server, tmp_path):
    from reqstudio.usage import known_total, token_count_text
    from tests.cli_support import QUICK, run_reqstudio

    assert known_total(tracker_of(None)) is None and known_total(tracker_of((31, 4))) == 35
    assert known_total(UsageTracker()) == 0  # no call made: nothing was spent
    assert token_count_text(tracker_of(None), "未知") == "未知"

    llm_server.script(Reply(content="An answer.", sends_usage=False))
    done = run_reqstudio(llm_server.base_url, tmp_path, "chat", "Hello?", **QUICK)
    assert done.returncode == 0, done.stderr
    assert "[unknown tokens, 1 call(s)]" in done.stderr and " 0 tokens" not in done.stderr
