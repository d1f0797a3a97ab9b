"""What a rewrite run reports while it works, as members of the one event union
(`reqstudio.events`): the graph's nodes emit these; the seed's `ProgressCallbackHandler`
receives them through `reqstudio.modes.rewrite.callbacks.deliver`, and `RewriteChain.astream`
yields them.

Stages (`step`): `outline_generation`, `content_filling`, `review_revision`. A stage's extra
keywords for the handler (`document`, `sections`, `reviewer`, ...) travel in `values`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from reqstudio import events as core
from reqstudio.failures import said_or


class StageStarted(core.StepStarted):
    name: Literal["stage_started"] = "stage_started"
    values: dict[str, Any] = Field(default_factory=dict)


class StageFinished(core.StepFinished):
    name: Literal["stage_finished"] = "stage_finished"
    values: dict[str, Any] = Field(default_factory=dict)


class StageFailed(core.StepFinished):
    """The stage ended by a failure or a cancellation (`reason`: the finish reason or
    "cancelled"); `section_id` names the section it failed at."""

    name: Literal["stage_failed"] = "stage_failed"
    outcome: core.Outcome = "failed"
    reason: str = ""  # in English
    failure: dict[str, Any] = Field(default_factory=dict)  # the same as a code and values
    section_id: str | None = None
    error: Any = Field(default=None, exclude=True)

    def text(self, language: str) -> str:
        """The reason in `language`, from the catalogue."""
        return said_or(self.failure, self.reason, language)


class StageProgress(core.Notice):
    """Finer progress inside a stage, e.g. "正在生成第 2/5 节..." (`message`, in the run's
    language); the stage's keywords in `values`."""

    name: Literal["stage_progress"] = "stage_progress"
    step: str
    message: str


class SectionToken(core.Token):
    name: Literal["section_token"] = "section_token"
    section_id: str


class SectionReset(core.StepReset):
    """The section's stream broke; it is written again (discard what was shown)."""

    name: Literal["section_reset"] = "section_reset"
    STEP_FIELD = "section_id"
    section_id: str


class RunFinished(core.Finished):
    name: Literal["run_finished"] = "run_finished"
    result: Any  # RewriteResult


class RunFailed(core.Failed):
    """`error`: what `ainvoke` raised (a `RewriteStageError` carries the partial document and
    the run id to resume; `RewriteTooLarge` the sizes)."""

    name: Literal["run_failed"] = "run_failed"
    error: Any = Field(default=None, exclude=True)


RewriteEvent = (
    StageStarted
    | StageFinished
    | StageFailed
    | StageProgress
    | SectionToken
    | SectionReset
    | RunFinished
    | RunFailed
)
