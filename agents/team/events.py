"""What a team run reports, as typed events: the UI, the CLI, the record and the tests read
the same stream. Every event but the streamed answer tokens is recorded."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

StopReason = Literal["answered", "idle", "messages", "time", "tokens", "loop", "stopped", "failed"]
LimitName = Literal["agents", "depth", "messages", "time", "tokens", "loop"]


class TeamEvent(BaseModel):
    type: str
    seq: int = 0  # order in the run, filled by the society
    at: float = 0.0  # seconds since the run started


class RoleCreated(TeamEvent):
    type: Literal["role_created"] = "role_created"
    by: str
    role_name: str
    duties: str = ""
    interface_spec: dict[str, Any] | None = None


class AgentSpawned(TeamEvent):
    type: Literal["agent_spawned"] = "agent_spawned"
    parent: str | None
    agent_id: str
    role_name: str
    depth: int
    brief: dict[str, Any] | None = None


class MessageDelivered(TeamEvent):
    type: Literal["message_delivered"] = "message_delivered"
    message: dict[str, Any]  # Message.as_dict(): from, to, message_type, content, payload, ...
    text: str  # exactly what the receiving agent sees
    first_contact: bool = False


class ContactAdded(TeamEvent):
    type: Literal["contact_added"] = "contact_added"
    owner: str
    contact: dict[str, Any]  # ContactEntry


class Introduced(TeamEvent):
    """`introducer` gave `requester` the contact of `target`; `forwarded_from` is who had
    given it to the introducer, when the introducer had to ask around first."""

    type: Literal["introduced"] = "introduced"
    requester: str
    target: str
    introducer: str
    forwarded_from: str | None = None


class Refused(TeamEvent):
    """A tool call the society refused; the agent got `message` back as the tool result."""

    type: Literal["refused"] = "refused"
    agent_id: str
    tool: str
    code: str
    message: str


class LimitReached(TeamEvent):
    type: Literal["limit_reached"] = "limit_reached"
    limit: LimitName
    detail: str


class TurnStarted(TeamEvent):
    type: Literal["turn_started"] = "turn_started"
    agent_id: str
    inbox: int


class TurnFinished(TeamEvent):
    type: Literal["turn_finished"] = "turn_finished"
    agent_id: str
    model_calls: int
    tool_calls: int
    note: str = ""  # the agent's own words when it ended its turn without a tool call


class AgentFailed(TeamEvent):
    type: Literal["agent_failed"] = "agent_failed"
    agent_id: str
    error: str


class AnswerToken(TeamEvent):
    """Root's answer to the user, sent when the society delivered it (not recorded; the
    `message_delivered` event is): the user sees delivered messages only, each once.
    `message_id` tells one answer from the next when root sends the user more than one."""

    type: Literal["answer_token"] = "answer_token"
    text: str
    message_id: int | None = None


class AgentStats(BaseModel):
    agent_id: str
    role_name: str
    messages_sent: int = 0
    messages_received: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0


class RunFinished(TeamEvent):
    type: Literal["run_finished"] = "run_finished"
    reason: StopReason
    detail: str = ""
    answer: str = ""  # the last message root delivered to the user
    answers: list[str] = Field(default_factory=list)  # every one, in order
    root_note: str = ""  # idle runs: root's last words, said without a tool call
    agents: list[AgentStats] = Field(default_factory=list)
    limits_hit: list[str] = Field(default_factory=list)
    seconds: float = 0.0


STOP_NOTICES: dict[str, str] = {
    "answered": "root answered the user",
    "idle": "no agent had anything left to do, and root did not answer the user",
    "messages": "the message limit was reached",
    "time": "the time limit was reached",
    "tokens": "the token limit was reached",
    "loop": "two agents repeated the same exchange (a loop)",
    "stopped": "stopped by the user",
    "failed": "root failed",
}
