"""Team mode: a society of agents that delegate with task briefs, talk only to contacts they
know, and meet new ones through introductions (seed 004). No Chainlit imports here.
Names are imported on first use (`reqstudio.lazy`)."""

from reqstudio.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "agents.team.cards": ("AgentCard", "AgentSkill"),
        "agents.team.events": ("RunFinished", "TeamEvent"),
        "agents.team.protocol": ("ROOT_ID", "USER_ID", "TaskBrief"),
        "agents.team.runner": ("TeamConfig", "TeamRun"),
        "agents.team.society": ("AgentSociety", "Outcome", "SocietyLimits"),
        "agents.team.store": ("EventStore",),
    },
)
