"""One review round on screen: its step, a nested step per reviewer and per revised
section."""

from __future__ import annotations

import re

import chainlit as cl
from chainlit.utils import utc_now

from reqstudio.web.session import finish_step, open_top_level_step
from reqstudio.web.texts import Catalog

tr = Catalog("review")

# A reviewer's model call, as the review engine labels it ("Review red_team round 2", and
# "... (section ids)" for the red team's question about where its findings go).
REVIEWER_CALL = re.compile(r"^Review (red_team|blue_team|client|judge) round (\d+)\b")


class RoundView:
    """One round on screen: its step, a nested step per reviewer and per revised section."""

    def __init__(self, number: int, titles: dict[str, str]):
        self.number = number
        self.titles = titles
        self.step: cl.Step | None = None
        self.reviewers: dict[str, cl.Step] = {}
        self.authors: dict[str, cl.Step] = {}
        self.closed = False

    async def open(self) -> None:
        self.step = await open_top_level_step(tr("step_round", round=self.number), "run")
        self.step.output = tr("reviewing")
        await self.step.update()
        for reviewer in ("red_team", "blue_team", "client", "judge"):
            child = cl.Step(
                name=tr(reviewer), type="tool", parent_id=self.step.id, default_open=False
            )
            child.output = tr("reviewing") if reviewer != "judge" else tr("waiting_judge")
            if reviewer != "judge":  # shown as working until its answer is read (or not)
                child.start = utc_now()
            await child.send()
            self.reviewers[reviewer] = child

    def running_reviewer(self, label: str) -> cl.Step | None:
        """The step of the reviewer a model call of this round is for (its waiting line and
        retry lines go there), while that step runs."""
        found = REVIEWER_CALL.match(label)
        if found is None or int(found.group(2)) != self.number:
            return None
        step = self.reviewers.get(found.group(1))
        return step if step is not None and not step.end else None

    async def reviewer_done(self, reviewer: str, output: str, error: bool = False) -> None:
        await finish_step(self.reviewers[reviewer], "failed" if error else "done", output=output)
        judge = self.reviewers["judge"]
        if (
            reviewer != "judge"
            and judge.start is None
            and all(step.end for name, step in self.reviewers.items() if name != "judge")
        ):  # the three reviews are in: the judge works now
            judge.start = utc_now()
            await judge.update()

    async def author_done(self, agent_id: str, output: str, failed: bool) -> None:
        await finish_step(self.authors[agent_id], "failed" if failed else "done", output=output)

    async def author_started(self, agent_id: str, title: str) -> None:
        child = cl.Step(
            name=tr("step_author", title=title), type="llm", parent_id=self.step.id,
            default_open=False,
        )  # fmt: skip
        await child.send()
        self.authors[agent_id] = child

    async def close(
        self, output: str | None = None, error: bool = False, outcome: str | None = None
    ) -> None:
        """End the round's step; its title says how it ended (done, failed, stopped), as
        each reviewer's and author's does."""
        if self.step is None or self.closed:
            return
        self.closed = True
        outcome = outcome or ("failed" if error else "done")
        for child in self.reviewers.values():
            if child.output in (tr("reviewing"), tr("waiting_judge")):
                ended = "stopped" if error else "done"
                await finish_step(child, ended, output=tr("stopped") if error else tr("none_found"))
        for child in self.authors.values():
            if not child.end:  # a revision still being written when the round ended
                await finish_step(child, "stopped" if error else "done")
        await finish_step(self.step, outcome, output=output)
