"""The acceptance-test writer: requirements in, Given/When/Then tests out, through the one
structured call path (`reqstudio.structured.ask_structured`) as the role `AcceptanceWriter`.

Requirements go to the model a few at a time (`BATCH`), so that a long document's answer stays
well within a model's output limit and one failed call loses only its own requirements. An
answer that names a requirement it was not given, or leaves one without a scenario, is
re-asked within the role's retry policy, with what was wrong; after the last try that call
fails, and its requirements are reported without tests (the run is partial, never complete).
No Chainlit, no CLI: the command line (`reqstudio.workspace.acceptance_cli`) drives it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage

from reqstudio.workspace.acceptance import (
    AcceptanceScenarios,
    AcceptanceTest,
    check_coverage,
    tests_from_scenarios,
)
from reqstudio.workspace.items import Item

ROLE = "AcceptanceWriter"
BATCH = 8  # requirements per call
MAX_PER_REQUIREMENT = 3


@dataclass
class BatchFailure:
    """A call that gave no usable answer: the requirements it asked about, and why."""

    requirement_ids: list[str]
    error: BaseException

    def as_dict(self) -> dict[str, object]:
        from reqstudio.errors import describe_failure

        return {
            "requirements": list(self.requirement_ids),
            "error": describe_failure(self.error, "en"),
            "detail": str(self.error),
        }


@dataclass
class Written:
    """What a run wrote: the tests, and the calls that failed (their requirements have none)."""

    tests: list[AcceptanceTest] = field(default_factory=list)
    failures: list[BatchFailure] = field(default_factory=list)
    asked: int = 0  # requirements asked about

    @property
    def complete(self) -> bool:
        return not self.failures


def unique_requirements(requirements: Sequence[Item]) -> list[Item]:
    """The requirements by id, the first of an id written twice."""
    seen: dict[str, Item] = {}
    for item in requirements:
        seen.setdefault(item.id, item)
    return list(seen.values())


def scenario_prompt(batch: Sequence[Item], language: str) -> str:
    from reqstudio.prompts import render_prompt

    return render_prompt(
        f"acceptance/{'zh' if language == 'zh' else 'en'}/scenarios.md",
        requirements=[
            {"id": r.id, "section": " / ".join(r.section[1:]), "text": r.text} for r in batch
        ],
        max_per_requirement=MAX_PER_REQUIREMENT,
    )


async def write_tests(
    factory: Any,
    requirements: Sequence[Item],
    language: str,
    *,
    taken: set[str] | None = None,
    callbacks: Sequence[Any] = (),
) -> Written:
    """Tests for `requirements` (ids in `taken` are not given to new tests)."""
    from reqstudio.calls import policy_for
    from reqstudio.structured import ask_structured

    chosen = unique_requirements(requirements)
    by_id = {r.id: r for r in chosen}
    taken = set(taken or ())
    written = Written(asked=len(chosen))
    for start in range(0, len(chosen), BATCH):
        batch = chosen[start : start + BATCH]
        asked = [r.id for r in batch]
        try:
            result = await ask_structured(
                factory.for_role(ROLE, callbacks=list(callbacks)),
                [HumanMessage(scenario_prompt(batch, language))],
                AcceptanceScenarios,
                response_format=factory.response_format(AcceptanceScenarios, role=ROLE),
                policy=policy_for(ROLE, factory.settings),
                label=f"Acceptance tests for {', '.join(asked)}",
                check=lambda answer, asked=asked: check_coverage(answer, asked),
            )
        except Exception as error:  # the provider's or the answers' fault: this batch only
            written.failures.append(BatchFailure(asked, error))
            continue
        written.tests += tests_from_scenarios(result.value.scenarios, by_id, taken)
    return written
