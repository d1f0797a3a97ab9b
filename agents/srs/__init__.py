"""SRS mode: seed 000's multi-agent pipeline (ReqParse, ReqExplore, ReqClarify, DocGenerate).
Names are imported on first use (`reqstudio.lazy`)."""

from reqstudio.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "agents.srs.engine": ("SrsRequest", "pending_resume", "run_srs"),
        "agents.srs.events": (
            "DocumentContinued",
            "DocumentReset",
            "DocumentToken",
            "NodeFinished",
            "NodeStarted",
            "Notice",
            "RunFailed",
            "RunFinished",
            "SrsEvent",
            "SrsResult",
            "Trail",
        ),
    },
)
