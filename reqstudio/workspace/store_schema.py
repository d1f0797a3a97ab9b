"""What the workspace's tables in the app's database mean (their statements, with every other
table's, are in `reqstudio.schema`), and the one data migration they needed:
`move_threads_into_default_projects`, run by `reqstudio.schema.prepare_schema`.

- `projects`: a user's projects; `owner` is the account's identifier (the name a thread's
  `userIdentifier` holds, `local` for the one local user). Each user has one default project
  (`isDefault`, named `default`). `revision` counts the imports into it.
- `items`: a project's requirement items, the current ones and the removed ones (`removedIn`
  the revision that dropped them: kept so that their ids are never given to another item).
  `version` is the revision that last changed the item.
- `baselines`: a named, frozen copy of a project's current items (`items`, JSON), never
  rewritten.
- `acceptance_tests`: a project's acceptance tests (`reqstudio tests`), each verifying one
  requirement (`requirementUid`, its human id beside it); `verifiedText` the requirement's text
  the test was written or last confirmed against; `suspect` set (with `suspectReason`, JSON) when
  a new baseline holds another text for the requirement, or none, cleared by a person's
  confirmation (`confirmedBy`, `confirmedAt`).
- `thread_projects`: which project a chat thread belongs to. Chainlit's `threads` table is left
  as Chainlit writes it; a thread without a row here belongs to its user's default project, and
  the migration gives every existing thread a row in its user's default project.

JSON columns are TEXT holding JSON on both databases (the same statements and the same reads).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import inspect, text

DEFAULT_PROJECT = "default"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_project_row(owner: str, name: str) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "owner": owner,
        "name": name,
        "created": now(),
        "default": name == DEFAULT_PROJECT,
    }


INSERT_PROJECT = (
    'INSERT INTO projects ("id", "owner", "name", "createdAt", "isDefault", "revision") '
    "VALUES (:id, :owner, :name, :created, :default, 0)"
)


async def move_threads_into_default_projects(connection: Any) -> None:
    """Put every thread that has no project into its user's default project (made for users
    who have none). Idempotent; run in the caller's transaction (which holds the schema lock
    on PostgreSQL)."""
    has_threads = await connection.run_sync(lambda sync: inspect(sync).has_table("threads"))
    if not has_threads:  # a database only the CLI has used: no threads to move
        return
    owners = await connection.execute(
        text(
            'SELECT DISTINCT t."userIdentifier" FROM threads t WHERE t."userIdentifier" IS NOT '
            'NULL AND NOT EXISTS (SELECT 1 FROM thread_projects m WHERE m."threadId" = t."id") '
            'AND NOT EXISTS (SELECT 1 FROM projects p WHERE p."owner" = t."userIdentifier" '
            'AND p."name" = :default)'
        ),
        {"default": DEFAULT_PROJECT},
    )
    for (owner,) in owners.all():
        await connection.execute(text(INSERT_PROJECT), new_project_row(owner, DEFAULT_PROJECT))
    await connection.execute(
        text(
            'INSERT INTO thread_projects ("threadId", "projectId") SELECT t."id", p."id" '
            'FROM threads t JOIN projects p ON p."owner" = t."userIdentifier" '
            'AND p."name" = :default WHERE NOT EXISTS '
            '(SELECT 1 FROM thread_projects m WHERE m."threadId" = t."id")'
        ),
        {"default": DEFAULT_PROJECT},
    )
