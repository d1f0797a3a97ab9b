"""The workspace's model role (`reqstudio.model_roles`): the acceptance-test writer of
`reqstudio tests generate`, which answers Given/When/Then scenarios as JSON (three tries bound
its re-asks: unreadable JSON, a scenario for a requirement it was not given, a requirement
left without one). The workspace's other commands need no model."""

from __future__ import annotations

from reqstudio.model_roles import Role, Temperature, exponential

ACCEPTANCE_TEMPERATURE = Temperature(
    "OPENAI_TEMP_ACCEPTANCE",
    "temp_acceptance",
    0.2,
    "acceptance-test writer's temperature (`reqstudio tests generate`)",
)

ROLES = [
    Role(
        "AcceptanceWriter",
        ACCEPTANCE_TEMPERATURE,
        exponential(3),
        answers=("AcceptanceScenarios",),
    ),
]
