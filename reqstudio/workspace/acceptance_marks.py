"""Suspect marks on a project's acceptance tests, set when a baseline is frozen
(`WorkspaceStore.create_baseline`, in its transaction): a test is suspect when its requirement
no longer reads as it did when the test was written or last confirmed (`verifiedText`), in
meaning or only in wording (`reqstudio.check.meaning`), or is gone. Apart from
`reqstudio.workspace.acceptance_store` so that the store imports no module that imports it."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import text

from reqstudio.workspace.acceptance import Suspicion
from reqstudio.workspace.items import Item


def suspicion_of(test_text: str, requirement: Item | None, baseline: str) -> Suspicion | None:
    """Why a test written against `test_text` is suspect when its requirement reads as
    `requirement` does (None: gone), if it is."""
    if requirement is None:
        return Suspicion(baseline, "removed", test_text, None)
    if requirement.text == test_text:
        return None
    from reqstudio.check.meaning import meaning_changes

    change = "meaning" if meaning_changes(test_text, requirement.text) else "wording"
    return Suspicion(baseline, change, test_text, requirement.text)


async def mark_suspects(
    connection: Any, project_id: str, baseline: str, items: list[Item]
) -> list[str]:
    """Mark the project's tests whose requirement changed or is gone in the baseline `baseline`
    (its `items`); run in the baseline's transaction. The ids of the tests marked now."""
    requirements = {item.uid: item for item in items}
    rows = await connection.execute(
        text('SELECT "uid", "humanId", "requirementUid", "verifiedText" FROM acceptance_tests '
             'WHERE "projectId" = :p AND "suspect" = FALSE ORDER BY "position"'),
        {"p": project_id},
    )  # fmt: skip
    marked = []
    for row in rows.all():
        found = suspicion_of(row.verifiedText, requirements.get(row.requirementUid), baseline)
        if found is None:
            continue
        await connection.execute(
            text('UPDATE acceptance_tests SET "suspect" = TRUE, "suspectReason" = :reason '
                 'WHERE "projectId" = :p AND "uid" = :uid'),
            {"reason": json.dumps(found.as_dict(), ensure_ascii=False), "p": project_id,
             "uid": row.uid},
        )  # fmt: skip
        marked.append(row.humanId)
    return marked
