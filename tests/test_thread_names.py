"""Thread names in the history: the mode, then what the thread is about, short (issue 18 item 2)."""

from __future__ import annotations

from ui.modes import ModeSpec, subject_of, thread_name


async def nothing(message) -> None:
    return None


def mode(mode_id: str, title=None) -> ModeSpec:
    return ModeSpec(id=mode_id, title={}, description={}, on_message=nothing, thread_title=title)


def test_a_question_is_named_by_its_first_line():
    assert (
        thread_name(mode("Chat"), "审批流程需要两级审核\n第二行") == "Chat · 审批流程需要两级审核"
    )


def test_a_pasted_document_is_named_by_its_title_not_its_text():
    document = "# 宠物医院预约系统 SRS\n\n## 1. 引言\n\n本文档描述……\n\n## 2. 需求\n\n- FR-1 …\n"
    assert thread_name(mode("Review"), document) == "Review · 宠物医院预约系统 SRS"


def test_long_lines_are_cut_and_marks_removed():
    name = thread_name(mode("Agent"), "**" + "很长的问题" * 30 + "**")
    assert name.startswith("Agent · 很长的问题") and name.endswith("…")
    assert len(name.removeprefix("Agent · ")) == 60 and "*" not in name


def test_a_mode_s_own_subject_keeps_one_prefix():
    srs = mode("SRS", lambda text: f"SRS · {text.split('，')[0]}")
    assert thread_name(srs, "图书馆借阅系统，支持预约") == "SRS · 图书馆借阅系统"


def test_nothing_to_name_gives_no_name():
    assert thread_name(mode("Chat"), "  \n ") == "" and subject_of("") == ""
