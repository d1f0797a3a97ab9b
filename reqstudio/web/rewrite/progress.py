"""Rewrite mode's views of its run in the browser (`reqstudio.web.live`): a Step per stage
(the outline as a table, the sections streaming into one message, each review round with its
issues, per-section diffs, failed patches and unplaced issues)."""

from __future__ import annotations

from typing import Any

import chainlit as cl

from reqstudio.events import BaseEvent
from reqstudio.failures import said_or
from reqstudio.modes.rewrite import DocumentStructure
from reqstudio.modes.rewrite import events as stages
from reqstudio.modes.rewrite.models import PatchFailure, ReviewerFailure, ReviewIssue, SectionPatch
from reqstudio.web.live import LiveRun, Look, Views
from reqstudio.web.rendering import cell
from reqstudio.web.rewrite.tables import issues_table, outline_table, reviewer_name, section_diff
from reqstudio.web.session import finish_step, open_top_level_step
from reqstudio.web.texts import Catalog, counted, lang

tr = Catalog("rewrite")

STAGE_LOOKS = {
    "outline_generation": ("step_outline", "list-tree"),
    "content_filling": ("step_filling", "pen-line"),
}


def rewrite_live(max_rounds: int = 0) -> LiveRun:
    """A run's live view: its `views` (a `RewriteViews`) keep what it wrote."""
    views = RewriteViews()
    views.max_rounds = max_rounds
    return LiveRun(views)


class RewriteViews(Views):
    """The run's stages as Steps, the streaming draft (the run's result message), diffs."""

    def __init__(self) -> None:
        self.document: DocumentStructure | None = None
        self.written: dict[str, str] = {}  # section id -> text streamed so far
        self.current: str | None = None
        self.max_rounds = 0
        self.last_issues = 0
        self.step_round = 0  # the review round whose step is open
        self.failures = ""  # the open round's reviewers that could not review, as notes

    @property
    def step(self) -> cl.Step | None:
        return self.live.step

    @property
    def draft(self) -> cl.Message:
        return self.live.result

    def look(self, event: BaseEvent) -> Look | None:
        if isinstance(event, stages.StageStarted) and event.step in STAGE_LOOKS:
            key, icon = STAGE_LOOKS[event.step]
            return Look(tr(key), "llm", icon)
        return None

    def streams(self, event: BaseEvent) -> bool:
        return isinstance(event, stages.SectionToken)

    async def show(self, event: BaseEvent) -> None:
        if isinstance(event, stages.StageStarted):
            await self.on_stage_start(event.step, **event.values)
        elif isinstance(event, stages.StageFinished):
            await self.on_stage_end(event.step, **event.values)
        elif isinstance(event, stages.StageFailed):
            await self.on_stage_error(
                event.step, reason=event.reason, failure=event.failure, section_id=event.section_id
            )
        elif isinstance(event, stages.StageProgress):
            await self.on_stage_progress(event.step, event.message, **event.values)
        elif isinstance(event, stages.SectionToken):
            self.written[event.section_id] = self.written.get(event.section_id, "") + event.text
        elif isinstance(event, stages.SectionReset):
            await self.on_section_reset(event.section_id)

    async def close_step(
        self, output: str | None = None, error: bool = False, outcome: str | None = None
    ) -> None:
        """End the open stage's step; its title says how it ended (done, failed, stopped).
        A review round with a failed patch ended failed."""
        if self.step is not None:
            outcome = outcome or ("failed" if error or self.step.is_error else "done")
            await self.live.close_step(outcome, output=output)

    def draft_markdown(self) -> str:
        """The document as far as it was written (also what a stop keeps)."""
        if self.document is None:
            return ""
        parts = [f"# {self.document.title}\n"]
        for section in self.document.sections:
            if section.id in self.written:
                body = self.written[section.id].strip("\n")
                parts.append(f"{'#' * section.level} {section.title}\n\n{body}\n")
        return "\n".join(parts)

    async def on_stage_start(self, stage_name: str, **kwargs: Any) -> None:
        if stage_name == "content_filling":  # its step is open (`look`)
            self.document = kwargs.get("document") or self.document
            self.live.new_result()
            if kwargs.get("resumed_at") and self.document is not None:
                # a resumed run: the sections written before the stop come from the checkpoint
                done = [s for s in self.document.sections if s.content.strip()]
                self.written.update({s.id: s.content for s in done})
                self.draft.content = self.draft_markdown()
            await self.draft.send()

    async def on_stage_end(self, stage_name: str, **kwargs: Any) -> None:
        if stage_name == "outline_generation":
            self.document = kwargs["document"]
            await self.close_step(outline_table(self.document))
        elif stage_name == "content_filling":
            self.document = kwargs["document"]
            await self.close_step(
                tr("filled", total=counted(len(self.document.sections), "section"))
            )
        elif stage_name == "review_revision":
            self.document = kwargs.get("document") or self.document
            rounds = int(kwargs.get("rounds") or 0)
            if not rounds:
                step = await open_top_level_step(tr("step_review_off"), "llm", icon="search-check")
                await finish_step(step, "skipped")
            elif self.step is not None:
                if rounds >= self.max_rounds and self.last_issues:
                    self.add_to_step(tr("last_round", limit=self.max_rounds))
                await self.close_step()

    async def on_stage_error(self, stage_name: str, reason: str = "", **kwargs: Any) -> None:
        if reason == "cancelled":
            await self.close_step(tr("stopped"), outcome="stopped")
            return
        if stage_name == "content_filling":
            await self.drop_unfinished(kwargs.get("section_id"))
        # names the section and its fault (the finish reason), in the user's language
        where = self.where(kwargs.get("section_id"))
        reason = said_or(kwargs.get("failure") or {}, reason, lang())
        note = tr("stage_failed", where=where, reason=reason)
        output = f"{self.step.output}\n\n{note}" if self.step and self.step.output else note
        await self.close_step(output, error=True)

    def add_to_step(self, text: str) -> None:
        """`text` as a paragraph after what the open step shows (seen at its next update)."""
        self.step.output = f"{self.step.output or ''}\n\n{text}"

    def where(self, section_id: str | None, title: str | None = None) -> str:
        """ ", at section sec-02 “Booking”" for a failure at a section, else nothing."""
        if not section_id:
            return ""
        if title is None and self.document is not None:
            titles = {s.id: s.title for s in self.document.sections}
            title = titles.get(section_id, "")
        return tr("where", section_id=section_id, title=cell(title or ""))

    async def on_stage_progress(self, stage_name: str, message: str, **kwargs: Any) -> None:
        if stage_name == "content_filling" and self.step is not None:
            self.current = kwargs["section_id"]
            self.written[self.current] = ""
            self.step.output = tr(
                "filling", index=kwargs["index"], total=kwargs["total"], title=kwargs["title"]
            )
            await self.step.update()
            section = self.document.section(self.current) if self.document else None
            if section is not None:
                await self.draft.stream_token(
                    ("\n\n" if self.draft.content else "")
                    + f"{'#' * section.level} {section.title}\n\n"
                )
        elif stage_name == "review_revision":
            await self.review_progress(kwargs)

    async def review_progress(self, kwargs: dict[str, Any]) -> None:
        round_number = int(kwargs["round"])
        if "issues" in kwargs:
            issues = kwargs["issues"]
            self.last_issues = len(issues)
            # Never "no issues found" from a review a reviewer was missing from.
            nothing = tr("no_verdict") if kwargs.get("failed_reviewers") else tr("no_issues")
            table = issues_table(issues, self.document) if issues else nothing
            self.step.output = f"{self.step.output}\n\n{table}" if self.failures else table
            self.failures = ""
            await self.step.update()
        elif "failed_reviewer" in kwargs:
            failure: ReviewerFailure = kwargs["failed_reviewer"]
            note = tr(
                "reviewer_failed",
                reviewer=reviewer_name(failure.reviewer),
                reason=failure.text(lang()),
            )
            self.failures = f"{self.failures}\n\n{note}".strip()
            self.step.output = self.failures
            await self.step.update()
        elif "failure" in kwargs:
            failure: PatchFailure = kwargs["failure"]
            self.add_to_step(
                tr(
                    "patch_failed",
                    title=cell(failure.title),
                    section_id=failure.section_id,
                    reason=failure.text(lang()),
                )
            )
            self.step.is_error = True
            await self.step.update()
        elif "unplaced" in kwargs:
            unplaced: list[ReviewIssue] = kwargs["unplaced"]
            which = "; ".join(f"“{cell(i.section_id)}”: {cell(i.description)}" for i in unplaced)
            self.add_to_step(tr("unplaced", count=counted(len(unplaced), "issue"), which=which))
            await self.step.update()
        elif "patch" in kwargs:
            patch: SectionPatch = kwargs["patch"]
            self.add_to_step(
                f"**{tr('patched', title=cell(patch.title))}**\n\n{section_diff(patch)}"
            )
            await self.step.update()
        elif "sections" not in kwargs and self.step_round != round_number:  # a round starts
            self.step_round = round_number
            await self.close_step()
            await self.live.open_step(
                Look(tr("step_review", round=round_number), "llm", "search-check")
            )
            self.step.output = tr("reviewing")
            await self.step.update()

    async def drop_unfinished(self, section_id: str | None) -> None:
        """A section that failed for good: its last try's text (cut, filtered) and its heading
        leave the draft, which stops streaming (no cursor left spinning)."""
        if section_id and self.document is not None:
            partial = self.written.pop(section_id, "")
            if partial and self.draft.content.endswith(partial):
                self.draft.content = self.draft.content[: len(self.draft.content) - len(partial)]
            section = next((s for s in self.document.sections if s.id == section_id), None)
            if section is not None:
                heading = f"{'#' * section.level} {section.title}\n\n"
                if self.draft.content.endswith(heading):
                    self.draft.content = self.draft.content[: -len(heading)].rstrip("\n")
        if self.draft.content:
            await self.draft.update()

    async def on_section_reset(self, section_id: str) -> None:
        # The stream broke: drop what arrived of this section; it is written again.
        partial = self.written.get(section_id, "")
        if partial and self.draft.content.endswith(partial):
            self.draft.content = self.draft.content[: len(self.draft.content) - len(partial)]
            await self.draft.update()
        self.written[section_id] = ""
