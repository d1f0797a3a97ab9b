"""Rewrite mode's model roles (`reqstudio.model_roles`, seed 003): structured answers tried
like SRS's list agents (their tries bound the format repairs), written sections like
DocGenerate. An outline, a section, a patch or questions that are the prompt given back (its
example, its instructions: `reqstudio.document_guard`) are asked for again once."""

from __future__ import annotations

from reqstudio.model_roles import RetryPolicy, Role, Temperature, exponential
from reqstudio.modes.srs.roles import EVALUATION

REWRITE_TEMPERATURE = Temperature(
    "OPENAI_TEMP_REWRITE",
    "temp_rewrite",
    0.3,
    "Rewrite mode temperature (its review uses the lower of this and `OPENAI_TEMP_EVALUATION`)",
)
GIVEN_BACK = {"document": RetryPolicy(2)}

ROLES = [
    Role(
        "RewriteOutline",
        REWRITE_TEMPERATURE,
        exponential(3),
        reasks=GIVEN_BACK,
        answers=("OutlinePlan",),
    ),
    Role("RewriteFill", REWRITE_TEMPERATURE, exponential(5), reasks=GIVEN_BACK),
    # The reviewer judges: no warmer than the SRS judge.
    Role(
        "RewriteReview",
        (REWRITE_TEMPERATURE, EVALUATION),
        exponential(3),
        answers=("ReviewReport", "Placements"),
    ),
    Role("RewritePatch", REWRITE_TEMPERATURE, exponential(5), reasks=GIVEN_BACK),
    Role(
        "RewriteQuestions",
        REWRITE_TEMPERATURE,
        exponential(3),
        reasks=GIVEN_BACK,
        answers=("ClarifyingQuestions",),
    ),
]
