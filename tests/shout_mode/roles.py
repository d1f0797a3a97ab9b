"""Shout mode's model role: a temperature variable of its own, its own retry policy and its
bound on the offline model (`reqstudio.model_roles`)."""

from __future__ import annotations

from reqstudio.model_roles import RetryPolicy, Role, Temperature

SHOUT_TEMPERATURE = Temperature(
    "SHOUT_TEMPERATURE", "shout_temperature", 1.1, "Shout mode temperature"
)

ROLES = [
    Role(
        "shout",
        SHOUT_TEMPERATURE,
        RetryPolicy(2, (0.5,)),
        offline_max_tokens=64,
        offline_prose=True,
    )
]
