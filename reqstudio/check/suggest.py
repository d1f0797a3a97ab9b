"""Rewrites proposed by a model for the requirements with findings (`reqstudio check
--suggest`, the browser's "suggest a rewrite"): one structured call per requirement (role
"CheckSuggest", answer `SuggestedRewrite`), each rewrite judged by the meaning guard and
re-checked (`reqstudio.check.rewrite_guard`). The model proposes; nothing it says is taken
without the guard.

A call that gives no usable answer within its retry policy (garbage, a cut or filtered
answer, the length limit) is a failure of that requirement's suggestion, recorded as such:
the run is then partial, never complete."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage
from pydantic import BaseModel, ConfigDict, Field, field_validator

from reqstudio.answers import answer_model
from reqstudio.check.engine import CheckReport, Finding
from reqstudio.check.parse import Requirement
from reqstudio.check.rewrite_guard import GuardedRewrite, guard_rewrite
from reqstudio.prompts import render_prompt

ROLE = "CheckSuggest"
# how many requirements one run asks about unless told otherwise: a model call each
DEFAULT_MAX = 20
# the bundled offline model decodes against the schema: one line, no quotes or backslashes
ONE_LINE = r'^[^"\\\n]{1,400}$'


# the worked examples of the prompts (reqstudio/prompts/check/*/suggest.md): a model that
# gives one back has not rewritten the requirement it was asked about
PROMPT_EXAMPLES = frozenset(
    {"the display shall refresh within tbd milliseconds.", "显示屏应在待定毫秒内刷新。"}
)


@answer_model(ROLE)
class SuggestedRewrite(BaseModel):
    """A new wording of one requirement."""

    model_config = ConfigDict(extra="ignore")

    rewrite: str = Field(min_length=1, description="the new wording of the requirement")

    @field_validator("rewrite")
    @classmethod
    def _not_the_example(cls, value: str) -> str:
        if " ".join(value.split()).casefold() in PROMPT_EXAMPLES:
            raise ValueError("this is the prompt's example given back, not a rewrite")
        return value


@dataclass
class Suggestion:
    """One requirement's suggestion: judged (`guarded`), or failed (`error`)."""

    requirement: Requirement
    guarded: GuardedRewrite | None = None
    error: str = ""
    attempts: int = 0

    def as_dict(self) -> dict[str, Any]:
        if self.guarded is not None:
            return {**self.guarded.as_dict(), "error": "", "attempts": self.attempts}
        return {
            "requirement_id": self.requirement.label,
            "line": self.requirement.line,
            "original": self.requirement.body,
            "rewrite": None,
            "accepted": False,
            "error": self.error,
            "attempts": self.attempts,
        }


@dataclass
class SuggestRun:
    model: str
    suggestions: list[Suggestion] = field(default_factory=list)
    not_asked: int = 0  # requirements with findings past `max_requirements`

    @property
    def failed(self) -> int:
        return sum(1 for s in self.suggestions if s.guarded is None)

    @property
    def complete(self) -> bool:
        return self.failed == 0

    def summary(self) -> dict[str, Any]:
        judged = [s.guarded for s in self.suggestions if s.guarded is not None]
        return {
            "model": self.model,
            "asked": len(self.suggestions),
            "answered": len(judged),
            "failed": self.failed,
            "accepted": sum(1 for g in judged if g.accepted),
            "refused": sum(1 for g in judged if not g.accepted),
            "fewer_findings": sum(1 for g in judged if g.fewer_findings),
            "not_asked": self.not_asked,
            "complete": self.complete,
        }

    def as_dict(self) -> dict[str, Any]:
        return {"summary": self.summary(), "items": [s.as_dict() for s in self.suggestions]}


def requirements_to_fix(report: CheckReport) -> list[tuple[Requirement, list[Finding]]]:
    """Each requirement with findings of its own, in order, with them."""
    by_place: dict[tuple[str, int], list[Finding]] = {}
    for finding in report.findings:
        if finding.requirement_id:
            by_place.setdefault((finding.requirement_id, finding.line), []).append(finding)
    return [
        (r, by_place[(r.label, r.line)])
        for r in report.requirements
        if (r.label, r.line) in by_place
    ]


def suggest_prompt(requirement: Requirement, findings: list[Finding]) -> str:
    zh = requirement.language == "zh"
    return render_prompt(
        f"check/{'zh' if zh else 'en'}/suggest.md",
        requirement=requirement.body,
        findings=[f.message_zh if zh else f.message for f in findings],
    )


def _response_format(factory: Any) -> dict[str, Any] | None:
    bounded = None
    if factory.endpoint_for(ROLE).embedded:
        bounded = SuggestedRewrite.model_json_schema()
        bounded["properties"]["rewrite"] = {"type": "string", "pattern": ONE_LINE}
    return factory.response_format(SuggestedRewrite, json_schema=bounded, role=ROLE)


async def suggest_one(
    factory: Any, requirement: Requirement, findings: list[Finding]
) -> Suggestion:
    """Ask for a rewrite of `requirement` and judge it; a call that fails is recorded."""
    from reqstudio.calls import IncompleteAnswerError, is_transient
    from reqstudio.structured import StructuredOutputError, ask_structured

    try:
        result = await ask_structured(
            factory.for_role(ROLE),
            [HumanMessage(suggest_prompt(requirement, findings))],
            SuggestedRewrite,
            response_format=_response_format(factory),
            policy=factory.policy(ROLE),
            label=f"{ROLE} {requirement.label}",
        )
    except StructuredOutputError as error:
        return Suggestion(requirement, error=str(error), attempts=error.attempts)
    except IncompleteAnswerError as error:
        return Suggestion(requirement, error=str(error), attempts=factory.policy(ROLE).attempts)
    except Exception as error:
        if not is_transient(error):
            raise
        return Suggestion(requirement, error=f"{type(error).__name__}: {error}")
    return Suggestion(
        requirement, guard_rewrite(requirement, result.value.rewrite), attempts=result.attempts
    )


async def suggest_rewrites(
    factory: Any,
    report: CheckReport,
    max_requirements: int = DEFAULT_MAX,
    on_suggestion: Callable[[Suggestion], Awaitable[None] | None] | None = None,
) -> SuggestRun:
    """A suggestion for each of the first `max_requirements` requirements with findings, one
    call after the other (a local model has no spare cores for two)."""
    todo = requirements_to_fix(report)
    run = SuggestRun(factory.model_name(ROLE), not_asked=max(0, len(todo) - max_requirements))
    for requirement, findings in todo[:max_requirements]:
        suggestion = await suggest_one(factory, requirement, findings)
        run.suggestions.append(suggestion)
        if on_suggestion is not None:
            done = on_suggestion(suggestion)
            if done is not None:
                await done
    return run
