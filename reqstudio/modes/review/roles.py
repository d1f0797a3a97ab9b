"""Review mode's model roles (`reqstudio.model_roles`, seed 001): the four reviewers answer
structured (three tries bound the re-asks); the authors write sections like DocGenerate, as
warm as Rewrite's writers."""

from __future__ import annotations

from reqstudio.model_roles import Role, Temperature, exponential
from reqstudio.modes.rewrite.roles import REWRITE_TEMPERATURE

REVIEW_TEMPERATURE = Temperature(
    "OPENAI_TEMP_REVIEW",
    "temp_review",
    0.2,
    "Review mode reviewers' temperature (the authors use `OPENAI_TEMP_REWRITE`)",
)

ROLES = [
    Role(
        "ReviewPanel",
        REVIEW_TEMPERATURE,
        exponential(3),
        answers=(
            "RedTeamReview",
            "BlueTeamReview",
            "ClientReview",
            "JudgeReview",
            "SectionPlacements",
        ),
    ),
    Role("ReviewAuthor", REWRITE_TEMPERATURE, exponential(5)),
]
