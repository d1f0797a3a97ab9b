"""How a rewrite ended, as every mode says it (`reqstudio.outcomes`): the browser's closing mark
and `reqstudio rewrite`'s exit code are both read from `rewrite_outcome`.

A rewrite is complete when every patch was applied and every review round had its verdict from
every reviewer; the round limit (the last issues patched, not reviewed again) is complete too,
as seed 003 has it. A reviewer that could not review, or issues of the last review that name no
section (kept and shown, never patched), finish the run without a pass; a failed patch leaves
an incomplete result."""

from __future__ import annotations

from reqstudio.modes.rewrite.models import RewriteResult, RewriteStopReason
from reqstudio.outcomes import Outcome

# Every stop reason is named here: `rewrite_outcome` refuses one that is not.
STOP_OUTCOMES: dict[RewriteStopReason, Outcome] = {
    "no_issues": Outcome.PASSED,
    "max_rounds": Outcome.PASSED,
    "review_off": Outcome.PASSED,
    "reviewer_failed": Outcome.WITHOUT_PASS,
    "unplaced_issues": Outcome.WITHOUT_PASS,
    "patch_failed": Outcome.INCOMPLETE,
}


def rewrite_outcome(result: RewriteResult) -> Outcome:
    return STOP_OUTCOMES[result.stop_reason]
