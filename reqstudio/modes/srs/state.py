"""The SRS pipeline's state (seed 000, "GraphState") and the shapes its agents answer in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol, TypedDict

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, field_validator

from reqstudio.answers import answer_model
from reqstudio.modes.srs.interactions import InteractionLog

if TYPE_CHECKING:  # run-scoped context only; the CLI reads ABLATIONS without the model client
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
    """Seed 000's GraphState, with the app's additions marked.

    `logs` is not here: the interaction log is kept outside the checkpointed state
    (`reqstudio.modes.srs.interactions`), each entry stored once; `log_count` says how many entries
    belong to the completed nodes."""

    user_input: str  # the user's natural-language requirements
    reference_srs: str  # the reference SRS ReqClarify scores against
    req_list: list[dict[str, Any]]  # [{"id": ..., "content": ...}, ...]
    scores: dict[str, int]  # {id: score} from the latest ReqClarify round
    # The seed's count: ReqParse makes it 1 ("递增"), each ReqClarify adds 1, and the loop
    # goes on while iteration < max_iterations. So max_iterations=N gives N-1
    # ReqExplore/ReqClarify rounds (at least one), as in the seed's reference implementation.
    iteration: int
    max_iterations: int  # default 5
    srs_output: str  # the final SRS (Markdown)
    srs_stream_printed: bool
    frozen_ids: list[str]
    frozen_reqs: dict[str, str]  # {id: content at the moment it froze}
    removed_ids: list[str]
    ablation_mode: str | None
    score_reasons: dict[str, str]  # added: {id: reason} from the latest ReqClarify round
    removed_reqs: dict[str, str]  # added: {id: content when removed}, shown to ReqExplore
    last_node: str  # added: the last node that completed (for resuming)
    rounds: int  # added: ReqExplore rounds run (what the steps and the summary count)
    log_count: int  # added: interaction-log entries of the completed nodes
    # added: wait for the user's decision after each ReqClarify round
    pause_after_round: bool
    # added: {id: origin} for the traceability matrix (agents.srs.trace); a checkpoint saved
    # before it was kept has none, read as {}
    origins: dict[str, dict[str, Any]]


def initial_state(
    user_input: str,
    reference_srs: str,
    ablation: Ablation,
    max_iterations: int,
    pause_after_round: bool = False,
) -> GraphState:
    return GraphState(
        user_input=user_input,
        reference_srs=reference_srs,
        req_list=[],
        scores={},
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
        rounds=0,
        log_count=0,
        pause_after_round=pause_after_round,
        origins={},
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


def _objects_only(value: Any) -> Any:
    """The seed reads each element with `.get`; an element that is not an object is skipped
    (and counted by the node) instead of failing the whole answer."""
    if isinstance(value, list):
        return [item for item in value if isinstance(item, dict | BaseModel)]
    return value


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def _usable_requirement(item: Any) -> bool:
    return bool(_text_or_empty(_field(item, "id")) and _text_or_empty(_field(item, "content")))


def _usable_score(item: Any) -> bool:
    return bool(_text_or_empty(_field(item, "id"))) and seed_int(_field(item, "score")) is not None


def _some_usable(what: str, usable: Any) -> Any:
    """A list whose items are all skipped is no answer (`[{"verdict": "fine"}]`, `[1, 2]`):
    the seed skips an unusable item, but a list of nothing but such items is asked again."""

    def check(value: Any) -> Any:
        if isinstance(value, list) and value:
            kept = [i for i in value if isinstance(i, dict | BaseModel) and usable(i)]
            if not kept:
                raise ValueError(f"none of the {len(value)} item(s) is {what}")
        return value

    return check


# minItems/maxItems guide a schema-decoding model only. Validation accepts an empty list as
# the seed does (ReqExplore keeps the list as it was; ReqClarify scores nothing this round):
# the list itself is required, so `{}` or an unrelated object is no answer. The prompts ask
# for a bare JSON array, which fills the list.
LIST_BOUNDS = {"minItems": 1, "maxItems": 60}
REQUIREMENT_ITEM = 'a requirement with an id and content ({"id": "FR-01", "content": "..."})'
SCORE_ITEM = 'a score with an id and a whole number ({"id": "FR-01", "score": 1, "reason": "..."})'


@answer_model("ReqParse", "ReqExplore", bare_array="requirements")
class RequirementList(BaseModel):
    requirements: Annotated[list[Requirement], Field(json_schema_extra=LIST_BOUNDS)]

    _objects = field_validator("requirements", mode="before")(_objects_only)
    # Before validators run last-defined first: this one sees the list as the model sent it.
    _usable = field_validator("requirements", mode="before")(
        _some_usable(REQUIREMENT_ITEM, _usable_requirement)
    )


def seed_int(value: Any) -> int | None:
    """The seed's `int(sc_val)`, with the items it cannot read as None (skipped later):
    1.5 -> 1, "2" -> 2, 3 -> 3, "abc" / None / "1.5" -> None."""
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _strict_item_schema(schema: dict[str, Any]) -> None:
    """What a schema-decoding model is asked for: every field, no defaults, nothing else."""
    schema["required"] = list(schema.get("properties", {}))
    schema["additionalProperties"] = False
    for prop in schema.get("properties", {}).values():
        prop.pop("default", None)


class Score(BaseModel):
    """ReqClarify's verdict on one unfrozen requirement. Read as leniently as the seed: the
    score goes through `int()`, and an item without an id or a readable score is kept here
    as empty and skipped (and logged) by `apply_scores`, not failing the whole round."""

    model_config = ConfigDict(extra="ignore", json_schema_extra=_strict_item_schema)

    id: str = Field(default="", json_schema_extra={"pattern": ID_PATTERN})
    # The schema asks a decoding model for -2..+2; what arrives is read with int().
    score: Annotated[
        int | None,
        WithJsonSchema({"maximum": 2, "minimum": -2, "title": "Score", "type": "integer"}),
    ] = None
    reason: str = Field(default="", json_schema_extra={"pattern": REASON_PATTERN})

    _coerce = field_validator("id", "reason", mode="before")(_text_or_empty)
    _score = field_validator("score", mode="before")(seed_int)


@answer_model("ReqClarify", bare_array="scores")
class ScoreList(BaseModel):
    scores: Annotated[list[Score], Field(json_schema_extra=LIST_BOUNDS)]

    _objects = field_validator("scores", mode="before")(_objects_only)
    _usable = field_validator("scores", mode="before")(_some_usable(SCORE_ITEM, _usable_score))


class StartedCall(Protocol):
    """A node's model call started before the graph (`reqstudio.modes.srs.first_call`)."""

    async def relay(self, write: Callable[[Any], None]) -> Any: ...


@dataclass
class SrsContext:
    """Run-scoped things the nodes need and the checkpoint must not hold."""

    factory: ModelFactory
    tracker: UsageTracker
    log: InteractionLog
    # ReqParse's call when the run started it before building the graph (ReqParse takes it)
    first_call: StartedCall | None = None
