"""SRS mode's model roles (`reqstudio.model_roles`): seed 000's four agents and the judge."""

from __future__ import annotations

from reqstudio.model_roles import RetryPolicy, Role, Temperature, exponential

REQPARSE = Temperature("OPENAI_TEMP_REQPARSE", "temp_reqparse", 0.2, "ReqParse temperature")
REQEXPLORE = Temperature("OPENAI_TEMP_REQEXPLORE", "temp_reqexplore", 0.6, "ReqExplore temperature")
REQCLARIFY = Temperature("OPENAI_TEMP_REQCLARIFY", "temp_reqclarify", 0.2, "ReqClarify temperature")
DOCGENERATE = Temperature(
    "OPENAI_TEMP_DOCGENERATE", "temp_docgenerate", 0.1, "DocGenerate temperature"
)
EVALUATION = Temperature(
    "OPENAI_TEMP_EVALUATION", "temp_evaluation", 0.2, "evaluation agent temperature"
)

# Seed 000: three tries for the list agents, five for DocGenerate (2^attempt s); the
# evaluation agent tries six times waiting 2, 4, 8, 16, 32 s.
ROLES = [
    Role("ReqParse", REQPARSE, exponential(3), answers=("RequirementList",)),
    Role("ReqExplore", REQEXPLORE, exponential(3), answers=("RequirementList",)),
    Role("ReqClarify", REQCLARIFY, exponential(3), answers=("ScoreList",)),
    Role(
        "DocGenerate",
        DOCGENERATE,
        exponential(5),
        # An answer that is no document (a title, then raw JSON) is written again.
        reasks={"document": RetryPolicy(2)},
        offline_max_tokens=1024,
    ),
    Role(
        "evaluation",
        EVALUATION,
        exponential(6, first=2.0),
        # An answer that reads as JSON but breaks the seed's 0-1 ranges is asked again, at
        # once (the provider is fine; the answer is not), before the seed's error object.
        reasks={"answer": RetryPolicy(3)},
        offline_max_tokens=768,
        answers=("EvaluationAnswer",),
    ),
]
