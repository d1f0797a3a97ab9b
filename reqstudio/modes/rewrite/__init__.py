"""Rewrite mode (seed 003, DocuForge): an original document plus clarifications becomes a new
one, outline first, section by section, then reviewed and patched. No Chainlit imports here.
Names are imported on first use (`reqstudio.lazy`)."""

from reqstudio.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "reqstudio.modes.rewrite.callbacks": ("CLICallbackHandler", "ProgressCallbackHandler"),
        "reqstudio.modes.rewrite.chain": ("RewriteChain", "RewriteResumeError"),
        "reqstudio.modes.rewrite.errors": ("RewriteStageError", "RewriteTooLarge"),
        "reqstudio.modes.rewrite.models": (
            "ClarificationItem",
            "DocumentSection",
            "DocumentStructure",
            "PatchFailure",
            "RewriteRequest",
            "RewriteResult",
        ),
        "reqstudio.modes.rewrite.reviewers": ("ExpertReviewer", "ReviewInput", "SectionReviewer"),
        "reqstudio.modes.rewrite.state": ("RewriteOptions",),
    },
)
