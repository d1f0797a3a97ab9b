"""Why something failed, as a code and the values that say it: the engines and the core raise
and record these; the words the user reads in their language come from the message catalogue
(`failure.<code>` in reqstudio/locales/*.toml) only when a failure is shown or written out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from reqstudio.messages import join, text


class FailureCode(StrEnum):
    """Every kind of failure a user is told about; each is a key under `failure.` in the
    catalogue, filled in with the failure's values."""

    # the model provider and its answers
    PROVIDER_KEY_REFUSED = "provider_key_refused"  # 401
    RATE_LIMITED = "rate_limited"  # 429, still after retries
    TIMEOUT = "timeout"
    PROVIDER_SERVER_ERROR = "provider_server_error"  # 5xx: status
    PROVIDER_ERROR = "provider_error"  # another refused request: status
    CONNECTION_BROKEN = "connection_broken"  # unreachable, or the stream cut off
    ANSWER_LENGTH = "answer_length"  # finish_reason length
    CONTENT_FILTER = "content_filter"  # finish_reason content_filter
    EMPTY_ANSWER = "empty_answer"  # no text, no tool call
    ANSWER_CUT = "answer_cut"  # the stream ended with no finish reason
    JSON_LENGTH = "json_length"  # structured answer cut at its length limit: attempts
    UNREADABLE_ANSWER = "unreadable_answer"  # JSON that never parsed: attempts
    BROKEN_RESPONSE = "broken_response"  # the provider's own reply was no JSON
    NOT_A_DOCUMENT = "not_a_document"  # kind (reqstudio.document_guard), share, examples
    TOO_LARGE_FOR_CONTEXT = "too_large_for_context"  # name, document_tokens, needed, limit
    # needed, reference, candidate, limit (tokens): the SRS evaluation's request, not sent
    EVALUATION_TOO_LARGE = "evaluation_too_large"
    UNEXPECTED = "unexpected"  # name (the exception's class)
    # SRS mode's own
    SRS_NO_REQUIREMENTS = "srs_no_requirements"  # ReqParse's answer held none
    SRS_NOT_AN_SRS = "srs_not_an_srs"  # reason: the document guard's failure
    SRS_EMPTY_DOCUMENT = "srs_empty_document"
    # the database stopped an SRS run: name; step (the node whose result is lost);
    # last_saved (the last node saved), each variant saying only what is known
    SRS_DATABASE_SAVED = "srs_database_saved"
    SRS_DATABASE_SAVED_NO_STEP = "srs_database_saved_no_step"
    SRS_DATABASE_NOTHING_SAVED = "srs_database_nothing_saved"
    SRS_DATABASE_NOTHING_SAVED_NO_STEP = "srs_database_nothing_saved_no_step"
    # Review mode's reasons for an answer that did not count (reqstudio/modes/review/reasons.py)
    REVIEW_LENGTH = "review_length"
    REVIEW_CONTENT_FILTER = "review_content_filter"
    REVIEW_CUT = "review_cut"
    REVIEW_EMPTY = "review_empty"
    REVIEW_FINISH_REASON = "review_finish_reason"  # reason
    # our checks' and the structured call's own words (English in every language's record,
    # introduced in the reader's language): attempts, detail / detail
    REVIEW_UNREADABLE = "review_unreadable"
    REVIEW_UNUSABLE = "review_unusable"
    REVIEW_NOTHING_TO_JUDGE = "review_nothing_to_judge"
    REVIEW_ROUND_UNREADABLE = "review_round_unreadable"  # round, reviewers (terms)
    # Rewrite mode's reasons (reqstudio/modes/rewrite/errors.py); `after` is a RETRIED phrase
    REWRITE_NOT_A_DOCUMENT = "rewrite_not_a_document"  # reason: the document guard's failure
    REWRITE_EMPTY = "rewrite_empty"  # detail: our own check found the answer empty
    # JSON that never parsed (cut at the length limit): attempts, detail (the call's own words,
    # which the English record keeps)
    REWRITE_UNREADABLE = "rewrite_unreadable"
    REWRITE_JSON_LENGTH = "rewrite_json_length"
    ANSWER_REFUSED = "answer_refused"  # detail: another of our own checks, in its words
    REWRITE_LENGTH = "rewrite_length"
    REWRITE_CONTENT_FILTER = "rewrite_content_filter"  # after
    REWRITE_EMPTY_ANSWER = "rewrite_empty_answer"  # after
    REWRITE_CUT = "rewrite_cut"  # after
    REWRITE_FINISH_REASON = "rewrite_finish_reason"  # reason, after
    REWRITE_CONTEXT_OVERFLOW = "rewrite_context_overflow"  # said (the provider's words)
    REWRITE_CONTEXT_OVERFLOW_SIZED = "rewrite_context_overflow_sized"  # tokens, said
    REWRITE_TOO_LARGE = "rewrite_too_large"  # background, first, longest, limit
    PROVIDER_SAID = "provider_said"  # failure (inside), said (the provider's words)
    CANCELLED = "cancelled"
    RETRIED = "retried"  # a phrase inside others: tries
    RETRIED_UNCOUNTED = "retried_uncounted"  # a phrase inside others
    # the database
    DATABASE_AWAY = "database_away"  # name
    RUN_NOT_RUN = "run_not_run"  # name: nothing of the run went ahead
    SIGN_IN_DATABASE_AWAY = "sign_in_database_away"
    THREADS_DATABASE_AWAY = "threads_database_away"
    SIGN_IN_BUSY = "sign_in_busy"
    RUN_BUSY = "run_busy"  # seconds: another tab or instance is running it
    # a document the user gave (reqstudio.modes.srs.documents): name, max_mb, accepted
    DOCUMENT_UNSUPPORTED_TYPE = "document_unsupported_type"  # suffix
    DOCUMENT_NOT_FOUND = "document_not_found"
    DOCUMENT_TOO_LARGE = "document_too_large"  # mb
    DOCUMENT_EMPTY = "document_empty"
    DOCUMENT_NO_TEXT = "document_no_text"
    DOCUMENT_BINARY = "document_binary"
    DOCUMENT_UNKNOWN_ENCODING = "document_unknown_encoding"  # shown
    PDF_UNREADABLE = "pdf_unreadable"
    PDF_ENCRYPTED = "pdf_encrypted"
    PDF_NO_TEXT = "pdf_no_text"
    DOCX_UNREADABLE = "docx_unreadable"
    # a decision the user typed at a pause
    DECISION_NOT_A_COMMAND = "decision_not_a_command"  # number, line (SRS)
    DECISION_UNKNOWN_IDS = "decision_unknown_ids"  # names (SRS)
    REVIEW_DECISION_NOT_A_COMMAND = "review_decision_not_a_command"  # number, line
    REVIEW_DECISION_UNKNOWN = "review_decision_unknown"  # names of findings or sections
    REVIEW_DECISION_UNKNOWN_EDIT = "review_decision_unknown_edit"  # names of sections edited
    REVIEW_DECISION_UNKNOWN_BOTH = "review_decision_unknown_both"  # unknown, edited


@dataclass(frozen=True)
class Term:
    """A value said in the reader's language: the catalogue's message `key` (a reviewer's
    name, a step's name) rather than a word fixed when the failure was made."""

    key: str

    def as_dict(self) -> dict[str, str]:
        return {"term": self.key}


@dataclass(frozen=True)
class Failure:
    """A failure's code and the values its message is filled with (numbers, names, and
    English words from outside, such as a provider's own message)."""

    code: FailureCode
    values: Mapping[str, Any] = field(default_factory=dict)

    def text(self, language: str) -> str:
        """The failure in `language` ('zh'/'en' or a locale name), from the catalogue."""
        return render(self, language)

    def as_dict(self) -> dict[str, Any]:
        """The failure as JSON data (a failure inside as its own code and values)."""
        return {"code": str(self.code), "values": values_as_data(self.values)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Failure:
        """`as_dict` read back."""
        return cls(FailureCode(data["code"]), values_from_data(data.get("values", {})))


def _as_data(value: Any) -> Any:
    if isinstance(value, Failure | Term):
        return value.as_dict()
    if isinstance(value, list | tuple):
        return [_as_data(v) for v in value]
    return value


def _from_data(value: Any) -> Any:
    if isinstance(value, Mapping) and "code" in value:
        return Failure.from_dict(value)
    if isinstance(value, Mapping) and "term" in value:
        return Term(value["term"])
    if isinstance(value, list):
        return [_from_data(v) for v in value]
    return value


def values_as_data(values: Mapping[str, Any]) -> dict[str, Any]:
    """A failure's or a notice's values as JSON data (a failure inside, a term: as dicts)."""
    return {name: _as_data(value) for name, value in values.items()}


def values_from_data(values: Mapping[str, Any]) -> dict[str, Any]:
    """`values_as_data` read back."""
    return {name: _from_data(value) for name, value in values.items()}


def say(code: str, values: Mapping[str, Any], language: str) -> str:
    """An event's words from its `code` and `values`: a failure code's message, or, for a
    notice, the catalogue message the code names (`srs.no_reference_notice`)."""
    if code in FAILURE_CODES:
        return render(Failure(FailureCode(code), values_from_data(values)), language)
    return text(code, language, **_said(values_from_data(values), language))


def catalogue_key(failure: Failure) -> str:
    """Where the failure's words are: `failure.<code>`; an answer that is no document is
    said by the document guard's own messages (`guard.<kind>`)."""
    if failure.code is FailureCode.NOT_A_DOCUMENT:
        return f"guard.{failure.values['kind']}"
    return f"failure.{failure.code}"


def render(failure: Failure, language: str) -> str:
    """The words for `failure` in `language`, filled with its values (a list of values
    joined as the language lists them, a failure inside said in the same language)."""
    return text(catalogue_key(failure), language, **_said(failure.values, language))


def _said(values: Mapping[str, Any], language: str) -> dict[str, Any]:
    separator = text("failure.separator", language)
    said: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, Failure):
            value = render(value, language)
        elif isinstance(value, Term):
            value = text(value.key, language)
        elif isinstance(value, list | tuple) and value and all(isinstance(v, Term) for v in value):
            value = join([text(v.key, language) for v in value], language)
        elif isinstance(value, list | tuple):
            value = separator.join(str(v) for v in value)
        said[name] = value
    return said


def said_or(failure: Mapping[str, Any], fallback: str, language: str) -> str:
    """A record's reason in `language`: its failure's words (`{"code", "values"}`), or its
    English `fallback` when it keeps no failure (a record written before records kept one)."""
    if not failure:
        return fallback
    return say(failure["code"], failure.get("values", {}), language)


FAILURE_CODES = frozenset(str(code) for code in FailureCode)


class FailureError(ValueError):
    """An error the user reads: it carries a `Failure`; `message(language)` says it from the
    catalogue and str() is the English."""

    def __init__(self, failure: Failure):
        super().__init__(render(failure, "en"))
        self.failure = failure

    def message(self, language: str = "en") -> str:
        return render(self.failure, language)
