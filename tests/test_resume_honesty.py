"""A failed run says only what is true: "finished rounds are kept" only when some are, and
Resume only when a resumed run can go otherwise than the failed one, else what to change
first (a Review whose reviewers' answers could not be read in round 1 said "已完成的轮次已保存"
and offered a Resume that failed the same way)."""

from __future__ import annotations

import httpx
import openai
import pytest

from reqstudio.calls import IncompleteAnswerError
from reqstudio.document_model import parse_markdown
from reqstudio.errors import remedy_for
from reqstudio.failures import Failure, FailureCode
from reqstudio.modes.review import ReviewRequest, run_review
from reqstudio.modes.review.events import RunFailed
from reqstudio.modes.rewrite.errors import RewriteStageError, RewriteTooLarge
from reqstudio.modes.srs.document_check import NotADocument
from reqstudio.structured import StructuredOutputError
from reqstudio.web import resume_advice as advice_module
from reqstudio.web.resume_advice import resume_advice
from reqstudio.web.review.tables import failure_note
from reqstudio.web.rewrite.flow import failure_note as rewrite_failure_note
from reqstudio.web.rewrite.flow import written
from reqstudio.web.rewrite.progress import RewriteViews
from tests.review_support import DOCUMENT, RED, panel
from tests.scripted_server import Reply


def status_error(status: int, message: str = "refused") -> openai.APIStatusError:
    request = httpx.Request("POST", "http://provider/v1/chat/completions")
    response = httpx.Response(status, request=request)
    kind = {401: openai.AuthenticationError, 429: openai.RateLimitError}.get(
        status, openai.BadRequestError if status == 400 else openai.InternalServerError
    )
    return kind(message, response=response, body=None)


def caused(outer: Exception, cause: Exception) -> Exception:
    outer.__cause__ = cause
    return outer


@pytest.mark.parametrize(
    ("error", "remedy"),
    [
        (status_error(500), "retry"),
        (status_error(429), "retry"),
        (openai.APITimeoutError(request=httpx.Request("POST", "http://p")), "retry"),
        (TimeoutError(), "retry"),
        (IncompleteAnswerError("cut", ""), "retry"),
        (StructuredOutputError("no JSON", "Echo: ...", 3), "model"),
        # what the call policy retries as transient may pass on another try
        (IncompleteAnswerError("empty", ""), "retry"),
        (IncompleteAnswerError("content_filter", ""), "retry"),
        (ValueError("the answer names no section"), "model"),
        (NotADocument("raw JSON"), "model"),
        (IncompleteAnswerError("length", "half"), "size"),
        (StructuredOutputError("cut", "{", 3, finish_reason="length"), "size"),
        (status_error(400, "This model's maximum context length is 4096 tokens"), "size"),
        (
            RewriteTooLarge(
                Failure(
                    FailureCode.REWRITE_TOO_LARGE,
                    {"background": 1000, "first": 9000, "longest": 9000, "limit": 4096},
                ),
                9000,
                4096,
            ),
            "size",
        ),
        (status_error(401), "settings"),
        (status_error(400, "model not found"), "settings"),
        (caused(RewriteStageError("content_filling", "x"), ValueError("no text")), "model"),
        (caused(RewriteStageError("review", "x"), status_error(503)), "retry"),
    ],
)
def test_what_a_resumed_run_needs_is_read_from_the_fault(error, remedy):
    assert remedy_for(error) == remedy


async def failed_review(factory) -> RunFailed:
    events = [e async for e in run_review(ReviewRequest(document=DOCUMENT), factory)]
    failed = events[-1]
    assert isinstance(failed, RunFailed), events[-1]
    return failed


async def test_round_one_unreadable_says_nothing_was_kept_and_what_to_change(
    factory, llm_server, language, monkeypatch
):
    # nothing scripted: every reviewer gets "Echo: …", never the JSON its role must give
    failed = await failed_review(factory)
    assert failed.partial.rounds == [] and failed.remedy == "model"

    monkeypatch.setattr(advice_module, "other_models_configured", lambda: False)
    for code, kept, none, change in (
        ("zh-CN", "已完成的轮次已保存", "还没有完成任何一轮", "没有配置其他模型"),
        ("en-US", "Finished rounds are kept", "No round had finished", "no other model"),
    ):
        language(code)
        advice = resume_advice(failed.remedy)
        note = failure_note(failed.text(code),
                            failed.partial, advice.text)  # fmt: skip
        assert kept not in note and none in note and change in note, note
        assert not advice.offer  # the same and only model would fail the same way

    # with another model to pick in the settings, Resume can go otherwise: offered, and the
    # message says to pick it first
    monkeypatch.setattr(advice_module, "other_models_configured", lambda: True)
    language("en-US")
    advice = resume_advice(failed.remedy)
    assert advice.offer and "pick another model in the settings (⚙) first" in advice.text


async def test_a_provider_fault_keeps_resume_as_it_is(factory, llm_server, language):
    llm_server.script(*[Reply(fault="500")] * 12)
    failed = await failed_review(factory)
    assert failed.remedy == "retry"
    language("zh-CN")
    advice = resume_advice(failed.remedy)
    assert advice.offer and advice.text == ""


async def test_a_later_round_failing_says_its_finished_rounds_are_kept(
    factory, llm_server, language
):
    from tests.review_support import improvement

    llm_server.script(*panel(improvement("sec-03", "high")), Reply(content="no JSON", match=RED))
    events = [e async for e in run_review(ReviewRequest(document=DOCUMENT, max_rounds=3), factory)]
    failed = events[-1]
    assert isinstance(failed, RunFailed) and len(failed.partial.rounds) == 1
    language("zh-CN")
    note = failure_note(failed.text("zh"), failed.partial)
    assert "已完成的轮次已保存" in note


async def test_a_rewrite_that_wrote_nothing_does_not_claim_it_kept_something(language):
    outline = parse_markdown("# T\n\n## A\n\n## B\n")
    progress = RewriteViews.__new__(RewriteViews)
    progress.written, progress.document = {}, outline
    assert written(progress, outline) == "" and written(progress, None) == ""
    language("zh-CN")
    note = rewrite_failure_note("② 填写", "", "模型的回答是空的。", kept=False)
    assert "已写的内容已保留" not in note and "还没有写出任何内容" in note
    filled = outline.with_content(outline.sections[0].id, "Some text.")
    assert written(progress, filled)
    assert "已写的内容已保留" in rewrite_failure_note("② 填写", "", "x。", kept=True)
