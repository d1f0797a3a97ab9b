"""The Agent_Society (seed 004): agents, roles, contact registries, task briefs, messages and
introductions, with every rule of the protocol.

Every operation an agent can ask for returns an `Outcome`; a refusal is an `Outcome` with an
error code (`unknown_contact`, `missing_brief_fields`, ...) that goes back to the agent as its
tool result. Nothing here raises at an agent. Events are recorded as they happen.
This module keeps the members (roles, agents, contact registries, limits); how they talk
(messages, introductions, inboxes) is in reqstudio/modes/team/messaging.py, `AgentSociety`'s base."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from reqstudio.modes.team.cards import unknown_skill
from reqstudio.modes.team.events import (
    AgentSpawned,
    AgentStats,
    ContactAdded,
    LimitReached,
    Refused,
    RoleCreated,
    TeamEvent,
)
from reqstudio.modes.team.integrity import LoopWatch, plain_name
from reqstudio.modes.team.members import Agent, Halt, Outcome, Role, SocietyLimits
from reqstudio.modes.team.messaging import Messaging
from reqstudio.modes.team.protocol import (
    BRIEF_REQUIRED,
    ROOT_ID,
    USER_ID,
    Collaborator,
    ContactEntry,
    InterfaceSpec,
    Message,
    TaskBrief,
    describe_validation,
    missing_brief_fields,
)

ROOT_ROLE = "根智能体 / root"
ROOT_DUTIES = "接收用户的任务，组建团队并分派工作，汇总结果后答复用户"


class AgentSociety(Messaging):
    def __init__(
        self,
        limits: SocietyLimits | None = None,
        on_event: Callable[[TeamEvent], None] | None = None,
        on_delivery: Callable[[Message], None] | None = None,
    ):
        self.limits = limits or SocietyLimits()
        self.roles: dict[str, Role] = {}
        self.agents: dict[str, Agent] = {}
        self.registries: dict[str, dict[str, ContactEntry]] = {}
        self.events: list[TeamEvent] = []
        self.messages: list[Message] = []
        self.answer: Message | None = None  # the last message root delivered to the user
        self.answers: list[Message] = []  # every one, in order
        self.halt: Halt | None = None
        self.limits_hit: list[str] = []
        self._listeners: list[Callable[[TeamEvent], None]] = [on_event] if on_event else []
        self._on_delivery = on_delivery
        self._started = time.monotonic()
        self._loops = LoopWatch()
        self._create_root()

    # --- events ----------------------------------------------------------------------

    def subscribe(self, listener: Callable[[TeamEvent], None]) -> None:
        self._listeners.append(listener)

    def emit(self, event: TeamEvent) -> TeamEvent:
        event.seq = len(self.events) + 1
        event.at = round(time.monotonic() - self._started, 4)
        self.events.append(event)
        for listener in self._listeners:
            listener(event)
        return event

    def refuse(self, agent_id: str, tool: str, code: str, message: str, **data: Any) -> Outcome:
        self.emit(Refused(agent_id=agent_id, tool=tool, code=code, message=message))
        return Outcome(False, code, message, data)

    # --- the two fixed endpoints (requirement 2.3, 2.4) --------------------------------

    def _create_root(self) -> None:
        role = Role(ROOT_ROLE, "", ROOT_DUTIES)
        self.agents[ROOT_ID] = Agent(ROOT_ID, role, parent=None, depth=0)
        self.agents[ROOT_ID].stats = AgentStats(agent_id=ROOT_ID, role_name=role.name)
        self.registries[ROOT_ID] = {}
        self.registries[USER_ID] = {}
        self.emit(AgentSpawned(parent=None, agent_id=ROOT_ID, role_name=role.name, depth=0))
        self._add_contact(ROOT_ID, USER_ID, "用户 / user", None, "society", "endpoint")
        self._add_contact(USER_ID, ROOT_ID, role.name, None, "society", "endpoint")

    def _add_contact(
        self,
        owner: str,
        agent_id: str,
        role_name: str,
        spec: InterfaceSpec | None,
        introduced_by: str,
        how: str,
        note: str = "",
    ) -> ContactEntry:
        entry = ContactEntry(
            agent_id=agent_id,
            role_name=role_name,
            interface_spec=spec,
            introduced_by=introduced_by,
            how=how,  # type: ignore[arg-type]
            note=note,
        )
        self.registries[owner][agent_id] = entry
        self.emit(ContactAdded(owner=owner, contact=entry.model_dump()))
        return entry

    def knows(self, owner: str, agent_id: str) -> bool:
        return agent_id in self.registries.get(owner, {})

    def contacts(self, owner: str) -> list[ContactEntry]:
        return list(self.registries.get(owner, {}).values())

    def role_name_of(self, agent_id: str) -> str:
        if agent_id == USER_ID:
            return "用户 / user"
        return self.agents[agent_id].role.name

    def _spec_of(self, agent_id: str) -> InterfaceSpec | None:
        agent = self.agents.get(agent_id)
        return agent.role.interface_spec if agent else None

    # --- roles (requirement 4.1) ---------------------------------------------------------

    def create_role(
        self,
        by: str,
        name: str,
        role_prompt: str,
        *,
        duties: str | None = None,
        interface_spec: dict[str, Any] | InterfaceSpec | None = None,
    ) -> Outcome:
        name = (name or "").strip()
        if not name or not (role_prompt or "").strip() or not plain_name(name):
            why = "a role needs a name (one line, no 【】) and a role_prompt"
            return self.refuse(by, "create_role", "invalid_role", why)
        spec: InterfaceSpec | None = None
        if interface_spec is not None:
            try:
                spec = InterfaceSpec.model_validate(interface_spec)
            except ValidationError as exc:
                return self.refuse(
                    by,
                    "create_role",
                    "invalid_interface_spec",
                    describe_validation("interface_spec", exc),
                )
        if name in self.roles:
            return self.refuse(
                by, "create_role", "role_exists", f"a role named '{name}' exists already; spawn it"
            )
        first_line = role_prompt.strip().splitlines()[0]
        role = Role(name, role_prompt.strip(), (duties or first_line)[:200], spec, created_by=by)
        self.roles[name] = role
        self.emit(
            RoleCreated(
                by=by,
                role_name=name,
                duties=role.duties,
                interface_spec=spec.model_dump() if spec else None,
            )
        )
        return Outcome(True, "role_created", f"role '{name}' created; spawn agents with it")

    # --- spawning (requirements 1, 2.2, 2.5, 2.8, 7) -------------------------------------

    def spawn_agent(
        self,
        parent: str,
        role: str,
        brief: dict[str, Any] | TaskBrief | None,
        *,
        role_prompt: str | None = None,
        interface_spec: dict[str, Any] | None = None,
    ) -> Outcome:
        tool = "spawn_agent"
        raw = brief.model_dump() if isinstance(brief, BaseModel) else brief
        missing = missing_brief_fields(raw)
        if missing:
            return self.refuse(
                parent,
                tool,
                "missing_brief_fields",
                "no agent was created: the Task Brief is missing required field(s): "
                + ", ".join(missing)
                + f". Required: {', '.join(BRIEF_REQUIRED)}; optional: collaborators, references, priority.",
                missing=missing,
            )
        try:
            task_brief = TaskBrief.model_validate(raw)
        except ValidationError as exc:
            return self.refuse(parent, tool, "invalid_brief", describe_validation("brief", exc))
        if role not in self.roles:
            if not role_prompt:
                known = ", ".join(self.roles) or "none yet"
                return self.refuse(
                    parent,
                    tool,
                    "unknown_role",
                    f"no role named '{role}' (roles: {known}); call create_role first or pass role_prompt",
                )
            created = self.create_role(parent, role, role_prompt, interface_spec=interface_spec)
            if not created.ok:
                return created
        parent_agent = self.agents[parent]
        if len(self.agents) >= self.limits.max_agents:
            self._limit("agents", f"{self.limits.max_agents} agents")
            return self.refuse(
                parent,
                tool,
                "agent_limit",
                f"no agent was created: the society has its maximum of {self.limits.max_agents} agents; "
                "give the work to an agent you know with a task_assignment",
            )
        if parent_agent.depth + 1 > self.limits.max_depth:
            self._limit("depth", f"depth {self.limits.max_depth}")
            return self.refuse(
                parent,
                tool,
                "depth_limit",
                f"no agent was created: spawning deeper than {self.limits.max_depth} levels is not allowed; "
                "do the work yourself or ask your contacts",
            )
        strangers = self._refuse_unknown_collaborators(parent, tool, task_brief)
        if strangers is not None:
            return strangers
        misfit = unknown_skill(self.roles[role].interface_spec, task_brief.skill, f"role {role}")
        if misfit:
            return self.refuse(parent, tool, "unknown_skill", f"no agent was created: {misfit}")

        full = self._no_room(parent, tool)  # the brief is a delivered message too
        if full is not None:
            return full
        child_id = self._new_agent_id()
        the_role = self.roles[role]
        child = Agent(child_id, the_role, parent, parent_agent.depth + 1, brief=task_brief)
        child.stats = AgentStats(agent_id=child_id, role_name=the_role.name)
        self.agents[child_id] = child
        self.registries[child_id] = {}
        parent_agent.children += 1
        self.emit(
            AgentSpawned(
                parent=parent,
                agent_id=child_id,
                role_name=the_role.name,
                depth=child.depth,
                brief=task_brief.model_dump(exclude_none=True),
            )
        )
        self._add_contact(
            child_id, parent, self.role_name_of(parent), self._spec_of(parent), "society", "creator"
        )
        self._add_contact(
            parent, child_id, the_role.name, the_role.interface_spec, "society", "child"
        )
        self._add_collaborators(parent, child_id, task_brief.collaborators)
        # The brief also arrives as the child's first message, so its first turn starts on it.
        self._deliver(
            Message(
                id=len(self.messages) + 1,
                sender=parent,
                sender_role=self.role_name_of(parent),
                to=child_id,
                message_type="task_assignment",
                content="",
                payload=task_brief.model_dump(exclude_none=True),
            ),
            first_contact=False,
        )
        return Outcome(
            True,
            "agent_spawned",
            f"agent {child_id} ({the_role.name}) created with your brief; it will report to you",
            {"agent_id": child_id},
        )

    def _new_agent_id(self) -> str:
        number = len(self.agents)
        while f"agent-{number}" in self.agents:
            number += 1
        return f"agent-{number}"

    def _can_share(self, owner: str, agent_id: str) -> bool:
        return agent_id in self.agents and self.knows(owner, agent_id)

    def _refuse_unknown_collaborators(
        self, owner: str, tool: str, brief: TaskBrief
    ) -> Outcome | None:
        """The refusal of a brief (to a new agent or in a task assignment) naming collaborators
        its writer does not know: one can only pass on contacts one has."""
        unknown = [
            c.agent_id for c in brief.collaborators if not self._can_share(owner, c.agent_id)
        ]
        if not unknown:
            return None
        return self.refuse(
            owner,
            tool,
            "unknown_contact",
            "collaborators must be agents you know: " + ", ".join(unknown),
            unknown=unknown,
        )

    def _add_collaborators(self, giver: str, owner: str, collaborators: list[Collaborator]) -> None:
        for person in collaborators:
            if person.agent_id == owner or self.knows(owner, person.agent_id):
                continue
            spec = person.interface_spec or self._spec_of(person.agent_id)
            note = "；".join(p for p in (person.role_description, person.collaboration_note) if p)
            self._add_contact(
                owner,
                person.agent_id,
                self.role_name_of(person.agent_id),
                spec,
                giver,
                "collaborator",
                note,
            )

    def _no_room(self, agent_id: str, tool: str) -> Outcome | None:
        """The refusal when the run has delivered its maximum of messages; every delivery
        counts (the user's task, briefs, reports the society sends, forwarded words)."""
        if len(self.messages) < self.limits.max_messages:
            return None
        detail = f"{self.limits.max_messages} messages"
        self._limit("messages", detail)
        if self.halt is None:
            self.halt = Halt("messages", detail)
        return self.refuse(agent_id, tool, "message_limit", f"not sent: the run reached {detail}")

    def _limit(self, limit: str, detail: str) -> None:
        if limit not in self.limits_hit:
            self.limits_hit.append(limit)
        self.emit(LimitReached(limit=limit, detail=detail))  # type: ignore[arg-type]

    def stats(self) -> list[AgentStats]:
        return [a.stats for a in self.agents.values() if a.stats is not None]
