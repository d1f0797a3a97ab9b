"""The one structured-output path every agent uses.

1. Ask with `response_format` = JSON schema where the provider supports it.
2. Read the answer: a ```json fence, else the bare JSON, else the outermost brackets,
   then `json_repair` for the small damage models do (trailing commas, quotes) inside JSON
   that is closed: a list cut before its closing bracket is re-asked, never shortened.
3. Validate with Pydantic. If that fails, re-ask within the call's one retry policy
   (`reqstudio.calls`), telling the model exactly what was wrong with its previous answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import json_repair
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ValidationError

from reqstudio.calls import (
    IncompleteAnswerError,
    RetryCallback,
    RetryPolicy,
    is_transient,
    notify,
    retrying,
    stream_once,
)

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
    """`extract_json` then Pydantic validation; raises ValueError with a readable reason."""
    data = extract_json(text)
    list_fields = [n for n, f in schema.model_fields.items() if f.is_required()]
    if isinstance(data, list) and len(list_fields) == 1:
        # Prompts ask for a bare JSON array; schema mode needs an object around it.
        data = {list_fields[0]: data}
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise ValueError(f"the JSON did not match the required shape ({problems})") from None


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
    """An answer that arrived whole but could not be used; the next try re-asks."""


async def ask_structured(
    model: BaseChatModel | Runnable,
    messages: Sequence[BaseMessage],
    schema: type[T],
    *,
    response_format: dict[str, Any] | None,
    policy: RetryPolicy,
    label: str = "",
    on_retry: RetryCallback | None = None,
) -> StructuredResult[T]:
    """Call `model` until its answer validates against `schema`, within one `policy`.

    Transport faults, cut streams and unusable answers all spend tries of the same policy
    (the seed's counts), so a call is never tried more often than the policy says. An answer
    cut at the length limit is re-asked, never repaired into a shorter valid one.
    `response_format`: from `ModelFactory.response_format` (None: the prompt alone asks)."""
    runnable = model.bind(response_format=response_format) if response_format else model
    conversation = list(messages)
    errors: list[str] = []
    raw = ""
    last_finish: str | None = None  # of the last answer that arrived

    def worth_retrying(error: BaseException) -> bool:
        return isinstance(error, UnreadableAnswer) or is_transient(error)

    async def note_retry(attempt: int, error: BaseException, wait: float) -> None:
        if not isinstance(error, UnreadableAnswer):
            errors.append(f"transport: {type(error).__name__}")
        await notify(on_retry, attempt, error, wait)

    try:
        async for attempt in retrying(policy, label, note_retry, worth_retrying):
            with attempt:
                try:
                    reply = await stream_once(runnable, conversation, None, label)
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
                    raise UnreadableAnswer(LENGTH_REASK) from None
                last_finish = None
                raw = reply.content if isinstance(reply.content, str) else str(reply.content)
                try:
                    value = parse_structured(raw, schema)
                except ValueError as exc:
                    errors.append(str(exc))
                    conversation += [AIMessage(raw), HumanMessage(REASK_TEMPLATE.format(error=exc))]
                    raise UnreadableAnswer(str(exc)) from None
                return StructuredResult(value, raw, attempt.retry_state.attempt_number, errors)
    except UnreadableAnswer:
        if last_finish == "length":
            message = (
                f"the model's answer hit the length limit (finish reason: length) before its "
                f"JSON was complete, still after {policy.attempts} attempts"
            )
        else:
            message = (
                f"the model's answer was not valid JSON after {policy.attempts} attempts: "
                f"{errors[-1]}"
            )
        raise StructuredOutputError(message, raw, policy.attempts, last_finish) from None
    raise AssertionError("unreachable")  # pragma: no cover
