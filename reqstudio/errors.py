"""Plain-words descriptions of provider failures, in Chinese and English."""

from __future__ import annotations

import asyncio
import re

import httpx
import openai

from reqstudio.calls import IncompleteAnswerError
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
    name = type(error).__name__
    if language.startswith("zh"):
        return (
            f"这次运行没有进行：数据库无法访问（{name}）。本次没有执行任何步骤，之前保存的内容"
            "没有变化；请在数据库恢复后再试。"
        )
    return (
        f"The run did not go ahead: the database could not be reached ({name}). No step ran "
        "this time and nothing saved before has changed; try again once the database is back."
    )


def describe_sign_in_busy(language: str = "zh") -> str:
    """A sign-in refused because too many are already waiting for their password check."""
    if language.startswith("zh"):
        return "此刻登录的人太多，请几秒后再试。"
    return "Too many people are signing in at this moment; try again in a few seconds."


def describe_database_away(what: str, language: str = "zh") -> str:
    """What cannot be done while the database is away: `sign_in`, or `threads` (the list of
    past threads), for a request the app answers with 503."""
    zh = language.startswith("zh")
    if what == "sign_in":
        return (
            "数据库暂时无法访问，现在无法登录。请稍后再试；已保存的内容不受影响。"
            if zh
            else "The database cannot be reached just now, so signing in is not possible. Try "
            "again in a moment; nothing saved is affected."
        )
    return (
        "数据库暂时无法访问，历史对话列表暂时无法显示。当前对话可以继续，这段时间的消息会在"
        "数据库恢复后写入历史记录。"
        if zh
        else "The database cannot be reached just now, so the list of past threads cannot be "
        "shown. You can go on in this thread; its messages meanwhile are written to the "
        "history once the database is back."
    )


def describe_failure(error: BaseException, language: str = "zh") -> str:
    """What went wrong with the model provider, for the user. Never includes secrets.

    An error that carries its own words for the user (`message_en` and `message_zh`, as a
    refused document does) is described by them."""
    zh = language.startswith("zh")
    own = getattr(error, "message_zh" if zh else "message_en", None)
    if isinstance(own, str) and own and isinstance(getattr(error, "message_en", None), str):
        return own
    status = getattr(error, "status_code", None)
    if is_database_failure(error):
        return (
            f"数据库无法访问（{type(error).__name__}）。"
            if zh
            else f"The database could not be reached ({type(error).__name__})."
        )
    if isinstance(error, openai.AuthenticationError) or status == 401:
        return (
            "模型服务拒绝了 API 密钥（401）。请检查 OPENAI_API_KEY 与 OPENAI_BASE_URL。"
            if zh
            else "The model provider rejected the API key (401). Check OPENAI_API_KEY and OPENAI_BASE_URL."
        )
    if isinstance(error, openai.RateLimitError) or status == 429:
        return (
            "模型服务限流（429），重试后仍未成功。请稍后再试。"
            if zh
            else "The model provider is rate-limiting (429), still after retries. Try again later."
        )
    if isinstance(error, openai.APITimeoutError | asyncio.TimeoutError | httpx.TimeoutException):
        return (
            "模型服务响应超时，重试后仍未成功。可调大 OPENAI_TIMEOUT 或稍后再试。"
            if zh
            else "The model provider timed out, still after retries. Raise OPENAI_TIMEOUT or try later."
        )
    if isinstance(error, openai.InternalServerError) or (status is not None and status >= 500):
        return (
            f"模型服务内部错误（{status}），重试后仍未成功。"
            if zh
            else f"The model provider had a server error ({status}), still after retries."
        )
    if isinstance(error, openai.APIConnectionError):
        return (
            "与模型服务的连接中断（流式输出中途断开或无法连接）。"
            if zh
            else "The connection to the model provider broke (stream cut off, or unreachable)."
        )
    if isinstance(error, IncompleteAnswerError):
        if error.reason == "length":
            return (
                "模型的回答达到长度上限，没有完整给出（未当作完整结果）。"
                if zh
                else "The model's answer hit its length limit and is not complete (not taken as a result)."
            )
        if error.reason == "content_filter":
            return (
                "模型服务的内容过滤中断了回答（finish_reason: content_filter），重试后仍未成功；"
                "未当作完整结果。"
                if zh
                else "The provider's content filter stopped the answer (finish_reason: "
                "content_filter), still after retries; not taken as a result."
            )
        if error.reason == "empty":
            return (
                "模型返回了空回答（没有文字也没有工具调用），重试后仍未成功。"
                if zh
                else "The model returned an empty answer (no text, no tool call), still after retries."
            )
        return (
            "模型的回答中途中断（没有结束标记），重试后仍未成功。"
            if zh
            else "The model's answer broke off before it finished, still after retries."
        )
    if isinstance(error, StructuredOutputError):
        if error.finish_reason == "length":
            return (
                f"模型的回答在 JSON 写完之前达到长度上限（finish_reason: length），"
                f"{error.attempts} 次尝试后仍无完整结果；未当作完整结果。"
                if zh
                else f"The model's answer hit its length limit before the JSON was complete "
                f"(finish_reason: length), still after {error.attempts} attempts; not taken "
                "as a result."
            )
        return (
            f"模型多次返回无法解析的 JSON（{error.attempts} 次尝试）。"
            if zh
            else f"The model kept returning unparseable JSON ({error.attempts} attempts)."
        )
    if isinstance(error, openai.APIStatusError):
        return (
            f"模型服务返回错误（{status}）。"
            if zh
            else f"The model provider returned an error ({status})."
        )
    if isinstance(error, ValueError) and "JSON" in type(error).__name__ + str(error):
        return (
            "模型服务返回了损坏的数据（不是有效 JSON）。"
            if zh
            else "The model provider returned a broken response (not valid JSON)."
        )
    return (
        f"出现意外错误：{type(error).__name__}。"
        if zh
        else f"Unexpected error: {type(error).__name__}."
    )
