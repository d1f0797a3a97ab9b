"""Chat mode's model role (`reqstudio.model_roles`)."""

from __future__ import annotations

from reqstudio.model_roles import Role, Temperature, exponential

CHAT_TEMPERATURE = Temperature("OPENAI_TEMP_CHAT", "temp_chat", 0.7, "Chat mode temperature")

ROLES = [
    # A chat answer on the offline model is bounded short and sampled against repetition: a
    # Chinese answer once ran on as gibberish for the whole window (~12 minutes on two cores).
    Role("chat", CHAT_TEMPERATURE, exponential(3), offline_max_tokens=512, offline_prose=True),
]
