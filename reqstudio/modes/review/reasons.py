"""Why a reviewer's or an author's answer did not count, as a failure (code and values) the
reader's language says; the record and the JSON keep it in English: the call policy's last
fault, by name."""

from __future__ import annotations

from reqstudio.calls import IncompleteAnswerError
from reqstudio.errors import failure_of
from reqstudio.failures import Failure, FailureCode, Term, render
from reqstudio.structured import StructuredOutputError

# An answer that was not whole, every retry of the call's policy spent: which fault it kept hitting.
INCOMPLETE_REASONS = {
    "length": FailureCode.REVIEW_LENGTH,
    "content_filter": FailureCode.REVIEW_CONTENT_FILTER,
    "cut": FailureCode.REVIEW_CUT,
    "empty": FailureCode.REVIEW_EMPTY,
}


class ReviewRoundFailed(RuntimeError):
    """Neither the red team's nor the judge's answer could be read this round: nothing to
    decide on. Carries the round and the reviewers that failed; `message(language)` says it.
    `remedy`: what a resumed run needs changed to go otherwise (`reqstudio.errors.remedy_for`
    of the red team's failure)."""

    def __init__(self, round_number: int, reviewers: list[str], remedy: str = "retry"):
        super().__init__(round_number, reviewers, remedy)  # args that rebuild it (copies)
        self.round = round_number
        self.reviewers = reviewers
        self.remedy = remedy

    @property
    def failure(self) -> Failure:
        reviewers = [Term(f"review.{r}") for r in self.reviewers]
        return Failure(
            FailureCode.REVIEW_ROUND_UNREADABLE, {"round": self.round, "reviewers": reviewers}
        )

    def __str__(self) -> str:
        return self.message("en")

    def message(self, language: str) -> str:
        return render(self.failure, language)


def _incomplete(error: IncompleteAnswerError) -> Failure:
    code = INCOMPLETE_REASONS.get(error.reason)
    if code is None:
        return Failure(FailureCode.REVIEW_FINISH_REASON, {"reason": error.reason})
    return Failure(code)


def reason_failure(error: BaseException) -> Failure:
    """Why an answer did not count: our checks' and the structured call's own words (English
    in the record and the JSON, introduced in the reader's language), else the failure's."""
    if isinstance(error, StructuredOutputError):
        return Failure(
            FailureCode.REVIEW_UNREADABLE, {"attempts": error.attempts, "detail": str(error)}
        )
    if type(error) is ValueError:
        return Failure(FailureCode.REVIEW_UNUSABLE, {"detail": str(error)})
    if isinstance(error, IncompleteAnswerError):
        return _incomplete(error)
    return failure_of(error)


def reason_for(error: BaseException) -> str:
    """Why an answer did not count, in English, for the record and the JSON."""
    return render(reason_failure(error), "en")
