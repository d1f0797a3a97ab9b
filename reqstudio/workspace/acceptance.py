"""Acceptance tests traced to the requirements they verify.

The acceptance-test writer (role `AcceptanceWriter`, `reqstudio.workspace.roles`) answers
`AcceptanceScenarios`: Given/When/Then scenarios, each naming the requirement it verifies. A
scenario becomes an `AcceptanceTest`: a human id (`AT-<requirement id>-<n>`), a machine id, its
requirement's id and uid, and, as an item (`as_item`), an item of kind `test` whose one link
(type `verifies`) points at the requirement. A stored test also keeps the requirement's text it
was written (or last confirmed) against: when a new baseline holds another text, the test is
suspect (`reqstudio.workspace.acceptance_store`) until a person confirms it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from reqstudio.answers import answer_model
from reqstudio.workspace.items import Item, Link, uid_for

TEST_KIND = "test"
VERIFIES = "verifies"
# The kinds of item a test can verify (not headings, information or other tests).
VERIFIABLE = ("functional", "non-functional", "constraint")
# The first element of a test item's section path: its own specification in a ReqIF export.
TESTS_SECTION = "Acceptance tests"


def _lines(value: Any) -> Any:
    """A step given as a list of conditions is one text, a condition a line."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(v.strip() for v in value if v.strip())
    return value


Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Step = Annotated[Text, BeforeValidator(_lines)]


class Scenario(BaseModel):
    """One Given/When/Then scenario and the requirement it verifies."""

    model_config = ConfigDict(extra="ignore")

    requirement_id: Text
    title: Text
    given: Step
    when: Step
    then: Step


@answer_model("AcceptanceWriter")
class AcceptanceScenarios(BaseModel):
    """The acceptance-test writer's answer: at least one scenario."""

    model_config = ConfigDict(extra="ignore")

    scenarios: list[Scenario] = Field(min_length=1)


def check_coverage(answer: AcceptanceScenarios, asked: list[str]) -> None:
    """Refuse (ValueError, said to the model on the re-ask) a scenario for a requirement that
    was not asked about, and a requirement asked about that has no scenario."""
    known = set(asked)
    unknown = [
        f"scenario {n} names the requirement {s.requirement_id!r}"
        for n, s in enumerate(answer.scenarios, 1)
        if s.requirement_id not in known
    ]
    if unknown:
        raise ValueError(
            f"{'; '.join(unknown)}, which is not one of the requirements given "
            f"({', '.join(asked)}): use only those ids"
        )
    covered = {s.requirement_id for s in answer.scenarios}
    missing = [rid for rid in asked if rid not in covered]
    if missing:
        raise ValueError(
            f"no scenario for the requirement(s) {', '.join(missing)}: give at least one for "
            "each requirement"
        )


@dataclass
class Suspicion:
    """Why a test is suspect: its requirement changed (in meaning, or only in wording) or was
    removed, as found when the baseline `baseline` was frozen."""

    baseline: str
    change: str  # "meaning", "wording", "removed"
    old_text: str
    new_text: str | None

    def as_dict(self) -> dict[str, object]:
        return {"baseline": self.baseline, "change": self.change, "old_text": self.old_text,
                "new_text": self.new_text}  # fmt: skip


@dataclass
class AcceptanceTest:
    id: str
    uid: str
    requirement_id: str
    requirement_uid: str
    title: str
    given: str
    when: str
    then: str
    section: list[str] = field(default_factory=list)  # its requirement's section path
    verified_text: str = ""  # the requirement's text it was written or confirmed against
    suspect: Suspicion | None = None

    @property
    def steps(self) -> str:
        return f"Given {self.given}\nWhen {self.when}\nThen {self.then}"

    def as_item(self) -> Item:
        """The test as an item of kind `test`, linked to the requirement it verifies."""
        return Item(
            self.id,
            self.uid,
            self.steps,
            [TESTS_SECTION, *self.section[1:]],
            TEST_KIND,
            {"title": self.title},
            [Link(VERIFIES, self.requirement_uid, self.requirement_id)],
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "uid": self.uid,
            "kind": TEST_KIND,
            "title": self.title,
            "given": self.given,
            "when": self.when,
            "then": self.then,
            "verifies": self.requirement_id,
            "links": [link.as_dict() for link in self.as_item().links],
            "suspect": self.suspect is not None,
            "suspect_reason": self.suspect.as_dict() if self.suspect else None,
        }


def verifiable(items: list[Item]) -> list[Item]:
    """The requirements among `items` that tests can verify."""
    return [item for item in items if item.kind in VERIFIABLE]


def tests_from_scenarios(
    scenarios: list[Scenario], requirements: dict[str, Item], taken: set[str]
) -> list[AcceptanceTest]:
    """Each scenario as a test of its requirement, numbered after the ids in `taken` (which
    grows with the new ones)."""
    tests = []
    for scenario in scenarios:
        requirement = requirements[scenario.requirement_id]
        number = 1
        while f"AT-{requirement.id}-{number}" in taken:
            number += 1
        test_id = f"AT-{requirement.id}-{number}"
        taken.add(test_id)
        tests.append(
            AcceptanceTest(
                test_id,
                uid_for(f"test:{requirement.uid}:{test_id}:{scenario.title}"),
                requirement.id,
                requirement.uid,
                scenario.title,
                scenario.given,
                scenario.when,
                scenario.then,
                list(requirement.section),
                requirement.text,
            )
        )
    return tests
