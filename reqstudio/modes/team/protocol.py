"""The society's protocol as data (seed 004): task briefs, interface specs, contacts, message
types and their payloads, and how a message is presented to the agent that receives it."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from reqstudio.modes.team.cards import AgentCard

USER_ID = "user"
ROOT_ID = "root"

MessageType = Literal[
    "task_assignment",
    "status_report",
    "introduction_request",
    "introduction_response",
    "collaboration_request",
    "collaboration_response",
]
MESSAGE_TYPES: tuple[str, ...] = MessageType.__args__  # type: ignore[attr-defined]

BRIEF_REQUIRED = ("objective", "constraints", "inputs", "outputs", "completion_criteria")
BRIEF_OPTIONAL = ("collaborators", "references", "priority", "skill")


def _as_list(value: Any) -> Any:
    """A model may write one string where a list is asked for; both mean the same."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    return value


# A role's Interface_Spec is also an A2A agent card (reqstudio/modes/team/cards.py); either shape is
# accepted.
InterfaceSpec = AgentCard


class Collaborator(BaseModel):
    """A contact a parent gives a child in advance (requirement 7.3)."""

    model_config = ConfigDict(extra="ignore")

    agent_id: str
    role_description: str = ""
    collaboration_note: str = ""
    interface_spec: InterfaceSpec | None = None


class TaskBrief(BaseModel):
    """The task brief a parent must give when it spawns a child (requirement 1)."""

    model_config = ConfigDict(extra="ignore")

    objective: str = Field(description="what the child must achieve")
    constraints: list[str] = Field(
        description="technical and business constraints, stated explicitly (e.g. 'Python')"
    )
    inputs: list[str] = Field(description="what the child is given to work from")
    outputs: list[str] = Field(description="what the child must deliver, in what form")
    completion_criteria: list[str] = Field(description="how to tell the task is done")
    collaborators: list[Collaborator] = Field(default_factory=list)
    references: list[str] = Field(default_factory=list)
    priority: Literal["low", "normal", "high", "urgent"] | None = None
    # optional: the skill of the receiver's card the task asks for (checked against it)
    skill: str | None = None

    _lists = field_validator(
        "constraints", "inputs", "outputs", "completion_criteria", "references", mode="before"
    )(_as_list)

    def as_text(self) -> str:
        def items(values: list[str]) -> str:
            return "\n".join(f"  - {v}" for v in values)

        lines = [
            f"目标（objective）：{self.objective}",
            f"技术约束（constraints）：\n{items(self.constraints)}",
            f"输入（inputs）：\n{items(self.inputs)}",
            f"输出要求（outputs）：\n{items(self.outputs)}",
            f"完成标准（completion_criteria）：\n{items(self.completion_criteria)}",
        ]
        if self.collaborators:
            people = [
                f"  - {c.agent_id}：{c.role_description}；{c.collaboration_note}".rstrip("；")
                for c in self.collaborators
            ]
            lines.append("协作联系人（collaborators）：\n" + "\n".join(people))
        if self.references:
            lines.append(f"参考资料（references）：\n{items(self.references)}")
        if self.priority:
            lines.append(f"优先级（priority）：{self.priority}")
        if self.skill:
            lines.append(f"所需技能（skill）：{self.skill}")
        return "\n".join(lines)


def missing_brief_fields(raw: Any) -> list[str]:
    """The required brief fields that are absent or empty in `raw` (requirement 1.4)."""
    if not isinstance(raw, dict):
        return list(BRIEF_REQUIRED)
    missing = []
    for name in BRIEF_REQUIRED:
        value = raw.get(name) if name == "objective" else _as_list(raw.get(name))
        if isinstance(value, list):
            value = "".join(str(v).strip() for v in value)
        if not isinstance(value, str) or not value.strip():
            missing.append(name)
    return missing


# --- payloads per message type (requirement 8) -------------------------------------------


class StatusReport(BaseModel):
    model_config = ConfigDict(extra="allow")

    status: Literal["in_progress", "done", "blocked"] = "in_progress"


class IntroductionRequest(BaseModel):
    """Asking a known agent for a contact (requirement 3.2)."""

    model_config = ConfigDict(extra="allow")

    reason: str = Field(min_length=1)
    required_capability: str = Field(min_length=1)


class IntroductionResponse(BaseModel):
    """An introducer's answer (requirement 3.8): who, what they do, and how to use them."""

    model_config = ConfigDict(extra="allow")

    target_id: str = Field(min_length=1)
    role_name: str = ""
    interface_spec: InterfaceSpec | None = None
    usage_advice: str = ""


class CollaborationRequest(BaseModel):
    model_config = ConfigDict(extra="allow")


class CollaborationResponse(BaseModel):
    model_config = ConfigDict(extra="allow")


PAYLOAD_MODELS: dict[str, type[BaseModel]] = {
    "task_assignment": TaskBrief,
    "status_report": StatusReport,
    "introduction_request": IntroductionRequest,
    "introduction_response": IntroductionResponse,
    "collaboration_request": CollaborationRequest,
    "collaboration_response": CollaborationResponse,
}


def validate_payload(message_type: str, payload: dict[str, Any] | None) -> BaseModel:
    """The payload checked against its message type (requirement 8.5); raises PayloadError."""
    model = PAYLOAD_MODELS.get(message_type)
    if model is None:
        raise PayloadError(
            f"message_type '{message_type}' is not one of: {', '.join(MESSAGE_TYPES)}"
        )
    if model is TaskBrief:
        missing = missing_brief_fields(payload or {})
        if missing:
            raise PayloadError(
                "a task_assignment payload must be a Task Brief; missing required field(s): "
                + ", ".join(missing)
            )
    try:
        return model.model_validate(payload or {})
    except ValidationError as exc:
        raise PayloadError(describe_validation(message_type, exc)) from None


def describe_validation(what: str, error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(p) for p in item.get("loc", ())) or "payload"
        problems.append(f"{where}: {item.get('msg', 'invalid')}")
    return f"{what} payload is not valid: " + "; ".join(problems)


class PayloadError(ValueError):
    """A payload does not match its message type."""


# --- contacts ------------------------------------------------------------------------------


class ContactEntry(BaseModel):
    """One known contact (requirement 2.7)."""

    agent_id: str
    role_name: str
    interface_spec: InterfaceSpec | None = None
    introduced_by: str  # "society" (created with), "creator", "spawned", an agent id, ...
    how: Literal["creator", "child", "endpoint", "collaborator", "introduction", "first_message"]
    note: str = ""


# --- delivery (requirements 9 and 10) ------------------------------------------------------


class Message(BaseModel):
    """One message as the society delivers it; `sender` is the society's `from` field."""

    model_config = ConfigDict(populate_by_name=True)

    id: int
    sender: str = Field(alias="from")
    sender_role: str | None = None
    to: str
    message_type: MessageType
    content: str = ""
    payload: dict[str, Any] = Field(default_factory=dict)
    self_introduction: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)


def source_line(sender: str, sender_role: str | None) -> str:
    if sender == USER_ID:
        return "【来自用户的消息】"
    return f"【来自 {sender_role or sender}（{sender}）的消息】"


def reply_hint(sender: str) -> str:
    return f"如需回复，请使用 send_message(to='{sender}', ...)"


def unforgeable(text: str) -> str:
    """Text an agent wrote, with nothing in it able to pass for the society's source line."""
    return text.replace("【来自", "[来自")


def format_delivery(message: Message) -> str:
    """The text an agent sees for a delivered message (requirement 10)."""
    parts = [source_line(message.sender, message.sender_role)]
    if message.self_introduction:
        parts.append(unforgeable(f"自我介绍：{message.self_introduction}"))
    parts.append(f"消息类型：{message.message_type}")
    if message.content.strip():
        parts.append(unforgeable(message.content.strip()))
    if message.message_type == "task_assignment" and message.payload:
        brief = TaskBrief.model_validate(message.payload)
        parts.append(unforgeable("任务委托书（Task Brief）：\n" + brief.as_text()))
    elif message.payload:
        details = "\n".join(f"{k}: {_payload_value(v)}" for k, v in message.payload.items())
        parts.append(unforgeable(details))
    parts.append(reply_hint(message.sender))
    return "\n".join(parts)


def _payload_value(value: Any) -> str:
    if isinstance(value, dict):
        try:
            return InterfaceSpec.model_validate(value).as_text().replace("\n", "；")
        except ValidationError:
            pass
    if isinstance(value, list):
        return "；".join(str(v) for v in value)
    return str(value)


def first_sentence(text: str, limit: int = 80) -> str:
    sentence = re.split(r"(?<=[。！？.!?])\s*|\n", (text or "").strip(), maxsplit=1)[0]
    return sentence[:limit] or "协作"
