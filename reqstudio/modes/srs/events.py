"""What an SRS run reports while it works: UI-agnostic events for the browser, the CLI and tests.

A run yields, in order: optional `Notice`s, then per node `NodeStarted` ... `NodeFinished`
(with the seed's console lines as `Trail`s, and for DocGenerate `DocumentToken`s,
`DocumentReset` if the stream broke and started again, `DocumentContinued` if the document hit
the length limit and was continued, in between), and finally exactly one `RunFinished`,
`RunFailed` or, with "pause after each round" on, `Paused` (resume the thread with the user's
decision; the resumed run starts with `DecisionApplied`).

Each is a member of the one event union (`reqstudio.events`): its `type` is the core type, its
`name` the SRS name below. The graph's nodes write these same objects to the stream.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from reqstudio import events as core
from reqstudio.failures import FAILURE_CODES, Failure, FailureCode, render, say
from reqstudio.modes.srs.state import Ablation, AgentName, Requirement, Score
from reqstudio.modes.srs.trace import TraceRow, matrix_csv, with_matrix


class SrsResult(BaseModel):
    """The outcome of a run (or, inside `RunFailed`, what it had produced so far)."""

    srs_markdown: str = ""
    requirements: list[Requirement] = Field(default_factory=list)  # without removed items
    frozen_ids: list[str] = Field(default_factory=list)
    removed_ids: list[str] = Field(default_factory=list)
    scores: dict[str, int] = Field(default_factory=dict)  # the latest ReqClarify round
    rounds: int = 0  # ReqExplore rounds run, as the steps number them (no-clarify: 1)
    iteration: int = 0  # the seed's `iteration` (ReqParse counts as 1)
    continuations: int = 0  # times DocGenerate hit the length limit and was continued
    logs: list[dict[str, Any]] = Field(default_factory=list)
    usage: dict[str, Any] = Field(default_factory=dict)  # UsageTracker.as_dict()
    seconds: float = 0.0  # wall time of this call of run_srs
    ablation: Ablation = "none"  # as requested
    ablation_used: Ablation = "none"  # as run (no reference SRS: "none" runs as "no-clarify")
    thread_id: str | None = None
    completed: bool = False  # DocGenerate finished
    # where each requirement came from, in the order of `requirements`
    traceability: list[TraceRow] = Field(default_factory=list)
    request_sentences: list[str] = Field(default_factory=list)  # S1, S2, ... of the request

    def final_markdown(self, language: str | None = None) -> str:
        """The SRS as srs.md holds it: `srs_markdown` (DocGenerate's document, what the judge
        of `srs evaluate`/`srs experiment` reads) followed by the traceability matrix, in
        `language` (else the document's)."""
        return with_matrix(self.srs_markdown, self.traceability, language)

    def trace_csv(self, language: str = "en") -> str:
        """The matrix as CSV (srs-trace.csv)."""
        return matrix_csv(self.traceability, language)


class NodeStarted(core.StepStarted):
    name: Literal["node_started"] = "node_started"
    STEP_FIELD = "agent"
    agent: AgentName
    round: int  # 0 for ReqParse; the seed's iteration for ReqExplore/ReqClarify/DocGenerate


class NodeFinished(core.StepFinished):
    name: Literal["node_finished"] = "node_finished"
    STEP_FIELD = "agent"
    agent: AgentName
    round: int
    requirements: list[Requirement]  # the current list, removed items left out
    scores: list[Score] = Field(default_factory=list)  # this round's, ReqClarify only
    frozen_now: list[str] = Field(default_factory=list)
    removed_now: list[str] = Field(default_factory=list)
    frozen_ids: list[str] = Field(default_factory=list)  # all frozen so far
    removed_ids: list[str] = Field(default_factory=list)  # all removed so far
    counts: dict[str, int]  # total / frozen / removed / unfrozen
    seconds: float = 0.0
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    skipped: bool = False  # nothing unfrozen was left, so no model call was made

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        if self.skipped:
            self.outcome = "skipped"


class NodeToken(core.Token):
    """A piece of the running node's model answer as it streams (`reasoning`: a reasoning
    model's separate thinking), for the running step to show."""

    name: Literal["node_token"] = "node_token"


class NodeRestarted(core.StepReset):
    """The running node's model call starts (again, after a broken or unusable try): the
    answer shown so far goes."""

    name: Literal["node_restarted"] = "node_restarted"


class DocumentToken(core.Token):
    name: Literal["document_token"] = "document_token"
    text: str


class DocumentReset(core.StepReset):
    """The document stream broke; discard the text shown so far, it starts again."""

    name: Literal["document_reset"] = "document_reset"
    step: str = "DocGenerate"
    attempt: int


class DocumentContinued(core.Notice):
    """The document hit the model's length limit; the model was asked to continue it (the
    text goes on in the same stream). `count`: continuations so far."""

    name: Literal["document_continued"] = "document_continued"
    count: int


class Trail(core.Notice):
    """One line of the seed's console trail (`[日志] …`): `key` names it in the catalogue
    (`srs.trail.<key>`), `values` fill it in."""

    name: Literal["trail"] = "trail"
    key: str

    def model_post_init(self, context: Any) -> None:
        self.code = self.code or f"srs.trail.{self.key}"

    def text(self, language: str) -> str:
        return say(self.code, self.values, language)


class Notice(core.Notice):
    """Something the user should know: `code` names its message in the catalogue."""

    name: Literal["notice"] = "notice"

    @property
    def message(self) -> str:
        return self.text("en")

    def text(self, language: str) -> str:
        return say(self.code, self.values, language)


class PausedRequirement(BaseModel):
    """One row of the list shown at a pause."""

    id: str
    content: str
    score: int | None = None  # this round's score (None: not scored this round)
    reason: str = ""
    status: Literal["frozen", "open", "removed"] = "open"


class Paused(core.Paused):
    """The run waits for the user's decision on the list after ReqClarify round `round`
    (resume the thread with `run_srs(..., resume=True, decision=...)`)."""

    name: Literal["paused"] = "paused"
    round: int
    requirements: list[PausedRequirement]  # the list with this round's scores
    thread_id: str | None = None
    last_round: bool = False  # the next step is DocGenerate (unless the user adds an item)


class DecisionApplied(core.Notice):
    """The user's decision at the pause after round `round`, as applied."""

    name: Literal["decision_applied"] = "decision_applied"
    round: int
    changes: dict[str, Any]
    requirements: list[Requirement] = Field(default_factory=list)  # the list now


class RunFinished(core.Finished):
    name: Literal["run_finished"] = "run_finished"
    result: SrsResult


class RunFailed(core.Failed):
    name: Literal["run_failed"] = "run_failed"
    agent: AgentName | None = None  # the node that was running
    error_type: str = ""
    code: str = ""  # why, as a reqstudio.failures.FailureCode
    values: dict[str, Any] = Field(default_factory=dict)  # what the code's message is filled with
    partial: SrsResult | None = None
    remedy: str = "retry"  # what a resumed run needs changed (reqstudio.errors.Remedy)

    def model_post_init(self, context: Any) -> None:
        self.code = self.code or self.error_type

    @property
    def message(self) -> str:
        return self.text("en")

    def text(self, language: str) -> str:
        """Why the run failed, in `language`, from the catalogue (a run recorded with only its
        error's class name: an unexpected error of that name)."""
        if self.code not in FAILURE_CODES:
            return render(Failure(FailureCode.UNEXPECTED, {"name": self.code}), language)
        return say(self.code, self.values, language)


SrsEvent = Annotated[
    NodeStarted
    | NodeFinished
    | NodeToken
    | NodeRestarted
    | DocumentToken
    | DocumentReset
    | DocumentContinued
    | Trail
    | Notice
    | Paused
    | DecisionApplied
    | RunFinished
    | RunFailed,
    Field(discriminator="name"),
]
