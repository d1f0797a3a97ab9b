"""The one registry of answer models: every structured answer a role gives (Review, Rewrite,
the SRS agents and the SRS judge) and every tool's argument model (Team, Agent), each with
the roles or tools that use it.

An answer model makes the fields that carry its role's answer required (no default): `{}`,
an unrelated object or a list the model never sent is no answer, and an empty list counts
only when the model sent it. The one call path (`reqstudio.structured.ask_structured`) takes
only answer models registered here, and the tests that enumerate this registry cover a new
role's model without being edited.

Class names stay as they are: providers see them as the names of the JSON schemas."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=type[BaseModel])
A = TypeVar("A", bound=BaseModel)
Kind = Literal["answer", "tool_arguments"]


class UnregisteredAnswerModel(TypeError):
    """A structured call was made with a model that is not a registered answer model: a
    programming error (the model's fields were never checked to require an answer)."""


@dataclass(frozen=True)
class RegisteredModel:
    """One registered model.

    `users`: the roles that answer in it (each declared by its mode, `reqstudio.model_roles`,
    which names this model in the role's `answers`), or the tools that take it as arguments.
    `bare_array`: the field a bare JSON array fills, for roles whose
    prompt asks for an array (None: a bare array is no answer). `reask_policy`: the retry
    policy whose tries bound the re-asks, when it is not the role's own."""

    model: type[BaseModel]
    kind: Kind
    users: tuple[str, ...]
    bare_array: str | None = None
    reask_policy: str | None = None

    @property
    def name(self) -> str:
        return self.model.__name__

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(n for n, f in self.model.model_fields.items() if f.is_required())

    def policy_name(self, role: str) -> str:
        return self.reask_policy or role


_REGISTRY: dict[type[BaseModel], RegisteredModel] = {}


def _register(entry: RegisteredModel) -> None:
    model = entry.model
    required = entry.required
    if entry.kind == "answer" and not required:
        raise TypeError(
            f"{model.__name__}: an answer model needs required fields (the fields that carry "
            "the answer); with every field defaulted, {} would be an answer"
        )
    if not required and model.model_config.get("extra") != "forbid":
        raise TypeError(f"{model.__name__}: without required fields, unknown keys must be refused")
    if entry.bare_array is not None and entry.bare_array not in required:
        raise TypeError(f"{model.__name__}: bare_array must name a required field")
    known = _REGISTRY.get(model)
    if known is not None and known != entry:
        raise TypeError(f"{model.__name__} is registered already, differently")
    _REGISTRY[model] = entry


def answer_model(
    *roles: str, bare_array: str | None = None, reask_policy: str | None = None
) -> Callable[[M], M]:
    """Register the decorated class as the structured answer of `roles`."""
    if not roles:
        raise TypeError("answer_model needs the role(s) that answer in the model")

    def register(model: M) -> M:
        _register(RegisteredModel(model, "answer", tuple(roles), bare_array, reask_policy))
        return model

    return register


def tool_arguments(*tools: str) -> Callable[[M], M]:
    """Register the decorated class as the argument model of the tool(s) named `tools`."""
    if not tools:
        raise TypeError("tool_arguments needs the name(s) of the tool(s) that take the model")

    def register(model: M) -> M:
        _register(RegisteredModel(model, "tool_arguments", tuple(tools)))
        return model

    return register


def registered(kind: Kind | None = None) -> list[RegisteredModel]:
    """Every registered model (of one `kind`), in the order they were registered."""
    return [e for e in _REGISTRY.values() if kind is None or e.kind == kind]


def registration(model: type[BaseModel]) -> RegisteredModel | None:
    return _REGISTRY.get(model)


def answer_entry(model: Any) -> RegisteredModel:
    """`model`'s registration as an answer model; `UnregisteredAnswerModel` if it has none."""
    entry = _REGISTRY.get(model) if isinstance(model, type) else None
    if entry is None or entry.kind != "answer":
        what = "a tool's argument model" if entry is not None else "not registered"
        name = getattr(model, "__name__", repr(model))
        raise UnregisteredAnswerModel(
            f"{name} is {what}, not a registered answer model: decorate it with "
            "reqstudio.answers.answer_model(<role>) and make the fields that carry the answer "
            "required"
        )
    return entry


def tool_arguments_entry(model: Any) -> RegisteredModel:
    """`model`'s registration as a tool's argument model; `UnregisteredAnswerModel` if none."""
    entry = _REGISTRY.get(model) if isinstance(model, type) else None
    if entry is None or entry.kind != "tool_arguments":
        name = getattr(model, "__name__", repr(model))
        raise UnregisteredAnswerModel(
            f"{name} is not a registered tool argument model: decorate it with "
            "reqstudio.answers.tool_arguments(<tool name>)"
        )
    return entry


def describe_problems(error: ValidationError, limit: int = 5, whole: str = "value") -> str:
    """Pydantic's complaints as one readable line: `field.path: message; ...` (`whole`
    names a complaint about the value as a whole)."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or whole}: {e['msg']}" for e in error.errors()[:limit]
    )


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return type(value).__name__


def read_answer(data: Any, model: type[A]) -> A:
    """`data` (parsed JSON) as `model`'s answer; ValueError with a readable reason if it is
    not one. A bare array fills the model's `bare_array` field where its prompt asks for an
    array; anywhere else an answer is a JSON object."""
    entry = answer_entry(model)
    fields = ", ".join(entry.required)
    if isinstance(data, list):
        if entry.bare_array is None:
            raise ValueError(
                f"the answer is a JSON array, but a JSON object with the fields {fields} is "
                "required"
            )
        data = {entry.bare_array: data}
    elif not isinstance(data, dict):
        raise ValueError(
            f"the answer is {_json_kind(data)}, not a JSON object with the fields {fields}"
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ValueError(
            f"the JSON did not match the required shape ({describe_problems(exc)})"
        ) from None
