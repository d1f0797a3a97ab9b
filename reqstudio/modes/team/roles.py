"""Team mode's model role (`reqstudio.model_roles`, seed 004): every agent of the team."""

from __future__ import annotations

from reqstudio.model_roles import Role, Temperature, exponential

TEAM_TEMPERATURE = Temperature(
    "TEAM_TEMPERATURE", "team_temperature", 0.3, "Team mode agents' temperature"
)

ROLES = [Role("team", TEAM_TEMPERATURE, exponential(3))]
