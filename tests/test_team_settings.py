"""Team mode's settings: TEAM_* variables reach the run's limits; bad values are one line."""

from __future__ import annotations

import pytest

from reqstudio.modes.team import TeamConfig
from reqstudio.settings import SettingsError, load_settings


def test_team_variables_become_the_runs_limits(monkeypatch, tmp_path):
    monkeypatch.setenv("TEAM_MAX_AGENTS", "5")
    monkeypatch.setenv("TEAM_MAX_EXECUTION_TIME", "90")
    monkeypatch.setenv("TEAM_MAX_MESSAGES", "40")
    settings = load_settings(REQSTUDIO_DATA_DIR=str(tmp_path))
    config = TeamConfig.from_settings(settings)
    assert (config.max_agents, config.max_execution_time, config.max_messages) == (5, 90.0, 40)
    assert config.max_depth == 3 and config.max_tokens == 300_000
    assert TeamConfig.from_settings(settings, max_agents=3).max_agents == 3  # CLI flags win


def test_a_bad_team_value_names_the_variable(monkeypatch):
    monkeypatch.setenv("TEAM_MAX_AGENTS", "1")
    with pytest.raises(SettingsError) as error:
        load_settings()
    message = str(error.value)
    assert 'TEAM_MAX_AGENTS="1"' in message and "\n" not in message
