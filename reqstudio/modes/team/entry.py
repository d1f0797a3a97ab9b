"""Team mode behind the one entry shape (`reqstudio.events.RunEntry`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from reqstudio.events import BaseEvent, opened, unsaved_entry
from reqstudio.llm import ModelFactory
from reqstudio.modes.team.runner import TeamConfig, TeamRun
from reqstudio.modes.team.store import EventStore


def _events(
    request: str,
    models: ModelFactory,
    thread_id: str | None,
    config: TeamConfig | None = None,
    store: EventStore | None = None,
) -> AsyncIterator[BaseEvent]:
    team = TeamRun(models, config or TeamConfig.from_settings(models.settings), store, thread_id)
    return opened(team.run_id, team.events(request))


run = unsaved_entry(
    _events,
    "a team run cannot be resumed",
    """`Started`, then `TeamRun.events`' events for the task `request` (the last is
    `RunFinished`, whose `reason` says how the run ended). A team run is recorded to its
    `store` (the thread id is its run id), not checkpointed: it cannot be resumed. `options`:
    `config` (a `TeamConfig`) and `store` (an `EventStore`).""",
)
