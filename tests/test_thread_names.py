"""Thread names in the history: the mode, then what the thread is about, short."""

from __future__ import annotations

from reqstudio.web.modes import ModeSpec, document_title, subject_of, thread_name


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


async def test_chainlit_s_own_naming_does_not_replace_the_app_s(tmp_path):
    # Chainlit names a thread after the first message's raw text from a task of its own; when
    # that task wrote after the app, the history showed a pasted document's text for the whole
    # run (seen in the browser test of a starter clicked with a file attached).
    import chainlit as cl
    from chainlit.context import init_ws_context
    from chainlit.session import WebsocketSession

    from reqstudio.schema import create_schema
    from reqstudio.web.history import HistoryDataLayer

    url = f"sqlite+aiosqlite:///{tmp_path / 'history.db'}"
    await create_schema(url)
    layer = HistoryDataLayer(url)
    session = WebsocketSession(
        id="s-1", socket_id="sock-1", emit=lambda *a: None, emit_call=lambda *a: None,
        user_env={}, client_type="webapp", thread_id="thread-1",
    )  # fmt: skip
    init_ws_context(session)
    try:
        raw = "图书馆借阅系统：读者检索、预约、借阅和归还图书……" * 20
        await layer.update_thread("thread-1", name=raw)  # Chainlit's task, before the app
        assert (await layer.get_thread("thread-1"))["name"] is None  # held back, thread made
        cl.user_session.set("thread_title", "SRS · 图书馆借阅系统")
        await layer.update_thread("thread-1", name="SRS · 图书馆借阅系统")
        await layer.update_thread("thread-1", name=raw)  # Chainlit's task, after the app
        assert (await layer.get_thread("thread-1"))["name"] == "SRS · 图书馆借阅系统"
        # another thread's name (a rename from elsewhere) is written as given
        await layer.update_thread("thread-2", name="我的线程")
        assert (await layer.get_thread("thread-2"))["name"] == "我的线程"
    finally:
        await layer.engine.dispose()
        await session.delete()


def test_a_long_english_subject_is_cut_between_words_with_an_ellipsis():
    question = "How should the online booking system for pet clinics confirm appointments by SMS"
    name = thread_name(mode("Chat"), question)
    subject = name.removeprefix("Chat · ")
    assert subject.endswith("…") and len(subject) <= 60
    kept = subject.removesuffix("…")
    assert question.startswith(kept) and question[len(kept)] == " "  # a whole word ends it


def test_an_uploaded_document_is_named_by_its_title_else_its_file_name():
    assert document_title("# Pet Clinic Booking SRS\n\nOwners book visits.\n") == (
        "Pet Clinic Booking SRS"
    )
    assert document_title("宠物医院预约系统\n\n主人在线预约兽医。\n", "a.pdf") == "宠物医院预约系统"
    prose = "This document, which has no title, begins with a long sentence of prose. " * 2
    assert document_title(prose, "uploads/clinic-srs.docx") == "clinic-srs"
