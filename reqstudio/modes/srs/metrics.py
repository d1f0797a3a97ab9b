"""The evaluation agent's seven metrics (seed 000), their weights in the weighted composite,
and its categories: read by the evaluation, the experiment and its summary alike."""

from __future__ import annotations

METRIC_WEIGHTS: dict[str, float] = {
    "coverage": 0.20,
    "completeness": 0.20,
    "testability": 0.20,
    "traceability": 0.15,
    "consistency": 0.10,
    "clarity": 0.10,
    "scope_discipline": 0.05,
}
METRICS: tuple[str, ...] = (
    "coverage",
    "completeness",
    "consistency",
    "testability",
    "clarity",
    "traceability",
    "scope_discipline",
)
CATEGORIES: tuple[str, ...] = ("functional", "non_functional", "constraints")
