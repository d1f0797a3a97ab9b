"""A project's acceptance tests in the app's database (table `acceptance_tests`,
`reqstudio.workspace.store_schema`), and their suspect marks.

A test is suspect when the requirement it verifies no longer reads as it did when the test was
written or last confirmed: each new baseline (`WorkspaceStore.create_baseline`) compares every
test's `verifiedText` with its requirement's text in the baseline and marks the tests whose
requirement changed (in meaning, or only in wording: `reqstudio.check.meaning`) or is gone. The
mark stays, through later baselines, until a person confirms the test (`confirm`), which takes
the requirement's current text as the one the test verifies, or replaces the tests. The
marking is `reqstudio.workspace.acceptance_marks`.
Every operation goes through the store's ownership check: one user never reaches another's.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import text

from reqstudio.workspace.acceptance import AcceptanceTest, Suspicion
from reqstudio.workspace.store import Project, WorkspaceError, WorkspaceStore
from reqstudio.workspace.store_schema import now

_COLUMNS = (
    '"uid", "humanId", "requirementUid", "requirementId", "title", "given", "when", "then", '
    '"section", "verifiedText", "suspect", "suspectReason"'
)


def _test_from_row(row: Any) -> AcceptanceTest:
    reason = json.loads(row.suspectReason) if row.suspectReason else None
    suspicion = Suspicion(**reason) if bool(row.suspect) and reason else None
    return AcceptanceTest(
        row.humanId, row.uid, row.requirementId, row.requirementUid, row.title, row.given,
        row.when, row.then, json.loads(row.section), row.verifiedText, suspicion,
    )  # fmt: skip


class AcceptanceTests:
    """A user's projects' acceptance tests, through the workspace store's engine."""

    def __init__(self, store: WorkspaceStore):
        self.store = store

    async def tests(self, project: Project) -> list[AcceptanceTest]:
        project = await self.store.project_by_id(project.owner, project.id)
        async with self.store.engine.connect() as connection:
            rows = await connection.execute(
                text(f'SELECT {_COLUMNS} FROM acceptance_tests WHERE "projectId" = :p '
                     'ORDER BY "position"'),
                {"p": project.id},
            )  # fmt: skip
            return [_test_from_row(row) for row in rows]

    async def add(
        self, project: Project, tests: list[AcceptanceTest], *, replacing: set[str] = frozenset()
    ) -> None:
        """Store `tests` in the project, after deleting the tests of the requirements whose
        uids are in `replacing` (their tests written anew). One transaction."""
        project = await self.store.project_by_id(project.owner, project.id)
        created = now()
        async with self.store.engine.begin() as connection:
            for requirement_uid in replacing:
                await connection.execute(
                    text('DELETE FROM acceptance_tests WHERE "projectId" = :p AND '
                         '"requirementUid" = :r'),
                    {"p": project.id, "r": requirement_uid},
                )  # fmt: skip
            last = (
                await connection.execute(
                    text('SELECT MAX("position") FROM acceptance_tests WHERE "projectId" = :p'),
                    {"p": project.id},
                )
            ).scalar()
            start = 0 if last is None else int(last) + 1
            for position, test in enumerate(tests, start):
                await connection.execute(
                    text(
                        f'INSERT INTO acceptance_tests ("projectId", {_COLUMNS}, "position", '
                        '"createdAt") VALUES (:p, :uid, :id, :ruid, :rid, :title, :given, '
                        ":when, :then, :section, :verified, FALSE, NULL, :position, :created)"
                    ),
                    {"p": project.id, "uid": test.uid, "id": test.id,
                     "ruid": test.requirement_uid, "rid": test.requirement_id,
                     "title": test.title, "given": test.given, "when": test.when,
                     "then": test.then, "section": json.dumps(test.section, ensure_ascii=False),
                     "verified": test.verified_text, "position": position, "created": created},
                )  # fmt: skip

    async def confirm(self, project: Project, test_id: str, by: str) -> tuple[AcceptanceTest, bool]:
        """A person's word that the test `test_id` still verifies its requirement as the
        project now holds it: the mark is cleared and the requirement's current text becomes
        the one the test verifies. The test, and whether it was suspect."""
        found = next((t for t in await self.tests(project) if t.id == test_id), None)
        if found is None:
            raise WorkspaceError(f"the project {project.name!r} has no acceptance test {test_id!r}")
        current = {item.uid: item for item in await self.store.items(project)}
        requirement = current.get(found.requirement_uid)
        if requirement is None:
            raise WorkspaceError(
                f"{test_id} verifies {found.requirement_id}, which the project {project.name!r} "
                "no longer holds: write tests for the requirement that replaced it instead"
            )
        async with self.store.engine.begin() as connection:
            await connection.execute(
                text('UPDATE acceptance_tests SET "suspect" = FALSE, "suspectReason" = NULL, '
                     '"verifiedText" = :verified, "requirementId" = :rid, "confirmedBy" = :by, '
                     '"confirmedAt" = :at WHERE "projectId" = :p AND "uid" = :uid'),
                {"verified": requirement.text, "rid": requirement.id, "by": by, "at": now(),
                 "p": project.id, "uid": found.uid},
            )  # fmt: skip
        was_suspect = found.suspect is not None
        found.suspect, found.verified_text = None, requirement.text
        found.requirement_id = requirement.id
        return found, was_suspect
