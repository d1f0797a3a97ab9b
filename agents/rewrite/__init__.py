"""Rewrite mode (seed 003, DocuForge): an original document plus clarifications becomes a new
one, outline first, section by section, then reviewed and patched. No Chainlit imports here.
Names are imported on first use (`reqstudio.lazy`)."""

from reqstudio.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "agents.rewrite.callbacks": ("CLICallbackHandler", "ProgressCallbackHandler"),
        "agents.rewrite.chain": ("RewriteChain", "RewriteResumeError"),
        "agents.rewrite.errors": ("RewriteStageError", "RewriteTooLarge"),
        "agents.rewrite.models": (
            "ClarificationItem",
            "DocumentSection",
            "DocumentStructure",
            "PatchFailure",
            "RewriteRequest",
            "RewriteResult",
        ),
        "agents.rewrite.reviewers": ("ExpertReviewer", "ReviewInput", "SectionReviewer"),
        "agents.rewrite.state": ("RewriteOptions",),
    },
)
