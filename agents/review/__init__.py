"""Review mode (seed 001): a red team, blue team, client and judge review a document round after
round; the authors of the sections in focus fix exactly what was found, until the issues
converge. No Chainlit imports here."""

from agents.review.convergence import determine_next_action, generate_review_feedback
from agents.review.engine import (
    ReviewRequest,
    ReviewResult,
    pending_review,
    review_document,
    run_review,
    saved_review,
)

__all__ = [
    "ReviewRequest",
    "ReviewResult",
    "determine_next_action",
    "generate_review_feedback",
    "pending_review",
    "review_document",
    "run_review",
    "saved_review",
]
