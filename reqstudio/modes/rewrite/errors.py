"""What a rewrite raises when a stage cannot finish (seed 003, section 3.4 "状态报告"), and the
plain-words reason of each fault."""

from __future__ import annotations

import openai

from reqstudio.calls import IncompleteAnswerError
from reqstudio.document_guard import NotADocumentError
from reqstudio.document_model import DocumentStructure
from reqstudio.errors import failure_of
from reqstudio.failures import Failure, FailureCode, render
from reqstudio.structured import StructuredOutputError


class RewriteStageError(RuntimeError):
    """A stage failed for good: `stage` names it, `reason` says why in plain words, `partial`
    holds the document as far as it got (None before the outline exists); `section_id` and
    `section_title` name the section being written, `failure` the reason as a code and values
    (`text(language)` says it), `finish_reason` the model's finish reason
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
        failure: Failure | None = None,
    ):
        where = ""
        if section_id:
            where = f" (section {section_id}{f' “{section_title}”' if section_title else ''})"
        super().__init__(f"stage {stage} failed{where}: {reason}")
        self.stage = stage
        self.reason = reason
        self.failure = failure  # the reason as a code and values (None: only in English)
        self.partial = partial
        self.section_id = section_id
        self.section_title = section_title
        self.finish_reason = finish_reason
        self.run_id: str | None = None

    def text(self, language: str) -> str:
        """The reason in `language`, from the catalogue."""
        return self.reason if self.failure is None else render(self.failure, language)


class RewriteTooLarge(RewriteStageError):
    """Refused before the first call: a request of the run would not fit the model's context."""

    remedy = "size"  # a larger model or a shorter document (reqstudio.errors.remedy_for)

    def __init__(self, failure: Failure, needed: int, limit: int):
        super().__init__("outline_generation", render(failure, "en"), failure=failure)
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


_INCOMPLETE = {
    "content_filter": FailureCode.REWRITE_CONTENT_FILTER,
    "empty": FailureCode.REWRITE_EMPTY_ANSWER,
    "cut": FailureCode.REWRITE_CUT,
}


def failure_for(
    error: BaseException, tries: int | None = None, prompt_tokens: int | None = None
) -> Failure:
    """Why a call failed, as a code and values: the finish reason of an answer that was not
    whole, and a provider's own words for a refused request."""
    after = (
        Failure(FailureCode.RETRIED, {"tries": tries})
        if tries
        else Failure(FailureCode.RETRIED_UNCOUNTED)
    )
    if isinstance(error, NotADocumentError):  # asked again (its own policy), still no document
        return Failure(FailureCode.REWRITE_NOT_A_DOCUMENT, {"reason": error.failure})
    if type(error) is ValueError:  # our own checks, in their own words
        if "empty" in str(error):
            return Failure(FailureCode.REWRITE_EMPTY, {"detail": str(error)})
        return Failure(FailureCode.ANSWER_REFUSED, {"detail": str(error)})
    if isinstance(error, StructuredOutputError):  # in English, the call's own words
        code = (
            FailureCode.REWRITE_JSON_LENGTH
            if error.finish_reason == "length"
            else FailureCode.REWRITE_UNREADABLE
        )
        return Failure(code, {"attempts": error.attempts, "detail": str(error)})
    if isinstance(error, IncompleteAnswerError):
        if error.reason == "length":
            return Failure(FailureCode.REWRITE_LENGTH)
        if error.reason in _INCOMPLETE:
            return Failure(_INCOMPLETE[error.reason], {"after": after})
        return Failure(FailureCode.REWRITE_FINISH_REASON, {"reason": error.reason, "after": after})
    if is_context_overflow(error):
        if prompt_tokens:
            return Failure(
                FailureCode.REWRITE_CONTEXT_OVERFLOW_SIZED,
                {"tokens": prompt_tokens, "said": error.message},
            )
        return Failure(FailureCode.REWRITE_CONTEXT_OVERFLOW, {"said": error.message})
    if isinstance(error, openai.APIStatusError) and 400 <= error.status_code < 500:
        return Failure(
            FailureCode.PROVIDER_SAID, {"failure": failure_of(error), "said": error.message}
        )
    return failure_of(error)


def reason_for(
    error: BaseException,
    tries: int | None = None,
    prompt_tokens: int | None = None,
    language: str = "en",
) -> str:
    """`failure_for` in `language` ("en" or "zh"). In English, an answer our checks refused
    and JSON that never parsed are said in the check's own words, as the record keeps them."""
    return render(failure_for(error, tries, prompt_tokens), language)
