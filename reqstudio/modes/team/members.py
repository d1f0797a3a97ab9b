"""The society's plain records: roles, agents, limits, and what an operation answers."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from reqstudio.modes.team.events import AgentStats
from reqstudio.modes.team.protocol import InterfaceSpec, Message, TaskBrief


@dataclass
class Role:
    name: str
    role_prompt: str
    duties: str
    interface_spec: InterfaceSpec | None = None
    created_by: str = "society"


@dataclass
class SocietyLimits:
    max_agents: int = 8  # root included
    max_depth: int = 3  # root is depth 0
    max_messages: int = 100


@dataclass
class Agent:
    id: str
    role: Role
    parent: str | None
    depth: int
    brief: TaskBrief | None = None
    inbox: list[Message] = field(default_factory=list)
    stats: AgentStats | None = None
    children: int = 0


@dataclass
class Outcome:
    """What a society operation answers; `text()` is what the calling agent reads."""

    ok: bool
    code: str
    message: str
    data: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        body: dict[str, Any] = {"ok": self.ok}
        body["result" if self.ok else "error"] = self.code
        body["message"] = self.message
        body.update(self.data)
        return json.dumps(body, ensure_ascii=False)


@dataclass
class Halt:
    """The society asks the scheduler to end the run."""

    reason: str  # "messages" | "loop"
    detail: str
