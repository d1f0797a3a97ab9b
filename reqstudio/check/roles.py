"""The checker's model role (`reqstudio.model_roles`): `reqstudio check --suggest` asks for a new
wording of one requirement at a time, structured like the list agents, as warm as Rewrite's
writers; on the offline model one requirement in a JSON object needs few tokens."""

from __future__ import annotations

from reqstudio.model_roles import Role, exponential
from reqstudio.modes.rewrite.roles import REWRITE_TEMPERATURE

ROLES = [
    Role(
        "CheckSuggest",
        REWRITE_TEMPERATURE,
        exponential(3),
        offline_max_tokens=256,
        answers=("SuggestedRewrite",),
    ),
]
