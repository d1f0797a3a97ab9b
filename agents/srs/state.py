"""The SRS pipeline's state (seed 000, "GraphState") and the shapes its agents answer in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reqstudio.llm import ModelFactory
from reqstudio.usage import UsageTracker

Ablation = Literal["none", "no-clarify", "no-explore-clarify"]
AgentName = Literal["ReqParse", "ReqExplore", "ReqClarify", "DocGenerate"]
ABLATIONS: tuple[Ablation, ...] = ("none", "no-clarify", "no-explore-clarify")

# Guidance for providers that decode against the JSON schema (llama.cpp, OpenAI): ids in the
# seed's numbering, and one-line strings (a small model otherwise leaks raw newlines).
ID_PATTERN = r"^(FR|NFR|CON|SUG)-[0-9]{2,3}$"
ONE_LINE_PATTERN = r'^[^"\\\n]{1,400}$'
REASON_PATTERN = r'^[^"\\\n]{1,80}$'


class GraphState(TypedDict):
    """Seed 000's GraphState, plus three fields the app needs (marked)."""

    user_input: str  # the user's natural-language requirements
    reference_srs: str  # the reference SRS ReqClarify scores against
    req_list: list[dict[str, Any]]  # [{"id": ..., "content": ...}, ...]
    scores: dict[str, int]  # {id: score} from the latest ReqClarify round
    logs: list[dict[str, Any]]  # one entry per LLM interaction
    iteration: int  # ReqClarify rounds completed
    max_iterations: int  # bound on ReqClarify rounds (default 5)
    srs_output: str  # the final SRS (Markdown)
    srs_stream_printed: bool
    frozen_ids: list[str]
    frozen_reqs: dict[str, str]  # {id: content at the moment it froze}
    removed_ids: list[str]
    ablation_mode: str | None
    score_reasons: dict[str, str]  # added: {id: reason} from the latest ReqClarify round
    removed_reqs: dict[str, str]  # added: {id: content when removed}, shown to ReqExplore
    last_node: str  # added: the last node that completed (for resuming)


def initial_state(
    user_input: str, reference_srs: str, ablation: Ablation, max_iterations: int
) -> GraphState:
    return GraphState(
        user_input=user_input,
        reference_srs=reference_srs,
        req_list=[],
        scores={},
        logs=[],
        iteration=0,
        max_iterations=max_iterations,
        srs_output="",
        srs_stream_printed=False,
        frozen_ids=[],
        frozen_reqs={},
        removed_ids=[],
        ablation_mode=ablation,
        score_reasons={},
        removed_reqs={},
        last_node="",
    )


def _text_or_empty(value: Any) -> str:
    if value is None:
        return ""
    return str(value).strip()


class Requirement(BaseModel):
    """One atomic requirement. Lenient on input: an item missing id or content is read as
    empty and then dropped by `normalize_requirements`, as the seed does."""

    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={"required": ["id", "content"], "additionalProperties": False},
    )

    id: str = Field(default="", json_schema_extra={"pattern": ID_PATTERN})
    content: str = Field(default="", json_schema_extra={"pattern": ONE_LINE_PATTERN})

    _coerce = field_validator("id", "content", mode="before")(_text_or_empty)


class RequirementList(BaseModel):
    # maxItems bounds a schema-decoding model; a provider may still send more, which is fine.
    requirements: list[Requirement] = Field(min_length=1, json_schema_extra={"maxItems": 60})


class Score(BaseModel):
    """ReqClarify's verdict on one unfrozen requirement."""

    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={"required": ["id", "score", "reason"], "additionalProperties": False},
    )

    id: str = Field(json_schema_extra={"pattern": ID_PATTERN})
    score: int = Field(ge=-2, le=2)
    reason: str = Field(default="", json_schema_extra={"pattern": REASON_PATTERN})

    _coerce = field_validator("id", "reason", mode="before")(_text_or_empty)


class ScoreList(BaseModel):
    scores: list[Score] = Field(min_length=1, json_schema_extra={"maxItems": 60})


@dataclass
class SrsContext:
    """Run-scoped things the nodes need and the checkpoint must not hold."""

    factory: ModelFactory
    tracker: UsageTracker
