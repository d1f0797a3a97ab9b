"""What a rewrite raises when a stage cannot finish (seed 003, section 3.4 "状态报告"), and the
plain-words reason of each fault."""

from __future__ import annotations

import openai

from reqstudio.calls import IncompleteAnswerError
from reqstudio.document_model import DocumentStructure
from reqstudio.errors import describe_failure
from reqstudio.structured import StructuredOutputError


class RewriteStageError(RuntimeError):
    """A stage failed for good: `stage` names it, `reason` says why in plain words, `partial`
    holds the document as far as it got (None before the outline exists); `section_id` and
    `section_title` name the section being written (`reason_zh`: the reason in Chinese),
    `finish_reason` the model's finish reason
    when the answer was not whole (length, content_filter, empty, cut); `run_id` is the
    checkpointed run that `resume` continues."""

    def __init__(
        self,
        stage: str,
        reason: str,
        partial: DocumentStructure | None = None,
        section_id: str | None = None,
        *,
        section_title: str | None = None,
        finish_reason: str | None = None,
        reason_zh: str | None = None,
    ):
        where = ""
        if section_id:
            where = f" (section {section_id}{f' “{section_title}”' if section_title else ''})"
        super().__init__(f"stage {stage} failed{where}: {reason}")
        self.stage = stage
        self.reason = reason
        self.reason_zh = reason_zh or reason  # the same, for a Chinese-speaking user
        self.partial = partial
        self.section_id = section_id
        self.section_title = section_title
        self.finish_reason = finish_reason
        self.run_id: str | None = None


class RewriteTooLarge(RewriteStageError):
    """Refused before the first call: a request of the run would not fit the model's context."""

    def __init__(self, reason: str, needed: int, limit: int, reason_zh: str | None = None):
        super().__init__("outline_generation", reason, reason_zh=reason_zh)
        self.needed = needed
        self.limit = limit


CONTEXT_WORDS = ("context_length_exceeded", "context length", "maximum context", "too many tokens")


def is_context_overflow(error: BaseException) -> bool:
    """A provider's 400 saying the request does not fit the model's context."""
    if not isinstance(error, openai.BadRequestError):
        return False
    text = f"{getattr(error, 'code', '') or ''} {error.message}".lower()
    return any(word in text for word in CONTEXT_WORDS)


def finish_reason_of(error: BaseException) -> str | None:
    return error.reason if isinstance(error, IncompleteAnswerError) else None


def reason_for(
    error: BaseException,
    tries: int | None = None,
    prompt_tokens: int | None = None,
    language: str = "en",
) -> str:
    """Why a call failed, in plain words ("en" or "zh"), naming the finish reason of an answer
    that was not whole and keeping a provider's own words for a refused request."""
    zh = language == "zh"
    if zh:
        after = f"，重试 {tries} 次后仍然如此" if tries else "，重试后仍然如此"
    else:
        after = f", also after {tries} tries" if tries else ", also after retries"
    if isinstance(error, StructuredOutputError):
        return describe_failure(error, "zh") if zh else str(error)
    if type(error) is ValueError:  # our own checks
        return "模型的回答是空的" if zh and "empty" in str(error) else str(error)
    if isinstance(error, IncompleteAnswerError):
        if error.reason == "length":
            if zh:
                return "回答达到长度上限被截断（finish reason: length），续写后仍未完成"
            return (
                "the answer was cut off at the length limit (finish reason: length), also "
                "after continuing"
            )
        if error.reason == "content_filter":
            if zh:
                return f"模型服务的内容过滤中断了回答（finish reason: content_filter）{after}"
            return (
                "the provider's content filter stopped the answer (finish reason: "
                f"content_filter){after}"
            )
        if error.reason == "empty":
            return (
                f"模型的回答是空的（没有文字）{after}"
                if zh
                else (f"the model's answer was empty (no text){after}")
            )
        if error.reason == "cut":
            return (
                f"回答流在没有结束标记（finish reason）时中断{after}"
                if zh
                else (f"the answer stream ended without a finish reason{after}")
            )
        if zh:
            return f"回答以 finish reason {error.reason!r} 结束{after}"
        return f"the answer ended with finish reason {error.reason!r}{after}"
    if is_context_overflow(error):
        if zh:
            size = f"（约 {prompt_tokens} tokens）" if prompt_tokens else ""
            return (
                f"请求{size}超出模型的上下文长度；模型服务的原话：{error.message}"
                "（请缩短原始文档或澄清，或换用上下文更大的模型；OPENAI_CONTEXT_TOKENS 告诉 "
                "ReqStudio 模型的上下文大小）"
            )
        size = f" (about {prompt_tokens} tokens)" if prompt_tokens else ""
        return (
            f"the request{size} exceeds the model's context length; the provider said: "
            f"{error.message} (shorten the original or the clarifications, or use a model "
            "with a larger context; OPENAI_CONTEXT_TOKENS tells ReqStudio its size)"
        )
    if isinstance(error, openai.APIStatusError) and 400 <= error.status_code < 500:
        said = "模型服务的原话：" if zh else "The provider said: "
        return f"{describe_failure(error, language)} {said}{error.message}"
    return describe_failure(error, language)
