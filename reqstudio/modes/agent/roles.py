"""Agent mode's model roles (`reqstudio.model_roles`): the tool-calling model and the answer
model (AGENT_FUNCTION_CALL_MODEL, AGENT_ANSWER_MODEL). Seed 002 names no retry count for
them: three tries, like SRS's list agents."""

from __future__ import annotations

from reqstudio.model_roles import Role, exponential
from reqstudio.modes.chat.roles import CHAT_TEMPERATURE

ROLES = [
    # Tool calls are decoded against a grammar on the offline model: no penalties there.
    Role("function_call", 0.0, exponential(3), offline_max_tokens=384),
    Role("answer", CHAT_TEMPERATURE, exponential(3), offline_max_tokens=512, offline_prose=True),
]
