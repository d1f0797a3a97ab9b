"""SRS mode: seed 000's multi-agent pipeline (ReqParse, ReqExplore, ReqClarify, DocGenerate).
Names are imported on first use (`reqstudio.lazy`)."""

from reqstudio.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "reqstudio.modes.srs.engine": ("SrsRequest", "paused_run", "pending_resume", "run_srs"),
        "reqstudio.modes.srs.decisions": ("DecisionError", "HumanDecision", "parse_commands"),
        "reqstudio.modes.srs.events": (
            "DecisionApplied",
            "DocumentContinued",
            "DocumentReset",
            "DocumentToken",
            "NodeFinished",
            "NodeStarted",
            "Notice",
            "Paused",
            "RunFailed",
            "RunFinished",
            "SrsEvent",
            "SrsResult",
            "Trail",
        ),
    },
)
