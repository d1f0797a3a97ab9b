"""The SRS summary and the requirements check count different things, and say so: the summary
counts the requirement list, the check what the document states (a small model left items out
of the document: the check said 1 where the summary said 2). When they differ, the summary
gives both."""

from __future__ import annotations

from reqstudio.web.requirements_check import check_requirements
from reqstudio.web.srs.flow import in_document

ONE_OF_TWO = """# 软件需求规格说明

## 3. 具体需求

- FR-01 系统应允许读者按书名检索图书。
"""
BOTH = ONE_OF_TWO + "- FR-02 系统应允许读者预约已借出的图书。\n"


async def test_the_summary_names_what_the_document_states_when_it_is_not_the_list(language):
    language("zh-CN")
    check = await check_requirements(ONE_OF_TWO)
    assert check is not None and check.requirements == 1
    assert "1 条需求" in check.tables  # the check's own summary line
    assert in_document(2, check) == "（文档中写出 1 条，见需求检查）"
    language("en-US")
    assert in_document(2, check) == " (the document states 1: see the requirements check)"


async def test_a_document_stating_the_whole_list_adds_nothing(language):
    language("zh-CN")
    check = await check_requirements(BOTH)
    assert check is not None and check.requirements == 2
    assert in_document(2, check) == ""
    assert in_document(2, None) == ""  # no check (it failed): nothing claimed
