"""Rewrite mode (seed 003, DocuForge): an original document plus clarifications becomes a new
one, outline first, section by section, then reviewed and patched. No Chainlit imports here."""

from agents.rewrite.callbacks import CLICallbackHandler, ProgressCallbackHandler
from agents.rewrite.chain import RewriteChain, RewriteResumeError
from agents.rewrite.errors import RewriteStageError, RewriteTooLarge
from agents.rewrite.models import (
    ClarificationItem,
    DocumentSection,
    DocumentStructure,
    PatchFailure,
    RewriteRequest,
    RewriteResult,
)
from agents.rewrite.reviewers import ExpertReviewer, ReviewInput, SectionReviewer
from agents.rewrite.state import RewriteOptions

__all__ = [
    "CLICallbackHandler",
    "ClarificationItem",
    "DocumentSection",
    "DocumentStructure",
    "ExpertReviewer",
    "PatchFailure",
    "ProgressCallbackHandler",
    "ReviewInput",
    "RewriteChain",
    "RewriteOptions",
    "RewriteRequest",
    "RewriteResult",
    "RewriteResumeError",
    "RewriteStageError",
    "RewriteTooLarge",
    "SectionReviewer",
]
