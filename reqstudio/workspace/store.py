"""A user's projects, their requirement items and baselines, in the app's database.

Every operation is a user's: a project is found by its owner and its name (or its id, and then
only if the owner is the caller), so one user never reads or writes another's project, items,
baselines or threads. The tables: `reqstudio.schema`; what they mean:
`reqstudio.workspace.store_schema`.
Nothing here imports Chainlit: the CLI and the app share it.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from reqstudio.pools import OnDataEngine, first_row
from reqstudio.schema import prepare_schema
from reqstudio.workspace.items import Item, ItemSet, Link
from reqstudio.workspace.store_schema import (
    DEFAULT_PROJECT,
    INSERT_PROJECT,
    new_project_row,
    now,
)

MAX_NAME = 100


class WorkspaceError(ValueError):
    """A refused workspace operation (no such project or baseline, a name taken): one line."""


def check_name(name: str, what: str = "a project name") -> str:
    name = name.strip()
    if not name or len(name) > MAX_NAME or not name.isprintable():
        raise WorkspaceError(f"{what} is 1 to {MAX_NAME} printable characters")
    return name


@dataclass(frozen=True)
class Project:
    id: str
    owner: str
    name: str
    created_at: str
    is_default: bool
    revision: int

    @classmethod
    def from_row(cls, row: Any) -> Project:
        return cls(row.id, row.owner, row.name, row.createdAt, bool(row.isDefault),
                   int(row.revision))  # fmt: skip

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "default": self.is_default, "created": self.created_at,
                "revision": self.revision}  # fmt: skip


@dataclass(frozen=True)
class Baseline:
    name: str
    created_at: str
    created_by: str
    revision: int
    count: int
    # the acceptance tests its freezing marked suspect (their requirement changed or is gone)
    suspect_tests: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "created": self.created_at, "created_by": self.created_by,
                "revision": self.revision, "items": self.count}  # fmt: skip


@dataclass(frozen=True)
class Stored:
    """What an import did to a project: its revision now, and how many items it added,
    changed, left unchanged and removed."""

    project: Project
    items: list[Item]
    added: int
    changed: int
    unchanged: int
    removed: int

    def counts(self) -> dict[str, int]:
        return {"added": self.added, "changed": self.changed, "unchanged": self.unchanged,
                "removed": self.removed}  # fmt: skip


def item_record(item: Item) -> dict[str, object]:
    """An item as frozen in a baseline (its datatypes kept for a ReqIF export)."""
    return {**item.as_dict(), "datatypes": dict(item.datatypes)}


def item_from_record(record: dict[str, Any]) -> Item:
    return Item(
        record["id"],
        record["uid"],
        record["text"],
        list(record["section"]),
        record["kind"],
        dict(record.get("attributes") or {}),
        [Link(link["type"], link["target"], link["target_id"]) for link in record["links"]],
        True,  # a project's ids are identities: matched by id in a diff
        dict(record.get("datatypes") or {}),
    )


_PROJECT_COLUMNS = '"id", "owner", "name", "createdAt", "isDefault", "revision"'
_ITEM_COLUMNS = (
    '"humanId", "uid", "text", "section", "kind", "attributes", "links", "datatypes", '
    '"version", "removedIn"'
)


def _item_from_row(row: Any) -> Item:
    return item_from_record({
        "id": row.humanId, "uid": row.uid, "text": row.text,
        "section": json.loads(row.section), "kind": row.kind,
        "attributes": json.loads(row.attributes), "links": json.loads(row.links),
        "datatypes": json.loads(row.datatypes),
    })  # fmt: skip


def _same(a: Item, b: Item) -> bool:
    return item_record(a) == item_record(b)


class WorkspaceStore(OnDataEngine):
    """Projects, items and baselines through the app database's engine."""

    def __init__(self, database_url: str):
        self.database_url = database_url
        self._prepared = False

    async def aclose(self) -> None:
        await self.dispose_engine()

    async def prepare(self) -> None:
        """The database's tables (`reqstudio.schema`, the workspace's among them), once."""
        if self._prepared:
            return
        async with self.engine.begin() as connection:
            await prepare_schema(connection)
        self._prepared = True

    async def has_account(self, identifier: str) -> bool:
        """Whether `identifier` is an account of the app (`reqstudio users list`)."""
        async with self.engine.connect() as connection:
            if not await connection.run_sync(lambda sync: inspect(sync).has_table("accounts")):
                return False
            row = await first_row(
                connection, 'SELECT 1 FROM accounts WHERE "identifier" = :i', {"i": identifier}
            )
        return row is not None

    # --- projects ----------------------------------------------------------------------

    async def _find(self, connection: Any, owner: str, name: str) -> Project | None:
        row = await first_row(
            connection,
            f'SELECT {_PROJECT_COLUMNS} FROM projects WHERE "owner" = :owner AND "name" = :name',
            {"owner": owner, "name": name},
        )
        return Project.from_row(row) if row else None

    async def project(self, owner: str, name: str, *, create: bool = False) -> Project:
        """The owner's project called `name` (made when `create`, or when it is the default)."""
        await self.prepare()
        name = check_name(name)
        async with self.engine.connect() as connection:
            found = await self._find(connection, owner, name)
        if found is not None:
            return found
        if not (create or name == DEFAULT_PROJECT):
            raise WorkspaceError(f"{owner} has no project {name!r}")
        try:
            async with self.engine.begin() as connection:
                await connection.execute(text(INSERT_PROJECT), new_project_row(owner, name))
        except IntegrityError:
            pass  # made meanwhile by another command or instance: that one is it
        async with self.engine.connect() as connection:
            found = await self._find(connection, owner, name)
        assert found is not None
        return found

    async def default_project(self, owner: str) -> Project:
        return await self.project(owner, DEFAULT_PROJECT)

    async def project_by_id(self, owner: str, project_id: str) -> Project:
        """The project `project_id` if `owner` owns it; another's is "no such project"."""
        await self.prepare()
        async with self.engine.connect() as connection:
            row = await first_row(
                connection,
                f'SELECT {_PROJECT_COLUMNS} FROM projects WHERE "id" = :id AND "owner" = :owner',
                {"id": project_id, "owner": owner},
            )
        if row is None:
            raise WorkspaceError(f"{owner} has no project {project_id!r}")
        return Project.from_row(row)

    async def projects(self, owner: str) -> list[Project]:
        await self.default_project(owner)
        async with self.engine.connect() as connection:
            rows = await connection.execute(
                text(f"SELECT {_PROJECT_COLUMNS} FROM projects WHERE "
                     '"owner" = :owner ORDER BY "isDefault" DESC, "name"'),
                {"owner": owner},
            )  # fmt: skip
            return [Project.from_row(row) for row in rows]

    async def _owned(self, project: Project) -> Project:
        """The project as stored now, if it is still its owner's (every operation asks)."""
        return await self.project_by_id(project.owner, project.id)

    # --- items -------------------------------------------------------------------------

    async def _rows(self, connection: Any, project: Project) -> tuple[list[Item], list[Item]]:
        rows = await connection.execute(
            text(f'SELECT {_ITEM_COLUMNS} FROM items WHERE "projectId" = :p ORDER BY "position"'),
            {"p": project.id},
        )
        current, removed = [], []
        for row in rows:
            (removed if row.removedIn is not None else current).append(_item_from_row(row))
        return current, removed

    async def items(self, project: Project) -> list[Item]:
        """The project's current items, in the order of their last import."""
        project = await self._owned(project)
        async with self.engine.connect() as connection:
            return (await self._rows(connection, project))[0]

    async def store_items(self, project: Project, item_set: ItemSet) -> Stored:
        """Make `item_set` the project's current items: each keeps the id and uid of the item
        it continues (`reqstudio.workspace.stable_ids`); the items it no longer has are
        marked removed (their ids stay taken). One transaction, one new revision."""
        from reqstudio.workspace.stable_ids import keep_ids

        project = await self._owned(project)
        async with self.engine.begin() as connection:
            # the revision first: a second import into the project waits here for this one
            await connection.execute(
                text('UPDATE projects SET "revision" = "revision" + 1 WHERE "id" = :id'),
                {"id": project.id},
            )
            project = await self._find(connection, project.owner, project.name)
            revision = project.revision
            current, removed = await self._rows(connection, project)
            kept = keep_ids(project.id, current, removed, item_set.items)
            current_uids = {item.uid for item in current}
            counts = {"added": 0, "changed": 0, "unchanged": 0}
            for position, entry in enumerate(kept):
                before, item = entry.before, entry.item
                if before is not None and before.uid in current_uids and _same(before, item):
                    counts["unchanged"] += 1
                    changed = False
                else:
                    restored = before is None or before.uid not in current_uids
                    counts["added" if restored else "changed"] += 1
                    changed = True
                await self._write_item(connection, project.id, item, position,
                                       revision if changed else None)  # fmt: skip
            gone = current_uids - {entry.item.uid for entry in kept}
            for uid in gone:
                await connection.execute(
                    text('UPDATE items SET "removedIn" = :r WHERE "projectId" = :p AND "uid" = :u'),
                    {"r": revision, "p": project.id, "u": uid},
                )
        return Stored(project, [entry.item for entry in kept], counts["added"],
                      counts["changed"], counts["unchanged"], len(gone))  # fmt: skip

    async def _write_item(
        self, connection: Any, project_id: str, item: Item, position: int, version: int | None
    ) -> None:
        values = {
            "p": project_id, "uid": item.uid, "id": item.id, "text": item.text,
            "section": json.dumps(item.section, ensure_ascii=False), "kind": item.kind,
            "attributes": json.dumps(item.attributes, ensure_ascii=False),
            "links": json.dumps([link.as_dict() for link in item.links], ensure_ascii=False),
            "datatypes": json.dumps(item.datatypes, ensure_ascii=False),
            "position": position, "version": version or 0,
        }  # fmt: skip
        updated = await connection.execute(
            text(
                'UPDATE items SET "humanId" = :id, "text" = :text, "section" = :section, '
                '"kind" = :kind, "attributes" = :attributes, "links" = :links, '
                '"datatypes" = :datatypes, "position" = :position, "removedIn" = NULL'
                + (', "version" = :version' if version is not None else "")
                + ' WHERE "projectId" = :p AND "uid" = :uid'
            ),
            values,
        )
        if updated.rowcount == 0:
            await connection.execute(
                text(
                    'INSERT INTO items ("projectId", "uid", "humanId", "text", "section", '
                    '"kind", "attributes", "links", "datatypes", "idKept", "position", '
                    '"version", "removedIn") VALUES (:p, :uid, :id, :text, :section, :kind, '
                    ":attributes, :links, :datatypes, TRUE, :position, :version, NULL)"
                ),
                values,
            )

    # --- baselines ---------------------------------------------------------------------

    async def create_baseline(self, project: Project, name: str, created_by: str) -> Baseline:
        """Freeze the project's current items as the baseline `name` (a name is used once),
        and mark suspect the acceptance tests whose requirement it holds changed or not at all
        (`reqstudio.workspace.acceptance_marks`), in the same transaction."""
        from reqstudio.workspace.acceptance_marks import mark_suspects

        name = check_name(name, "a baseline name")
        project = await self._owned(project)
        async with self.engine.connect() as connection:
            items = (await self._rows(connection, project))[0]
        created = now()
        try:
            async with self.engine.begin() as connection:
                await connection.execute(
                    text(
                        'INSERT INTO baselines ("id", "projectId", "name", "createdAt", '
                        '"createdBy", "revision", "items") VALUES (:id, :p, :name, :created, '
                        ":by, :revision, :items)"
                    ),
                    {
                        "id": str(uuid.uuid4()), "p": project.id, "name": name,
                        "created": created, "by": created_by, "revision": project.revision,
                        "items": json.dumps([item_record(i) for i in items], ensure_ascii=False),
                    },
                )  # fmt: skip
                suspect = await mark_suspects(connection, project.id, name, items)
        except IntegrityError:
            raise WorkspaceError(
                f"the project {project.name!r} has a baseline {name!r} already (a baseline "
                "is frozen: choose another name)"
            ) from None
        return Baseline(name, created, created_by, project.revision, len(items), tuple(suspect))

    async def baselines(self, project: Project) -> list[Baseline]:
        project = await self._owned(project)
        async with self.engine.connect() as connection:
            rows = await connection.execute(
                text('SELECT "name", "createdAt", "createdBy", "revision", "items" FROM '
                     'baselines WHERE "projectId" = :p ORDER BY "createdAt", "name"'),
                {"p": project.id},
            )  # fmt: skip
            return [
                Baseline(
                    row.name,
                    row.createdAt,
                    row.createdBy,
                    int(row.revision),
                    len(json.loads(row.items)),
                )
                for row in rows
            ]

    async def baseline_items(self, project: Project, name: str) -> ItemSet:
        """The items frozen in the project's baseline `name`."""
        project = await self._owned(project)
        async with self.engine.connect() as connection:
            row = await first_row(
                connection,
                'SELECT "items" FROM baselines WHERE "projectId" = :p AND "name" = :n',
                {"p": project.id, "n": name},
            )
        if row is None:
            raise WorkspaceError(f"the project {project.name!r} has no baseline {name!r}")
        items = [item_from_record(record) for record in json.loads(row.items)]
        return ItemSet(items, [], f"{project.name} @ {name}")

    # --- threads -----------------------------------------------------------------------

    async def _thread_owner(self, connection: Any, thread_id: str) -> str | None:
        row = await first_row(
            connection, 'SELECT "userIdentifier" FROM threads WHERE "id" = :id', {"id": thread_id}
        )
        return row[0] if row else None

    async def thread_project(self, owner: str, thread_id: str) -> Project:
        """The project of the owner's thread (its default project until one is chosen)."""
        await self.prepare()
        async with self.engine.connect() as connection:
            if await self._thread_owner(connection, thread_id) not in (owner, None):
                raise WorkspaceError(f"{owner} has no thread {thread_id!r}")
            row = await first_row(
                connection,
                'SELECT "projectId" FROM thread_projects WHERE "threadId" = :t',
                {"t": thread_id},
            )
        if row is None:
            return await self.default_project(owner)
        return await self.project_by_id(owner, row[0])

    async def set_thread_project(self, owner: str, thread_id: str, project: Project) -> None:
        """Put the owner's thread in the owner's project (a thread belongs to one project)."""
        project = await self.project_by_id(owner, project.id)
        async with self.engine.begin() as connection:
            if await self._thread_owner(connection, thread_id) not in (owner, None):
                raise WorkspaceError(f"{owner} has no thread {thread_id!r}")
            moved = await connection.execute(
                text('UPDATE thread_projects SET "projectId" = :p WHERE "threadId" = :t'),
                {"p": project.id, "t": thread_id},
            )
            if moved.rowcount == 0:
                await connection.execute(
                    text('INSERT INTO thread_projects ("threadId", "projectId") VALUES (:t, :p)'),
                    {"p": project.id, "t": thread_id},
                )
