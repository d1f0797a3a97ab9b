"""What an SRS run reports while it works: UI-agnostic events for the browser, the CLI and tests.

A run yields, in order: optional `Notice`s, then per node `NodeStarted` ... `NodeFinished`
(with the seed's console lines as `Trail`s, and for DocGenerate `DocumentToken`s,
`DocumentReset` if the stream broke and started again, `DocumentContinued` if the document hit
the length limit and was continued, in between), and finally exactly one `RunFinished`,
`RunFailed` or, with "pause after each round" on, `Paused` (resume the thread with the user's
decision; the resumed run starts with `DecisionApplied`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from agents.srs.state import Ablation, AgentName, Requirement, Score
from agents.srs.trace import TraceRow, matrix_csv, with_matrix


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
    # where each requirement came from (issue 22 item 8), in the order of `requirements`
    traceability: list[TraceRow] = Field(default_factory=list)
    request_sentences: list[str] = Field(default_factory=list)  # S1, S2, ... of the request

    def final_markdown(self) -> str:
        """The SRS as srs.md holds it: `srs_markdown` (DocGenerate's document, what the judge
        of `srs evaluate`/`srs experiment` reads) followed by the traceability matrix."""
        return with_matrix(self.srs_markdown, self.traceability)

    def trace_csv(self, language: str = "en") -> str:
        """The matrix as CSV (srs-trace.csv)."""
        return matrix_csv(self.traceability, language)


class NodeStarted(BaseModel):
    type: Literal["node_started"] = "node_started"
    agent: AgentName
    round: int  # 0 for ReqParse; the seed's iteration for ReqExplore/ReqClarify/DocGenerate


class NodeFinished(BaseModel):
    type: Literal["node_finished"] = "node_finished"
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


class DocumentToken(BaseModel):
    type: Literal["document_token"] = "document_token"
    text: str


class DocumentReset(BaseModel):
    """The document stream broke; discard the text shown so far, it starts again."""

    type: Literal["document_reset"] = "document_reset"
    attempt: int


class DocumentContinued(BaseModel):
    """The document hit the model's length limit; the model was asked to continue it (the
    text goes on in the same stream). `count`: continuations so far."""

    type: Literal["document_continued"] = "document_continued"
    count: int


class Trail(BaseModel):
    """One line of the seed's console trail (`[日志] …`), in English and as the seed writes it."""

    type: Literal["trail"] = "trail"
    key: str
    text: str
    text_zh: str


class Notice(BaseModel):
    type: Literal["notice"] = "notice"
    message: str
    message_zh: str = ""


class PausedRequirement(BaseModel):
    """One row of the list shown at a pause."""

    id: str
    content: str
    score: int | None = None  # this round's score (None: not scored this round)
    reason: str = ""
    status: Literal["frozen", "open", "removed"] = "open"


class Paused(BaseModel):
    """The run waits for the user's decision on the list after ReqClarify round `round`
    (resume the thread with `run_srs(..., resume=True, decision=...)`)."""

    type: Literal["paused"] = "paused"
    round: int
    requirements: list[PausedRequirement]  # the list with this round's scores
    thread_id: str | None = None
    last_round: bool = False  # the next step is DocGenerate (unless the user adds an item)


class DecisionApplied(BaseModel):
    """The user's decision at the pause after round `round`, as applied."""

    type: Literal["decision_applied"] = "decision_applied"
    round: int
    changes: dict[str, Any]
    requirements: list[Requirement] = Field(default_factory=list)  # the list now


class RunFinished(BaseModel):
    type: Literal["run_finished"] = "run_finished"
    result: SrsResult


class RunFailed(BaseModel):
    type: Literal["run_failed"] = "run_failed"
    message: str
    message_zh: str = ""
    agent: AgentName | None = None  # the node that was running
    error_type: str = ""
    partial: SrsResult | None = None


SrsEvent = Annotated[
    NodeStarted
    | NodeFinished
    | DocumentToken
    | DocumentReset
    | DocumentContinued
    | Trail
    | Notice
    | Paused
    | DecisionApplied
    | RunFinished
    | RunFailed,
    Field(discriminator="type"),
]
