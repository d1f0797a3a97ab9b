"""What the app renders for the page reads in the page's language, with no internals: Review's disagreements and trajectory, Team's messages and refusals, the
traceability matrix of an SRS written in the other language."""

from __future__ import annotations

import re

from reqstudio.modes.review.models import JudgeReview
from reqstudio.modes.srs.trace import TraceRow, with_matrix
from reqstudio.web.review.tables import disagreement_tables
from reqstudio.web.team import payload_markdown
from tests.page_reading import english_in_chinese, internals

ENGLISH_SRS = (
    "# Software Requirements Specification\n\n## 1. Introduction\n\nReaders borrow books.\n"
)


def judge(*views: dict) -> JudgeReview:
    return JudgeReview.model_validate(
        {"prioritized_improvements": [], "consensus_issues": [], "conflicting_views": list(views)}
    )


async def test_a_conflicting_view_with_no_views_is_not_a_row(language):
    language("zh-CN")
    # a small model's leftovers: an aspect, no view of either team, a ruling of JSON debris
    shown = disagreement_tables(judge({"aspect": "x", "ruling": "...}, {"}), {})
    assert "}, {" not in shown and "（无）" in shown
    assert "conflicting_views" not in shown and "**分歧意见**" in shown
    kept = disagreement_tables(
        judge({"aspect": "流程", "red_team": "缺少取消", "ruling": "补一句"}), {}
    )
    assert "缺少取消" in kept and "补一句" in kept


async def test_a_team_payload_reads_as_words(language):
    language("zh-CN")
    shown = payload_markdown({"status": "done"})
    assert shown == "- **状态**: 完成"
    language("en-US")
    assert payload_markdown({"target_id": "agent-1", "usage_advice": "ask for FRs"}) == (
        "- **Contact**: agent-1\n- **How to work with them**: ask for FRs"
    )


def test_the_matrix_is_in_the_readers_language_whatever_the_documents():
    rows = [
        TraceRow(id="FR-01", requirement="Readers borrow books", kind="request", revised=[1]),
        TraceRow(id="NFR-01", requirement="Pages load in 2 s", kind="round", round=1),
    ]
    for row in rows:
        row.origin = row.origin_in("en")
    chinese = with_matrix(ENGLISH_SRS, rows, "zh").split("## 追溯矩阵", 1)[1]
    words = english_in_chinese(
        chinese.replace("Readers borrow books", "").replace("Pages load in", "")
    )
    assert words == [], words
    assert "需求描述（没有可对应的单句）；第 1 轮修订" in chinese
    assert "| 编号 | 需求 | 来源 |" in chinese
    english = with_matrix(ENGLISH_SRS, rows)  # the command line: the document's language
    assert "## Traceability matrix" in english and "request (no single sentence matches)" in english
    assert not re.search(r"[\u4e00-\u9fff]", english)
    assert not internals(chinese)


async def test_a_stop_for_a_failed_reviewer_is_said_without_the_records_english(language):
    from reqstudio.modes.review.models import NextAction
    from reqstudio.web.review.tables import decision_text

    decision = NextAction(
        action="approve", reason="reviewer_failed", detail="red_team: The provider had a 500."
    )
    language("zh-CN")
    shown = decision_text(decision, {})
    assert shown == "停止：红队审阅失败，无法判断质量"
    assert not english_in_chinese(shown) and not internals(shown)
