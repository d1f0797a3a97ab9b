"""Team mode against the bundled real offline model (SmolLM2-135M through llama.cpp).

A 135M model rarely calls tools on its own, so the team may do little; the point is that the
whole path works with a real model server (tools bound, the scheduler, the record) and that
the run ends cleanly with a reason."""

from __future__ import annotations

import asyncio

import pytest

from reqstudio.modes.team import EventStore, TeamConfig, TeamRun
from reqstudio.modes.team.events import RunFinished, TurnFinished
from reqstudio.runtime import AppRuntime
from reqstudio.settings import load_settings
from tests.cli_support import require_offline_model

pytestmark = pytest.mark.smoke


def test_a_team_run_ends_cleanly_with_the_bundled_model(monkeypatch, tmp_path):
    require_offline_model()
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings(REQSTUDIO_DATA_DIR=str(tmp_path / "data"))
    assert settings.uses_embedded_model

    with AppRuntime(settings) as runtime:
        store = EventStore.in_data_dir(settings.data_dir)
        config = TeamConfig(max_execution_time=240, max_steps_per_turn=2, max_agents=3)
        team = TeamRun(runtime.factory(), config, store=store)

        async def work():
            events = [e async for e in team.events("List two requirements of a login page.")]
            return events, await team.export()

        events, record = asyncio.run(work())
        store.close()

    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert finished.reason in {"answered", "idle", "time", "tokens", "messages", "loop"}, finished
    assert any(isinstance(e, TurnFinished) and e.agent_id == "root" for e in events)
    root = next(s for s in finished.agents if s.agent_id == "root")
    assert root.model_calls >= 1
    assert record["events"][-1]["type"] == "run_finished"
