"""Why a reviewer's or an author's answer did not count, said to the user in Chinese and kept
in English in the record and the JSON: the call policy's last fault, by name."""

from __future__ import annotations

from reqstudio.calls import IncompleteAnswerError
from reqstudio.errors import describe_failure
from reqstudio.structured import StructuredOutputError

INCOMPLETE_REASONS = {
    "length": "the answer was cut off at the length limit (finish reason: length), "
    "also after continuing",
    "content_filter": "the provider's content filter stopped the answer "
    "(finish reason: content_filter), also after retries",
    "cut": "the answer stream ended without a finish reason, also after retries",
    "empty": "the answer was empty, also after retries",
}


class ReviewRoundFailed(RuntimeError):
    """No reviewer's answer could be read this round: nothing to decide on."""


INCOMPLETE_REASONS_ZH = {
    "length": "回答在长度上限处被截断（finish reason: length），续写后仍不完整",
    "content_filter": "模型服务的内容过滤中止了回答（finish reason: content_filter），重试后仍然如此",
    "cut": "回答流在没有结束原因的情况下中断，重试后仍然如此",
    "empty": "回答为空，重试后仍然如此",
}


def reason_zh_for(error: BaseException) -> str:
    """`reason_for` in Chinese, for the user; the English one stays in the record and JSON."""
    if isinstance(error, StructuredOutputError):
        return f"模型多次返回无法解析或不符合要求的 JSON（{error.attempts} 次尝试）：{error}"
    if type(error) is ValueError:
        return f"回答无法使用：{error}"
    if isinstance(error, IncompleteAnswerError):
        return INCOMPLETE_REASONS_ZH.get(
            error.reason, f"回答以 finish reason {error.reason!r} 结束，重试后仍然如此"
        )
    return describe_failure(error, "zh")


def reason_for(error: BaseException) -> str:
    if isinstance(error, StructuredOutputError):
        return str(error)
    if type(error) is ValueError:
        return str(error)
    if isinstance(error, IncompleteAnswerError):
        # Every retry of the call's policy was spent: say which fault it kept hitting.
        return INCOMPLETE_REASONS.get(
            error.reason,
            f"the answer ended with finish reason {error.reason!r}, also after retries",
        )
    return describe_failure(error, "en")
