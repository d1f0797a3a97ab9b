"""Seed 000's SRS match evaluation: score a candidate SRS against a reference SRS.

Seven 0..1 metrics plus `by_category`, two composite scores, and the seed's four ways of
reading the model's JSON, tried in order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from langchain_core.messages import HumanMessage
from pydantic import BaseModel, ConfigDict, Field

from reqstudio.answers import answer_model, read_answer
from reqstudio.calls import complete, watched_tries
from reqstudio.failures import Failure, FailureCode
from reqstudio.llm import ModelFactory, context_overflow, estimate_tokens
from reqstudio.modes.srs.documents import ReferenceDocumentError
from reqstudio.modes.srs.metrics import METRIC_WEIGHTS, METRICS
from reqstudio.prompts import render_prompt
from reqstudio.usage import UsageTracker

NOT_JSON_ERROR = "模型输出的不是有效JSON"
OUT_OF_RANGE_ERROR = "模型给出的评分不在 0-1 范围内"
RAW_PREVIEW_CHARS = 500

_CODE_BLOCK = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
_OBJECT_START = re.compile(r"\{")


def _ratio() -> Any:
    return Field(ge=0.0, le=1.0)


class CategoryScores(BaseModel):
    model_config = ConfigDict(json_schema_extra={"additionalProperties": False})

    functional: float = _ratio()
    non_functional: float = _ratio()
    constraints: float = _ratio()


class EvaluationMetrics(BaseModel):
    model_config = ConfigDict(json_schema_extra={"additionalProperties": False})

    coverage: float = _ratio()
    completeness: float = _ratio()
    consistency: float = _ratio()
    testability: float = _ratio()
    clarity: float = _ratio()
    traceability: float = _ratio()
    scope_discipline: float = _ratio()
    by_category: CategoryScores


@answer_model("evaluation", reask_policy="evaluation_answer")
class EvaluationAnswer(BaseModel):
    """The answer's shape; sent as a JSON schema to providers that decode against one, and
    checked on every answer: the seed's prompt asks for every metric and `by_category`."""

    model_config = ConfigDict(json_schema_extra={"additionalProperties": False})

    metrics: EvaluationMetrics


# --- reading the answer: the seed's four methods, in order ---------------------------------


def _direct(content: str) -> Any:
    return json.loads(content)


def _code_block(content: str) -> Any:
    match = _CODE_BLOCK.search(content)
    if not match:
        raise ValueError("no code block")
    return json.loads(match.group(1))


def _brace_span(content: str) -> Any:
    first, last = content.find("{"), content.rfind("}")
    if first == -1 or last <= first:
        raise ValueError("no braces")
    return json.loads(content[first : last + 1])


def _candidate_scan(content: str) -> Any:
    """Every `{` that starts a decodable JSON object; the first holding "metrics" wins."""
    decoder = json.JSONDecoder()
    for match in _OBJECT_START.finditer(content):
        try:
            value, _ = decoder.raw_decode(content, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and "metrics" in value:
            return value
    raise ValueError("no object with metrics")


PARSE_METHODS: tuple[tuple[str, Callable[[str], Any]], ...] = (
    ("direct", _direct),
    ("code_block", _code_block),
    ("brace_span", _brace_span),
    ("candidate_scan", _candidate_scan),
)


def parse_evaluation_output(content: str) -> dict[str, Any]:
    """The model's answer as a dict, with `parse_method` naming the method that read it; or
    the seed's error object. A method that yields an object without "metrics" does not stop
    the search; if no method finds "metrics", the first object read is returned as is."""
    content = (content or "").strip()
    first_object: tuple[str, dict[str, Any]] | None = None
    for name, method in PARSE_METHODS:
        try:
            value = method(content)
        except ValueError:  # json.JSONDecodeError is a ValueError
            continue
        if not isinstance(value, dict):
            continue
        if "metrics" in value:
            return {**value, "parse_method": name}
        if first_object is None:
            first_object = (name, value)
    if first_object is not None:
        return {**first_object[1], "parse_method": first_object[0]}
    return {
        "error": NOT_JSON_ERROR,
        "raw_output": content[:RAW_PREVIEW_CHARS],
        "raw_output_length": len(content),
        "parse_method": None,
    }


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def calculate_comprehensive_score(result: dict[str, Any]) -> dict[str, float] | None:
    """Seed 000: the simple mean of the seven metrics, and their weighted mean (weights
    renormalised over the metrics present). None when no metric is a number."""
    metrics = result.get("metrics")
    if not isinstance(metrics, dict):
        return None
    values = {
        name: number
        for name in METRIC_WEIGHTS
        if (number := _as_number(metrics.get(name))) is not None
    }
    if not values:
        return None
    simple = sum(values.values()) / len(values)
    total_weight = sum(METRIC_WEIGHTS[name] for name in values)
    weighted = sum(values[name] * METRIC_WEIGHTS[name] for name in values) / total_weight
    return {
        "Comprehensive_Score_Simple": round(simple, 4),
        "Comprehensive_Score_Weighted": round(weighted, 4),
    }


class InvalidEvaluation(ValueError):
    """The answer is not a valid evaluation: a score outside 0-1 or a metric that is not a
    number (`error` OUT_OF_RANGE_ERROR), or no JSON object with the metrics at all (prose,
    `{}`, an unrelated object, an array; `error` NOT_JSON_ERROR). Asked again, never shown
    as a result."""

    def __init__(
        self,
        problem: str,
        content: str,
        parse_method: str | None,
        error: str = OUT_OF_RANGE_ERROR,
    ):
        super().__init__(problem)
        self.content = content
        self.parse_method = parse_method
        self.error = error

    @property
    def cause_code(self) -> str:
        """Why the evaluation is asked for again, as the retry line says it (reqstudio.waits)."""
        return "out_of_range" if self.error == OUT_OF_RANGE_ERROR else "unreadable"


def check_metrics(result: dict[str, Any]) -> None:
    """Raise `InvalidEvaluation` unless the metrics the answer gives are numbers in 0..1."""
    metrics = result.get("metrics")
    if not isinstance(metrics, dict):
        return  # no metrics at all: the seed returns such an object as it is
    problems: list[str] = []
    for name in METRICS:
        if name in metrics:
            problems += _range_problem(name, metrics[name])
    by_category = metrics.get("by_category")
    if isinstance(by_category, dict):
        for name, value in by_category.items():
            problems += _range_problem(f"by_category.{name}", value)
    if problems:
        raise InvalidEvaluation("; ".join(problems), "", result.get("parse_method"))


def _range_problem(name: str, value: Any) -> list[str]:
    number = _as_number(value)
    if number is None:
        return [f"{name}={value!r} is not a number"]
    if not 0.0 <= number <= 1.0:
        return [f"{name}={number:g} is outside 0-1"]
    return []


def check_answer(result: dict[str, Any]) -> None:
    """Raise `InvalidEvaluation` unless `result` (read by the seed's methods) is an answer:
    its scores in range (`check_metrics`), then its shape as the registered answer model."""
    if "error" in result:
        raise InvalidEvaluation("no JSON object was found in the answer", "", None, NOT_JSON_ERROR)
    check_metrics(result)
    try:
        read_answer({k: v for k, v in result.items() if k != "parse_method"}, EvaluationAnswer)
    except ValueError as problem:
        raise InvalidEvaluation(
            str(problem), "", result.get("parse_method"), NOT_JSON_ERROR
        ) from None


def error_object(error: InvalidEvaluation) -> dict[str, Any]:
    """The seed's error object (with the app's `problem`), for an answer that stayed
    invalid after every re-ask."""
    return {
        "error": error.error,
        "problem": str(error),
        "raw_output": error.content[:RAW_PREVIEW_CHARS],
        "raw_output_length": len(error.content),
        "parse_method": error.parse_method,
    }


def check_evaluation_fits(prompt: str, reference: str, candidate: str, factory: ModelFactory):
    """Refuse, before any call, an evaluation whose request would not fit the evaluation
    model's context: a provider that cut it would score the candidate against part of the
    reference (a wrong score that looks right); one that refuses it says less than this."""
    overflow = context_overflow(prompt, factory, "evaluation")
    if overflow is None:
        return
    needed, limit = overflow.needed, overflow.limit
    failure = Failure(
        FailureCode.EVALUATION_TOO_LARGE,
        {
            "needed": needed,
            "reference": estimate_tokens(reference),
            "candidate": estimate_tokens(candidate),
            "limit": limit,
        },
    )
    raise ReferenceDocumentError("too_large_for_context", failure)


async def evaluate_srs(
    reference: str,
    candidate: str,
    factory: ModelFactory,
    tracker: UsageTracker | None = None,
) -> dict[str, Any]:
    """Score `candidate` against `reference`. Model: OPENAI_EVALUATION_MODEL, else
    OPENAI_MODEL (role "evaluation", temperature 0.2 by default, six tries: 2/4/8/16/32 s).

    Scores outside 0-1 make the answer invalid, and so does an answer without the metrics
    (prose, `{}`, an unrelated object, wrong types, an array): it is asked again (policy
    "evaluation_answer"), then the seed's error object is returned, never a result.
    A request that would not fit the model's context is refused before any call
    (`ReferenceDocumentError`, code "too_large_for_context")."""
    prompt = render_prompt("srs/evaluation.md", standard_srs=reference, evaluated_srs=candidate)
    check_evaluation_fits(prompt, reference, candidate, factory)
    callbacks = [tracker] if tracker is not None else []
    model = factory.for_role("evaluation", callbacks=callbacks)
    response_format = factory.response_format(EvaluationAnswer, role="evaluation")
    if response_format is not None:
        model = model.bind(response_format=response_format)

    async def ask() -> dict[str, Any]:
        reply = await complete(
            model, [HumanMessage(prompt)], policy=factory.policy("evaluation"), label="evaluation"
        )
        content = reply.content if isinstance(reply.content, str) else str(reply.content)
        result = parse_evaluation_output(content)
        try:
            check_answer(result)
        except InvalidEvaluation as error:
            error.content = content
            raise
        return result

    policy = factory.policy("evaluation_answer")
    try:
        # each new try is said as one, like a model call's (reqstudio.waits)
        result = await watched_tries(
            policy,
            "evaluation answer",
            lambda watch: ask(),
            lambda error: isinstance(error, InvalidEvaluation),
        )
    except InvalidEvaluation as error:
        result = error_object(error)
    composites = calculate_comprehensive_score(result)
    if composites:
        result.update(composites)
    result["model"] = factory.model_name("evaluation")
    return result
