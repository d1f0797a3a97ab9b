"""One review round on screen: its step, a nested step per reviewer and per revised
section."""

from __future__ import annotations

import chainlit as cl

from ui.session import open_top_level_step
from ui.texts import Catalog

tr = Catalog("review")


class RoundView:
    """One round on screen: its step, a nested step per reviewer and per revised section."""

    def __init__(self, number: int, titles: dict[str, str]):
        self.number = number
        self.titles = titles
        self.step: cl.Step | None = None
        self.reviewers: dict[str, cl.Step] = {}
        self.authors: dict[str, cl.Step] = {}

    async def open(self) -> None:
        self.step = await open_top_level_step(tr("step_round", round=self.number), "run")
        self.step.output = tr("reviewing")
        await self.step.update()
        for reviewer in ("red_team", "blue_team", "client", "judge"):
            child = cl.Step(
                name=tr(reviewer), type="tool", parent_id=self.step.id, default_open=False
            )
            child.output = tr("reviewing") if reviewer != "judge" else tr("waiting_judge")
            await child.send()
            self.reviewers[reviewer] = child

    async def reviewer_done(self, reviewer: str, output: str, error: bool = False) -> None:
        child = self.reviewers[reviewer]
        child.output = output
        child.is_error = error
        await child.update()

    async def author_started(self, agent_id: str, title: str) -> None:
        child = cl.Step(
            name=tr("step_author", title=title), type="llm", parent_id=self.step.id,
            default_open=False,
        )  # fmt: skip
        await child.send()
        self.authors[agent_id] = child

    async def close(self, output: str | None = None, error: bool = False) -> None:
        if self.step is None:
            return
        for child in self.reviewers.values():
            if child.output in (tr("reviewing"), tr("waiting_judge")):
                child.output = tr("stopped") if error else tr("none_found")
                await child.update()
        if output is not None:
            self.step.output = output
        self.step.is_error = error
        await self.step.update()
