"""The workspace's tables in the app's database (the history database: SQLite in the data
folder, or PostgreSQL by REQSTUDIO_DATABASE_URL), and their creation and migration in one
place: `prepare_workspace`, idempotent, run by the app's start-up (inside
`reqstudio.web.history.create_schema`, under its advisory lock) and by the CLI's store
(`reqstudio.workspace.store`) before its first query.

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

WORKSPACE_TABLES = [
    """CREATE TABLE IF NOT EXISTS projects (
        "id" TEXT PRIMARY KEY, "owner" TEXT NOT NULL, "name" TEXT NOT NULL,
        "createdAt" TEXT NOT NULL, "isDefault" BOOLEAN NOT NULL DEFAULT FALSE,
        "revision" BIGINT NOT NULL DEFAULT 0, UNIQUE ("owner", "name"))""",
    """CREATE TABLE IF NOT EXISTS items (
        "projectId" TEXT NOT NULL, "uid" TEXT NOT NULL, "humanId" TEXT NOT NULL,
        "text" TEXT NOT NULL, "section" TEXT NOT NULL, "kind" TEXT NOT NULL,
        "attributes" TEXT NOT NULL, "links" TEXT NOT NULL, "datatypes" TEXT NOT NULL,
        "idKept" BOOLEAN NOT NULL, "position" BIGINT NOT NULL, "version" BIGINT NOT NULL,
        "removedIn" BIGINT, PRIMARY KEY ("projectId", "uid"),
        FOREIGN KEY ("projectId") REFERENCES projects("id") ON DELETE CASCADE)""",
    """CREATE TABLE IF NOT EXISTS baselines (
        "id" TEXT PRIMARY KEY, "projectId" TEXT NOT NULL, "name" TEXT NOT NULL,
        "createdAt" TEXT NOT NULL, "createdBy" TEXT NOT NULL, "revision" BIGINT NOT NULL,
        "items" TEXT NOT NULL, UNIQUE ("projectId", "name"),
        FOREIGN KEY ("projectId") REFERENCES projects("id") ON DELETE CASCADE)""",
    """CREATE TABLE IF NOT EXISTS acceptance_tests (
        "projectId" TEXT NOT NULL, "uid" TEXT NOT NULL, "humanId" TEXT NOT NULL,
        "requirementUid" TEXT NOT NULL, "requirementId" TEXT NOT NULL, "title" TEXT NOT NULL,
        "given" TEXT NOT NULL, "when" TEXT NOT NULL, "then" TEXT NOT NULL,
        "section" TEXT NOT NULL, "verifiedText" TEXT NOT NULL, "position" BIGINT NOT NULL,
        "createdAt" TEXT NOT NULL, "suspect" BOOLEAN NOT NULL DEFAULT FALSE,
        "suspectReason" TEXT, "confirmedBy" TEXT, "confirmedAt" TEXT,
        PRIMARY KEY ("projectId", "uid"), UNIQUE ("projectId", "humanId"),
        FOREIGN KEY ("projectId") REFERENCES projects("id") ON DELETE CASCADE)""",
    """CREATE TABLE IF NOT EXISTS thread_projects (
        "threadId" TEXT PRIMARY KEY, "projectId" TEXT NOT NULL,
        FOREIGN KEY ("projectId") REFERENCES projects("id") ON DELETE CASCADE)""",
]
WORKSPACE_INDEXES = [
    'CREATE INDEX IF NOT EXISTS projects_owner ON projects ("owner")',
    'CREATE INDEX IF NOT EXISTS items_project ON items ("projectId", "removedIn", "position")',
    "CREATE INDEX IF NOT EXISTS acceptance_tests_requirement ON acceptance_tests "
    '("projectId", "requirementUid")',
    'CREATE INDEX IF NOT EXISTS thread_projects_project ON thread_projects ("projectId")',
]


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


async def prepare_workspace(connection: Any) -> None:
    """Create the workspace's tables and indexes if missing, and put every thread that has no
    project into its user's default project (made for users who have none). Idempotent; run in
    the caller's transaction (which holds the schema lock on PostgreSQL)."""
    for statement in (*WORKSPACE_TABLES, *WORKSPACE_INDEXES):
        await connection.execute(text(statement))
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
