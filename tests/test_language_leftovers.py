"""Texts a user read in the wrong language or with a wrong plural (issue 18, item 7): the web
search's exception, "1 rounds" / "1 agents", and raw "default" / "none" in the settings."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from chainlit.context import ChainlitContext, context_var
from chainlit.emitter import BaseChainlitEmitter
from chainlit.session import HTTPSession
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from agents.react import AgentConfig, ReactAgent, ToolCallFinished
from agents.review import ReviewRequest, run_review
from reqstudio.messages import text
from tests.review_support import DOCUMENT, improvement, panel
from tests.scripted_server import Reply, ToolCallScript
from tools.web_search import WebSearch
from ui.agent import tool_result_text
from ui.review.tables import final_text
from ui.texts import counted

ANSWER = "Write the final answer now"  # prompts/agent/answer_context.md


@pytest.fixture
def language() -> Iterator[Callable[[str], None]]:
    """Sets the browser language of a Chainlit context for the test's code (async tests:
    a Chainlit context needs a running loop)."""

    def use(code: str) -> None:
        session = HTTPSession(id="language-test", client_type="webapp", thread_id="t-1")
        session.language = code
        context_var.set(ChainlitContext(session, BaseChainlitEmitter(session)))

    yield use


# --- the web search's failure, in the user's language ------------------------------------


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (DDGSException("https://html.duckduckgo.com/html 202 Ratelimit: offline"), "unreachable"),
        (RatelimitException("202 Ratelimit"), "rate_limit"),
        (TimeoutException("timed out"), "timeout"),
        (ConnectionError("no route to host"), "unreachable"),
    ],
)
async def test_a_failed_search_is_told_in_the_users_language(
    error, kind, factory, llm_server, language
):
    def offline(query: str, max_results: int):
        raise error

    llm_server.script(
        Reply(tool_calls=[ToolCallScript("web_search", {"query": "IEEE 830"})]),
        Reply(content="No search; answering from what I know."),
        Reply(match=ANSWER, content="From general knowledge."),
    )
    agent = ReactAgent(factory, [WebSearch(offline).as_tool()], AgentConfig(language="zh"))
    events = [event async for event in agent.run("IEEE 830 是什么？")]
    finished = next(e for e in events if isinstance(e, ToolCallFinished))
    assert not finished.ok and finished.error_kind == kind
    assert finished.result_text.startswith("web_search failed")  # the model's text, unchanged

    language("zh-CN")
    shown = tool_result_text(finished)
    assert shown == text(f"agent.search_error_{kind}", "zh")
    assert type(error).__name__ not in shown and "search" not in shown
    language("en-US")
    assert tool_result_text(finished) == text(f"agent.search_error_{kind}", "en")


async def test_other_tools_still_show_their_result(language):
    language("zh-CN")
    done = ToolCallFinished(call_id="1", tool="time", ok=True, result_text="12:00 UTC")
    assert tool_result_text(done) == "12:00 UTC"


# --- plurals -------------------------------------------------------------------------------


async def test_counts_take_the_singular_in_english_and_a_bare_number_in_chinese(language):
    language("en-US")
    assert counted(1, "round") == "1 round" and counted(2, "round") == "2 rounds"
    assert text("team.summary", "en", agents=counted(1, "agent"), messages=counted(1, "message"),
                seconds=1.0, detail="").startswith("1 agent, 1 message, 1.0 s.")  # fmt: skip
    rewrite = text("rewrite.summary", "en", sections=counted(1, "section"),
                   rounds=counted(1, "review round"), fixed=counted(1, "issue"), tokens=5,
                   seconds=1.0)  # fmt: skip
    assert "1 section · 1 review round · 1 issue fixed" in rewrite
    language("zh-CN")
    assert text("team.summary", "zh", agents=counted(1, "agent"), messages=counted(3, "message"),
                seconds=1.0, detail="").startswith("共 1 个智能体，3 条消息")  # fmt: skip


async def test_a_one_round_review_says_one_round(factory, llm_server, language):
    llm_server.script(*panel(improvement("sec-03", "medium")))
    events = [e async for e in run_review(ReviewRequest(document=DOCUMENT), factory)]
    result = events[-1].result
    assert len(result.rounds) == 1
    language("en-US")
    summary = final_text(result)
    assert "1 round · " in summary and "1 rounds" not in summary
    language("zh-CN")
    assert "1 轮 · " in final_text(result)


# --- "default" and "none" --------------------------------------------------------------------


async def test_settings_choices_are_labelled_in_the_users_language(language):
    from ui.srs.flow import ablation_label

    language("zh-CN")
    assert ablation_label("none") == "无（完整流程）"
    assert ablation_label("no-clarify") == "去掉澄清（no-clarify）"
    assert text("agent.settings_default", "zh").startswith("默认")
    assert text("settings.model_default", "zh", model="m").startswith("默认")
    language("en-US")
    assert ablation_label("no-explore-clarify").endswith("(no-explore-clarify)")


# --- the judge's consensus table names the reviewers as the UI does ---------------------------


@pytest.mark.parametrize(
    ("code", "said"), [("zh-CN", "| 红队、甲方 |"), ("en-US", "| Red team, Client |")]
)
async def test_the_consensus_table_names_who_raised_an_issue_in_the_users_words(
    language, code, said
):
    from agents.review.models import JudgeReview
    from ui.review.tables import disagreement_tables

    language(code)
    judge = JudgeReview.model_validate(
        {
            "consensus_issues": [
                {"issue": "no number", "agent_id": "sec-02", "raised_by": ["red_team", "client"]}
            ]
        }
    )
    shown = disagreement_tables(judge, {"sec-02": "2. 预约"})
    assert said in shown and "red_team" not in shown
