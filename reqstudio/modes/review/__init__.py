"""Review mode (seed 001): a red team, blue team, client and judge review a document round after
round; the authors of the sections in focus fix exactly what was found, until the issues
converge. No Chainlit imports here. Names are imported on first use (`reqstudio.lazy`)."""

from reqstudio.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "reqstudio.modes.review.convergence": ("determine_next_action", "generate_review_feedback"),
        "reqstudio.modes.review.engine": (
            "ReviewRequest",
            "ReviewResult",
            "pending_review",
            "review_document",
            "run_review",
            "saved_review",
        ),
        "reqstudio.modes.review.user_decision": (
            "AddedFinding",
            "ReviewDecision",
            "ReviewDecisionError",
            "parse_review_commands",
        ),
    },
)
