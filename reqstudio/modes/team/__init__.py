"""Team mode: a society of agents that delegate with task briefs, talk only to contacts they
know, and meet new ones through introductions (seed 004). No Chainlit imports here.
Names are imported on first use (`reqstudio.lazy`)."""

from reqstudio.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "reqstudio.modes.team.cards": ("AgentCard", "AgentSkill"),
        "reqstudio.modes.team.events": ("RunFinished", "TeamEvent"),
        "reqstudio.modes.team.protocol": ("ROOT_ID", "USER_ID", "TaskBrief"),
        "reqstudio.modes.team.runner": ("TeamConfig", "TeamRun"),
        "reqstudio.modes.team.society": ("AgentSociety", "Outcome", "SocietyLimits"),
        "reqstudio.modes.team.store": ("EventStore",),
    },
)
