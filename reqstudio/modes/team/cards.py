"""Interface specs as agent cards.

A role's Interface_Spec (seed 004, requirement 4.2: services, input_format, output_format,
examples) has the shape of an A2A agent card as well: `name`, `description`, `skills` (each
with an `id`, a `name`, a `description`, `examples`, `input_modes`, `output_modes`) and
`default_input_modes` / `default_output_modes`. Either shape is accepted and the other is
filled in from it, so the old flat specs still work:

    {"services": ["术语表"], "input_format": "术语列表", "output_format": "定义表"}
    {"name": "术语专家", "description": "统一术语", "skills": [{"id": "glossary",
     "name": "术语表", "examples": ["请定义：订单"]}]}

A2A's camelCase keys (`defaultInputModes`, `inputModes`, ...) are accepted too. A message or
a brief may name the `skill` it asks for; the society checks it against the receiver's card
(`unknown_skill`, with the card's skills listed, when it is not there)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

TEXT_MODE = "text/plain"


def _as_list(value: Any) -> Any:
    """A model may write one string where a list is asked for; both mean the same."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    return value


def _slug(text: str, index: int) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug or f"skill-{index + 1}"


class AgentSkill(BaseModel):
    """One thing an agent does (A2A `AgentSkill`)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    examples: list[str] = Field(default_factory=list)
    input_modes: list[str] = Field(default_factory=list, alias="inputModes")
    output_modes: list[str] = Field(default_factory=list, alias="outputModes")

    _lists = field_validator("tags", "examples", "input_modes", "output_modes", mode="before")(
        _as_list
    )


class AgentCard(BaseModel):
    """A role's interface: seed 004's four fields and the A2A agent card's, kept in step."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    # seed 004, requirement 4.2
    services: list[str] = Field(description="services this role provides")
    input_format: str = Field(description="what a request to this role should contain")
    output_format: str = Field(description="what this role sends back")
    examples: list[str] = Field(default_factory=list, description="example requests")
    # A2A agent card
    name: str = ""
    description: str = ""
    skills: list[AgentSkill] = Field(default_factory=list)
    default_input_modes: list[str] = Field(
        default_factory=lambda: [TEXT_MODE], alias="defaultInputModes"
    )
    default_output_modes: list[str] = Field(
        default_factory=lambda: [TEXT_MODE], alias="defaultOutputModes"
    )

    _lists = field_validator(
        "services", "examples", "default_input_modes", "default_output_modes", mode="before"
    )(_as_list)

    @model_validator(mode="before")
    @classmethod
    def _both_shapes(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = {k: v for k, v in data.items() if v is not None}
        skills = data.get("skills")
        if isinstance(skills, list) and skills:
            data["skills"] = [
                {"id": _slug(s, i), "name": s} if isinstance(s, str) else s
                for i, s in enumerate(skills)
            ]
            named = [s.get("name") for s in data["skills"] if isinstance(s, dict)]
            data.setdefault("services", [n for n in named if n])
            data.setdefault(
                "examples",
                [
                    e
                    for s in data["skills"]
                    if isinstance(s, dict)
                    for e in _as_list(s.get("examples")) or []
                ],
            )
            modes_in = _as_list(data.get("default_input_modes", data.get("defaultInputModes")))
            modes_out = _as_list(data.get("default_output_modes", data.get("defaultOutputModes")))
            data.setdefault("input_format", "、".join(modes_in or [TEXT_MODE]))
            data.setdefault("output_format", "、".join(modes_out or [TEXT_MODE]))
        elif "services" in data:
            services = _as_list(data["services"]) or []
            examples = _as_list(data.get("examples")) or []
            data["skills"] = [
                {
                    "id": _slug(service, i),
                    "name": service,
                    "description": service,
                    "examples": examples if i == 0 else [],
                }
                for i, service in enumerate(services)
                if isinstance(service, str)
            ]
        if not data.get("description") and data.get("services"):
            data["description"] = "；".join(str(s) for s in _as_list(data["services"]))
        return data

    def skill(self, wanted: str) -> AgentSkill | None:
        """The skill with that id or name (case and spaces ignored)."""
        key = " ".join(wanted.split()).lower()
        for skill in self.skills:
            if key in (skill.id.lower(), " ".join(skill.name.split()).lower()):
                return skill
        return None

    def skill_list(self) -> str:
        return "; ".join(f"{s.id} ({s.name})" for s in self.skills) or "none"

    def as_text(self) -> str:
        lines = [f"服务：{'；'.join(self.services)}", f"输入格式：{self.input_format}"]
        lines.append(f"输出格式：{self.output_format}")
        if self.examples:
            lines.append(f"示例：{'；'.join(self.examples)}")
        skills = [
            f"{s.id}（{s.name}{'：' + s.description if s.description and s.description != s.name else ''}）"
            for s in self.skills
        ]
        if skills:
            lines.append(f"技能（skill）：{'；'.join(skills)}")
        return "\n".join(lines)


def unknown_skill(card: AgentCard | None, wanted: Any, receiver: str) -> str | None:
    """Why naming `wanted` as the skill asked of `receiver` is refused, or None when it fits
    (or names no skill, or the receiver has no card to check against)."""
    if card is None or not card.skills or wanted in (None, ""):
        return None
    if isinstance(wanted, str) and card.skill(wanted) is not None:
        return None
    return (
        f"{receiver}'s card has no skill {wanted!r}; its skills: {card.skill_list()}. "
        "Name one of them in `skill`, or leave `skill` out."
    )
