"""Texts a user read in the wrong language or with a wrong plural: the web
search's exception, "1 rounds" / "1 agents", and raw "default" / "none" in the settings."""

from __future__ import annotations

import pytest

from reqstudio.messages import text
from reqstudio.modes.agent import AgentConfig, ReactAgent, ToolCallFinished
from reqstudio.modes.review import ReviewRequest, run_review
from reqstudio.tools.web_search import WebSearch
from reqstudio.web.agent import tool_result_text
from reqstudio.web.review.tables import final_text
from reqstudio.web.texts import counted
from tests.fake_search import FAILURES
from tests.review_support import DOCUMENT, improvement, panel
from tests.scripted_server import Reply, ToolCallScript

ANSWER = "Write the final answer now"  # reqstudio/prompts/agent/answer_context.md


# --- the web search's failure, in the user's language ------------------------------------


@pytest.mark.parametrize(("error", "kind"), FAILURES)
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


async def test_counts_take_their_forms_from_the_catalogue(language):
    language("en-US")
    assert counted(1, "round") == "1 round" and counted(2, "round") == "2 rounds"
    assert counted(1, "section") == "1 section" and counted(1, "entry") == "1 entry"
    # "1 sections" where a count met a plural written into the sentence
    read = text("review.document_ok", "en", name="a.md", chars=9, sections=counted(1, "section"))
    assert read.endswith("9 characters, 1 section.")
    assert text("rewrite.filled", "en", total=counted(1, "section")) == "Written: 1 section."


@pytest.mark.parametrize(
    ("code", "lang", "count", "team", "rewrite"),
    [
        (
            "en-US",
            "en",
            1,
            "1 agent, 1 message, 1.0 s.",
            "1 section · 1 review round · 1 issue fixed",
        ),
        ("zh-CN", "zh", 3, "共 1 个智能体，3 条消息", "3 节 · 评审 1 轮 · 修复 1 个问题"),
    ],
)
async def test_the_summaries_take_their_counts_from_the_catalogue(
    language, code, lang, count, team, rewrite
):
    language(code)
    assert text("team.summary", lang, agents=counted(1, "agent"),
                messages=counted(count, "message"), seconds=1.0, detail="").startswith(team)  # fmt: skip
    summary = text("rewrite.summary", lang, sections=counted(count, "section"),
                   rounds=counted(1, "review_round"), fixed=counted(1, "issue"), tokens=5,
                   seconds=1.0)  # fmt: skip
    assert rewrite in summary


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
    from reqstudio.web.srs.flow import ablation_label

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
    from reqstudio.modes.review.models import JudgeReview
    from reqstudio.web.review.tables import disagreement_tables

    language(code)
    judge = JudgeReview.model_validate(
        {
            "prioritized_improvements": [],
            "consensus_issues": [
                {"issue": "no number", "agent_id": "sec-02", "raised_by": ["red_team", "client"]}
            ],
            "conflicting_views": [],
        }
    )
    shown = disagreement_tables(judge, {"sec-02": "2. 预约"})
    assert said in shown and "red_team" not in shown


def test_a_long_section_title_is_cut_at_a_word_on_its_button():
    from reqstudio.web.review.tables import BUTTON_CHARS, section_button

    label = section_button(
        "sec-03", "Functional requirements of the lending desk and the catalogue"
    )
    assert label == "sec-03 Functional requirements of the lending desk and the…"
    assert len(label) <= BUTTON_CHARS
    assert section_button("sec-01", "Scope") == "sec-01 Scope"
