"""What a team run reports, as typed events: the UI, the CLI, the record and the tests read
the same stream. Every event but the streamed answer tokens is recorded.

Each is a member of the one event union (`reqstudio.events`): an agent's turn is a step, root's
answer to the user a token, the run's end `finished` (its `reason` says why it ended, "failed"
included); everything the society does in between is a notice. The record keeps each event's
Team name under `type`, as it always has (`record_of`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from reqstudio import events as core
from reqstudio.failures import said_or

StopReason = Literal["answered", "idle", "messages", "time", "tokens", "loop", "stopped", "failed"]
LimitName = Literal["agents", "depth", "messages", "time", "tokens", "loop"]


class TeamEvent(BaseModel):
    """What every Team event adds to its core type."""

    seq: int = 0  # order in the run, filled by the society
    at: float = 0.0  # seconds since the run started


def record_of(event: TeamEvent) -> dict[str, Any]:
    """The event as the run's record stores it: its Team name as `type`, then its fields."""
    assert isinstance(event, core.BaseEvent)
    return {"type": event.name, **core.payload(event)}


class RoleCreated(core.Notice, TeamEvent):
    name: Literal["role_created"] = "role_created"
    by: str
    role_name: str
    duties: str = ""
    interface_spec: dict[str, Any] | None = None


class AgentSpawned(core.Notice, TeamEvent):
    name: Literal["agent_spawned"] = "agent_spawned"
    parent: str | None
    agent_id: str
    role_name: str
    depth: int
    brief: dict[str, Any] | None = None


class MessageDelivered(core.Notice, TeamEvent):
    name: Literal["message_delivered"] = "message_delivered"
    message: dict[str, Any]  # Message.as_dict(): from, to, message_type, content, payload, ...
    text: str  # exactly what the receiving agent sees
    first_contact: bool = False


class ContactAdded(core.Notice, TeamEvent):
    name: Literal["contact_added"] = "contact_added"
    owner: str
    contact: dict[str, Any]  # ContactEntry


class Introduced(core.Notice, TeamEvent):
    """`introducer` gave `requester` the contact of `target`; `forwarded_from` is who had
    given it to the introducer, when the introducer had to ask around first."""

    name: Literal["introduced"] = "introduced"
    requester: str
    target: str
    introducer: str
    forwarded_from: str | None = None


class Refused(core.Notice, TeamEvent):
    """A tool call the society refused; the agent got `message` back as the tool result."""

    name: Literal["refused"] = "refused"
    agent_id: str
    tool: str
    code: str
    message: str


class LimitReached(core.Notice, TeamEvent):
    name: Literal["limit_reached"] = "limit_reached"
    limit: LimitName
    detail: str


class _AgentStep(BaseModel):
    """A step named after the agent whose turn it is."""

    def model_post_init(self, context: Any) -> None:
        self.step = self.step or self.agent_id  # type: ignore[attr-defined]
        if self.name == "agent_failed":  # type: ignore[attr-defined]
            self.outcome = "failed"  # type: ignore[attr-defined]


class TurnStarted(core.StepStarted, _AgentStep, TeamEvent):
    name: Literal["turn_started"] = "turn_started"
    agent_id: str
    inbox: int


class TurnFinished(core.StepFinished, _AgentStep, TeamEvent):
    name: Literal["turn_finished"] = "turn_finished"
    agent_id: str
    model_calls: int
    tool_calls: int
    note: str = ""  # the agent's own words when it ended its turn without a tool call


class AgentFailed(core.StepFinished, _AgentStep, TeamEvent):
    name: Literal["agent_failed"] = "agent_failed"
    agent_id: str
    error: str  # in English, as the record keeps it
    failure: dict[str, Any] = Field(default_factory=dict)  # the same as a code and values

    def text(self, language: str) -> str:
        """The error in `language`, from the catalogue."""
        return said_or(self.failure, self.error, language)


class AnswerToken(core.Token, TeamEvent):
    """Root's answer to the user, sent when the society delivered it (not recorded; the
    `message_delivered` event is): the user sees delivered messages only, each once.
    `message_id` tells one answer from the next when root sends the user more than one."""

    name: Literal["answer_token"] = "answer_token"
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


class RunFinished(core.Finished, TeamEvent):
    name: Literal["run_finished"] = "run_finished"
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
