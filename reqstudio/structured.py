"""The one structured-output path every agent uses.

1. Ask with `response_format` = JSON schema where the provider supports it.
2. Read the answer: a ```json fence, else the bare JSON, else the outermost brackets,
   then `json_repair` for the small damage models do (trailing commas, quotes) inside JSON
   that is closed: a list cut before its closing bracket is re-asked, never shortened.
3. Validate as the role's registered answer model (`reqstudio.answers`), whose answer fields
   are required: `{}`, an unrelated object or prose is no answer. If that fails, re-ask
   within the call's one retry policy (`reqstudio.calls`), telling the model exactly what
   was wrong with its previous answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel

from reqstudio.answers import answer_entry, read_answer
from reqstudio.calls import (
    IncompleteAnswerError,
    RetryCallback,
    RetryPolicy,
    is_transient,
    notify,
    retrying,
    stream_once,
)
from reqstudio.waits import watched_call

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


class StructuredOutputError(RuntimeError):
    """The model never produced parseable output within the allowed attempts.

    `finish_reason` is "length" when the last answer was cut at the length limit (the JSON
    was never whole, not unparseable), else None (the answer was whole but no usable JSON)."""

    def __init__(
        self, message: str, raw_output: str, attempts: int, finish_reason: str | None = None
    ):
        super().__init__(message)
        self.raw_output = raw_output
        self.attempts = attempts
        self.finish_reason = finish_reason

    @property
    def cause_code(self) -> str:
        """The last failure as a wait's cause (`reqstudio.waits.Cause`)."""
        return "length" if self.finish_reason == "length" else "unreadable"


@dataclass
class StructuredResult(Generic[T]):
    value: T
    raw_output: str
    attempts: int
    parse_errors: list[str] = field(default_factory=list)


def extract_json(text: str) -> Any:
    """Parse the JSON value in a model's answer, repairing it if needed; ValueError if none."""
    text = (text or "").strip()
    if not text:
        raise ValueError("the answer was empty")
    candidates: list[str] = [m.group(1).strip() for m in _FENCE.finditer(text)]
    if "```" in text and not candidates:  # an opening fence that never closed
        candidates.append(text.split("```", 1)[1].removeprefix("json").strip())
    candidates.append(text)
    starts = [i for i in (text.find("["), text.find("{")) if i != -1]
    if starts:
        start = min(starts)
        end = max(text.rfind("]"), text.rfind("}"))
        if end > start:
            candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    cut = False
    for candidate in candidates:
        if not is_closed(candidate):
            cut = cut or candidate.lstrip().startswith(("[", "{"))
            continue
        import json_repair  # only for a damaged answer: not imported before the first request

        repaired = json_repair.loads(candidate)
        if repaired not in ("", None, [], {}):
            return repaired
    if cut:
        raise ValueError("the JSON stops before its closing bracket (it was cut off)")
    raise ValueError("no JSON array or object was found in the answer")


_CLOSER = {"[": "]", "{": "}"}


def is_closed(candidate: str) -> bool:
    """Whether the JSON text ends with the bracket that closes the one it starts with.

    `json_repair` may mend syntax inside a value (trailing commas, quotes), but it would also
    close a list that was cut off, turning 12 items into a valid list of 7: a text that stops
    before its closing bracket is not repaired, the model is asked again."""
    text = candidate.strip()
    if not text or text[0] not in _CLOSER or text[-1] != _CLOSER[text[0]]:
        return False
    depth, in_string, escaped = 0, False, False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return index == len(text) - 1  # the first bracket closes at the very end
    return False


def parse_structured(text: str, schema: type[T]) -> T:
    """`extract_json`, then validation as `schema`'s registered answer (`reqstudio.answers`:
    a bare array only where the role's prompt asks for one); ValueError with a readable
    reason."""
    return read_answer(extract_json(text), schema)


SchemaDialect = Literal["openai", "llama_cpp"]


def json_schema_format(
    schema: type[BaseModel],
    *,
    dialect: SchemaDialect = "openai",
    json_schema: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The `response_format` asking for `schema` (or a tightened `json_schema` of it)."""
    body = json_schema if json_schema is not None else schema.model_json_schema()
    if dialect == "llama_cpp":
        # llama-cpp-python's server refuses OpenAI's json_schema form; it takes this one.
        return {"type": "json_object", "schema": body}
    return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": body}}


REASK_TEMPLATE = (
    "Your previous answer could not be used: {error}.\n"
    "Reply again with only the JSON described above, in a ```json fence, and nothing else."
)
LENGTH_REASK = (
    "your answer was cut off at the length limit before the JSON was complete; give the "
    "complete JSON, more concisely"
)


class UnreadableAnswer(ValueError):
    """An answer that arrived whole but could not be used; the next try re-asks. `cause_code`
    says why, for the waits' observers: unreadable, or length (cut at the length limit)."""

    def __init__(self, message: str, cause_code: str = "unreadable"):
        super().__init__(message)
        self.cause_code = cause_code


async def ask_structured(
    model: BaseChatModel | Runnable,
    messages: Sequence[BaseMessage],
    schema: type[T],
    *,
    response_format: dict[str, Any] | None,
    policy: RetryPolicy,
    label: str = "",
    on_retry: RetryCallback | None = None,
    check: Callable[[T], None] | None = None,
) -> StructuredResult[T]:
    """Call `model` until its answer validates against `schema`, within one `policy`.

    Transport faults, cut streams and unusable answers all spend tries of the same policy
    (the seed's counts), so a call is never tried more often than the policy says. An answer
    cut at the length limit is re-asked, never repaired into a shorter valid one.
    `response_format`: from `ModelFactory.response_format` (None: the prompt alone asks).
    `schema` must be a registered answer model (`reqstudio.answers`): any other is refused
    before a call, as a programming error (`UnregisteredAnswerModel`). Its waits are reported
    to the context's observers (`reqstudio.waits`). `check` refuses, with a ValueError saying
    why, an answer that has the schema's shape but that the schema alone cannot judge (ids
    that must name something the caller knows): it is re-asked like unreadable JSON."""
    answer_entry(schema)
    runnable = model.bind(response_format=response_format) if response_format else model
    conversation = list(messages)
    errors: list[str] = []
    raw = ""
    last_finish: str | None = None  # of the last answer that arrived
    refused = False  # the last answer was JSON of the right shape that `check` refused

    def worth_retrying(error: BaseException) -> bool:
        return isinstance(error, UnreadableAnswer) or is_transient(error)

    async def note_retry(attempt: int, error: BaseException, wait: float) -> None:
        if not isinstance(error, UnreadableAnswer):
            errors.append(f"transport: {type(error).__name__}")
        await notify(on_retry, attempt, error, wait)

    # Its waits go to the context's observers (reqstudio.waits); the JSON is never shown.
    async with watched_call(label, policy.attempts, streamed=False) as watch:
        try:
            async for attempt in retrying(policy, label, note_retry, worth_retrying, watch):
                with attempt:
                    try:
                        reply = await stream_once(runnable, conversation, None, label, watch=watch)
                    except IncompleteAnswerError as exc:
                        if exc.reason != "length":
                            raise
                        last_finish = "length"
                        raw = exc.partial
                        errors.append(LENGTH_REASK)
                        conversation += [
                            AIMessage(raw),
                            HumanMessage(REASK_TEMPLATE.format(error=LENGTH_REASK)),
                        ]
                        raise UnreadableAnswer(LENGTH_REASK, "length") from None
                    last_finish = None
                    raw = reply.content if isinstance(reply.content, str) else str(reply.content)
                    refused = False
                    try:
                        value = parse_structured(raw, schema)
                        if check is not None:
                            refused = True
                            check(value)
                            refused = False
                    except ValueError as exc:
                        errors.append(str(exc))
                        conversation += [
                            AIMessage(raw),
                            HumanMessage(REASK_TEMPLATE.format(error=exc)),
                        ]
                        raise UnreadableAnswer(str(exc)) from None
                    return StructuredResult(value, raw, attempt.retry_state.attempt_number, errors)
        except UnreadableAnswer:
            if last_finish == "length":
                message = (
                    f"the model's answer hit the length limit (finish reason: length) before its "
                    f"JSON was complete, still after {policy.attempts} attempts"
                )
            elif refused:
                message = (
                    f"the model's answer could not be used after {policy.attempts} attempts: "
                    f"{errors[-1]}"
                )
            else:
                message = (
                    f"the model's answer was not valid JSON after {policy.attempts} attempts: "
                    f"{errors[-1]}"
                )
            raise StructuredOutputError(message, raw, policy.attempts, last_finish) from None
    raise AssertionError("unreachable")  # pragma: no cover
