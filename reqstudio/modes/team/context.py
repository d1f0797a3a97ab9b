"""What an agent sees: its system prompt (reqstudio/prompts/team/*.txt with its role, brief and current
contacts) and each delivered message in the seed's presentation format."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from reqstudio.modes.team.protocol import ROOT_ID, Message, format_delivery
from reqstudio.modes.team.society import AgentSociety
from reqstudio.prompts import render_prompt


def system_prompt(society: AgentSociety, agent_id: str) -> str:
    agent = society.agents[agent_id]
    contacts = [
        {
            "agent_id": c.agent_id,
            "role_name": c.role_name,
            "how": c.how,
            "introduced_by": c.introduced_by,
            "note": c.note,
            "spec": c.interface_spec.as_text().replace("\n", "；") if c.interface_spec else "",
        }
        for c in society.contacts(agent_id)
    ]
    base = render_prompt(
        "team/base.txt",
        agent_id=agent_id,
        role_name=agent.role.name,
        role_prompt=agent.role.role_prompt,
        brief=agent.brief.as_text() if agent.brief else "",
        parent=agent.parent or "",
        contacts=contacts,
    )
    if agent_id == ROOT_ID:
        return render_prompt("team/root.txt") + base
    return base


def delivered(messages: list[Message]) -> list[HumanMessage]:
    """Delivered messages as the agent reads them (requirement 10.6)."""
    return [HumanMessage(format_delivery(m), name=_safe_name(m.sender)) for m in messages]


def initial_context(society: AgentSociety, agent_id: str) -> list[BaseMessage]:
    """The context of an agent's first turn: its system prompt and its waiting messages (not
    taken from the inbox)."""
    inbox = society.agents[agent_id].inbox
    return [SystemMessage(system_prompt(society, agent_id)), *delivered(inbox)]


def _safe_name(agent_id: str) -> str:
    # OpenAI accepts names matching ^[a-zA-Z0-9_-]+$
    return "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in agent_id)[:64]
