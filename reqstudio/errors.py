"""What went wrong with the provider or the database, as a failure code and values
(reqstudio/failures.py), and what a resumed run would need changed."""

from __future__ import annotations

import asyncio
import re
from typing import Literal

import httpx
import openai

from reqstudio.calls import IncompleteAnswerError
from reqstudio.failures import Failure, FailureCode, render
from reqstudio.structured import StructuredOutputError

# `error_type` of a run that stopped because its database could not be reached.
DATABASE_UNAVAILABLE = "DatabaseUnavailable"

# Where the database drivers' and pools' errors come from (PostgreSQL and SQLite).
_DATABASE_MODULES = ("psycopg", "psycopg_pool", "asyncpg", "sqlalchemy", "sqlite3", "aiosqlite")
# The model provider's client: a connection error through these is the provider's.
# Their errors that mean "not reachable, or gone midway" (not a query the database refused).
_UNREACHABLE = re.compile(
    r"Operational|Interface|Connection|Connect|Timeout|Pool|Disconnect|Shutdown|Closed"
)
_PROVIDER_MODULES = ("openai", "httpx", "httpcore", "langchain_openai", "langchain_core")


def _raised_in_database_code(error: BaseException) -> bool:
    tb = error.__traceback__
    while tb is not None:
        module = str(tb.tb_frame.f_globals.get("__name__", "")).split(".")[0]
        if module in _DATABASE_MODULES and _UNREACHABLE.search(type(error).__name__):
            return True
        tb = tb.tb_next
    return False


def is_database_failure(error: BaseException | None) -> bool:
    """Whether `error` (or what caused it) is the database being unreachable or failing, not
    the model provider: a driver's or pool's error, or a refused connection raised there."""
    for _ in range(10):
        if error is None:
            return False
        module = type(error).__module__.split(".")[0]
        if module in _PROVIDER_MODULES:
            return False
        if module in _DATABASE_MODULES and _UNREACHABLE.search(type(error).__name__):
            return True
        if isinstance(error, ConnectionError | TimeoutError) and _raised_in_database_code(error):
            return True
        error = error.__cause__ or error.__context__
    return False


def describe_not_run(error: BaseException, language: str = "zh") -> str:
    """A run that could not start or go on because the database was unreachable: nothing of
    it ran, and what was saved before is untouched."""
    return render(Failure(FailureCode.RUN_NOT_RUN, {"name": type(error).__name__}), language)


def describe_sign_in_busy(language: str = "zh") -> str:
    """A sign-in refused because too many are already waiting for their password check."""
    return render(Failure(FailureCode.SIGN_IN_BUSY), language)


def describe_database_away(what: str, language: str = "zh") -> str:
    """What cannot be done while the database is away: `sign_in`, or `threads` (the list of
    past threads), for a request the app answers with 503."""
    code = (
        FailureCode.SIGN_IN_DATABASE_AWAY
        if what == "sign_in"
        else FailureCode.THREADS_DATABASE_AWAY
    )
    return render(Failure(code), language)


_INCOMPLETE = {
    "length": FailureCode.ANSWER_LENGTH,
    "content_filter": FailureCode.CONTENT_FILTER,
    "empty": FailureCode.EMPTY_ANSWER,
}


def failure_of(error: BaseException) -> Failure:
    """What went wrong, as a code and values (never a secret). An error that carries its own
    `failure` (a refused document, an answer that is no document) is that failure."""
    own = getattr(error, "failure", None)
    if isinstance(own, Failure):
        return own
    status = getattr(error, "status_code", None)
    name = type(error).__name__
    if is_database_failure(error):
        return Failure(FailureCode.DATABASE_AWAY, {"name": name})
    if isinstance(error, openai.AuthenticationError) or status == 401:
        return Failure(FailureCode.PROVIDER_KEY_REFUSED)
    if isinstance(error, openai.RateLimitError) or status == 429:
        return Failure(FailureCode.RATE_LIMITED)
    if isinstance(error, openai.APITimeoutError | asyncio.TimeoutError | httpx.TimeoutException):
        return Failure(FailureCode.TIMEOUT)
    if isinstance(error, openai.InternalServerError) or (status is not None and status >= 500):
        return Failure(FailureCode.PROVIDER_SERVER_ERROR, {"status": status})
    if isinstance(error, openai.APIConnectionError):
        return Failure(FailureCode.CONNECTION_BROKEN)
    if isinstance(error, IncompleteAnswerError):
        return Failure(_INCOMPLETE.get(error.reason, FailureCode.ANSWER_CUT))
    if isinstance(error, StructuredOutputError):
        code = (
            FailureCode.JSON_LENGTH
            if error.finish_reason == "length"
            else FailureCode.UNREADABLE_ANSWER
        )
        return Failure(code, {"attempts": error.attempts})
    if isinstance(error, openai.APIStatusError):
        return Failure(FailureCode.PROVIDER_ERROR, {"status": status})
    if isinstance(error, ValueError) and "JSON" in name + str(error):
        return Failure(FailureCode.BROKEN_RESPONSE)
    return Failure(FailureCode.UNEXPECTED, {"name": name})


def describe_failure(error: BaseException, language: str = "zh") -> str:
    """What went wrong with the model provider, for the user, in `language`. Never includes
    secrets."""
    return render(failure_of(error), language)


# --- what would make a resumed run go otherwise --------------------------------------------

# "retry": the fault may pass (the provider was away, slow or rate-limiting, a stream broke,
#   the database was away): resuming as it is can succeed.
# "model": the model's answers could not be used (unreadable, refused, empty): the same model
#   would most likely fail the same way; another model would not.
# "size": an answer or a request did not fit the model (length limit, context): a larger model,
#   or a shorter document.
# "settings": the provider refused the request itself (key, address, model name): nothing in
#   the app changes that; the configuration does.
Remedy = Literal["retry", "model", "size", "settings"]

_OVERFLOW_WORDS = (
    "context_length_exceeded",
    "context length",
    "maximum context",
    "too many tokens",
)


def remedy_for(error: BaseException | None) -> Remedy:
    """What a resumed run needs changed to go otherwise than the one `error` ended (an error
    may carry its own `remedy`; a wrapping error is read through its cause)."""
    for _ in range(10):
        if error is None:
            return "retry"
        own = getattr(error, "remedy", None)
        if own in ("retry", "model", "size", "settings"):
            return own
        if is_database_failure(error):
            return "retry"
        if isinstance(error, IncompleteAnswerError):
            # cut, content_filter, empty: what the call policy retries as transient
            return "size" if error.reason == "length" else "retry"
        if isinstance(error, StructuredOutputError):
            return "size" if error.finish_reason == "length" else "model"
        if isinstance(error, openai.APIStatusError):
            status = error.status_code
            if status == 429 or status >= 500:
                return "retry"
            text = f"{getattr(error, 'code', '') or ''} {error.message}".lower()
            return "size" if any(word in text for word in _OVERFLOW_WORDS) else "settings"
        if isinstance(error, openai.APIError | httpx.HTTPError | asyncio.TimeoutError):
            return "retry"  # timeouts and broken connections
        if type(error) is ValueError:  # an answer our checks refused
            return "model"
        if error.__cause__ is None:
            return "retry"
        error = error.__cause__
    return "retry"
