"""Team mode: a society of agents that delegate with task briefs, talk only to contacts they
know, and meet new ones through introductions (seed 004). No Chainlit imports here."""

from agents.team.cards import AgentCard, AgentSkill
from agents.team.events import RunFinished, TeamEvent
from agents.team.protocol import ROOT_ID, USER_ID, TaskBrief
from agents.team.runner import TeamConfig, TeamRun
from agents.team.society import AgentSociety, Outcome, SocietyLimits
from agents.team.store import EventStore

__all__ = [
    "ROOT_ID",
    "USER_ID",
    "AgentCard",
    "AgentSkill",
    "AgentSociety",
    "EventStore",
    "Outcome",
    "RunFinished",
    "SocietyLimits",
    "TaskBrief",
    "TeamConfig",
    "TeamEvent",
    "TeamRun",
]
