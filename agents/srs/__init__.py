"""SRS mode: seed 000's multi-agent pipeline (ReqParse, ReqExplore, ReqClarify, DocGenerate)."""

from agents.srs.engine import SrsRequest, pending_resume, run_srs
from agents.srs.events import (
    DocumentContinued,
    DocumentReset,
    DocumentToken,
    NodeFinished,
    NodeStarted,
    Notice,
    RunFailed,
    RunFinished,
    SrsEvent,
    SrsResult,
    Trail,
)

__all__ = [
    "DocumentContinued",
    "DocumentReset",
    "DocumentToken",
    "NodeFinished",
    "NodeStarted",
    "Notice",
    "RunFailed",
    "RunFinished",
    "SrsEvent",
    "SrsRequest",
    "SrsResult",
    "Trail",
    "pending_resume",
    "run_srs",
]
