"""Projects, items and baselines in the app's database, on SQLite and on PostgreSQL: a re-import
keeps every id and uid, an edited or moved requirement keeps its id, a new one never gets an id
another item had; a baseline stays as frozen; each user has a default project into which the
existing threads move (idempotently); and one user never reaches another's project, items,
baselines or threads."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text

from reqstudio.schema import create_schema
from reqstudio.workspace.diff import diff_items
from reqstudio.workspace.items import items_from_text
from reqstudio.workspace.loading import load_items
from reqstudio.workspace.store import WorkspaceError, WorkspaceStore
from tests.reqif_support import SAMPLES

# A document without ids: every id is assigned (REQ-n, SEC-n), so only the store keeps them.
V1 = """# Library

## 1 Loans

The system shall let a member borrow up to 5 books.

The system shall send a reminder 3 days before a loan ends.

## 2 Accounts

The system shall lock an account after three failed logins.
"""
# A requirement added at the top, one reworded, one moved to another section, one removed.
V2 = """# Library

## 1 Loans

The system shall let a librarian extend a loan once.

The system shall let a member borrow up to 5 books.

The system shall send a reminder e-mail 3 days before a loan ends.

## 2 Accounts

## 3 Security

The system shall lock an account after three failed logins.
"""


@pytest.fixture(params=["sqlite", "postgres"])
async def database_url(request, tmp_path: Path) -> str:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path}/history.db"
    else:
        url = request.getfixturevalue("postgres_url")
    await create_schema(url)  # as the app's start-up: the history's tables and the workspace's
    return url


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[WorkspaceStore]:
    store = WorkspaceStore(database_url)
    yield store
    await store.aclose()


def _ids(items) -> list[tuple[str, str]]:
    return [(item.id, item.text) for item in items]


async def test_a_reimport_keeps_every_id_and_uid(store: WorkspaceStore):
    project = await store.project("alice", "library", create=True)
    first = await store.store_items(project, items_from_text(V1))
    again = await store.store_items(project, items_from_text(V1))
    assert [(i.id, i.uid) for i in again.items] == [(i.id, i.uid) for i in first.items]
    assert again.counts() == {"added": 0, "changed": 0, "unchanged": 5, "removed": 0}
    assert again.project.revision == first.project.revision + 1
    stored = await store.items(project)
    assert [(i.id, i.uid, i.text) for i in stored] == [(i.id, i.uid, i.text) for i in first.items]


async def test_ids_are_never_renumbered_within_a_project(store: WorkspaceStore):
    project = await store.project("alice", "library", create=True)
    first = {i.text: i for i in (await store.store_items(project, items_from_text(V1))).items}
    assert [i.id for i in first.values()] == ["SEC-1", "REQ-1", "REQ-2", "SEC-2", "REQ-3"]
    # read alone, the new document numbers its requirements afresh: REQ-1 is now another one
    assert items_from_text(V2).items[1].id == "REQ-1"
    second = await store.store_items(project, items_from_text(V2))
    by_text = {i.text: i for i in second.items}
    borrow = "The system shall let a member borrow up to 5 books."
    lock = "The system shall lock an account after three failed logins."
    reminder = "The system shall send a reminder e-mail 3 days before a loan ends."
    # the same text keeps its id and uid; so does a reworded one and a moved one
    assert (by_text[borrow].id, by_text[borrow].uid) == (first[borrow].id, first[borrow].uid)
    old_reminder = first["The system shall send a reminder 3 days before a loan ends."]
    assert (by_text[reminder].id, by_text[reminder].uid) == (old_reminder.id, old_reminder.uid)
    assert (by_text[lock].id, by_text[lock].section) == ("REQ-3", ["Library", "3 Security"])
    # the new requirement and the new heading get ids no item of the project ever had
    new = by_text["The system shall let a librarian extend a loan once."]
    assert new.id == "REQ-4" and new.uid not in {i.uid for i in first.values()}
    assert by_text["3 Security"].id == "SEC-3"
    assert second.counts() == {"added": 2, "changed": 2, "unchanged": 3, "removed": 0}
    # a removed requirement's id stays taken: the next new one does not get it
    third_text = V2.replace(borrow + "\n\n", "") + "\nThe system shall print receipts.\n"
    third = await store.store_items(project, items_from_text(third_text))
    assert third.counts()["removed"] == 1
    printed = next(i for i in third.items if "receipts" in i.text)
    assert printed.id == "REQ-5"
    # and the removed one, back again, is itself again
    fourth = await store.store_items(project, items_from_text(V2))
    assert next(i for i in fourth.items if i.text == borrow).id == first[borrow].id


async def test_document_ids_and_reqif_uids_are_kept(store: WorkspaceStore):
    project = await store.project("alice", "srs", create=True)
    text_v1 = "# S\n\n## F\n\n- FR-01 The system shall log in users.\n- FR-02 The system shall log out users.\n"
    first = await store.store_items(project, items_from_text(text_v1))
    # the document renumbers nothing but rewords FR-02: matched by its written id
    reworded = text_v1.replace("log out users", "sign out a user on request")
    second = await store.store_items(project, items_from_text(reworded))
    assert [(i.id, i.uid) for i in second.items] == [(i.id, i.uid) for i in first.items]
    sample = next(path for path in SAMPLES if path.name == "eclipse-rmf.reqif")
    read = load_items(sample)
    reqif = await store.project("alice", "rmf", create=True)
    stored = await store.store_items(reqif, read)
    assert [i.uid for i in stored.items] == [i.uid for i in read.items]
    assert [i.id for i in stored.items] == [i.id for i in read.items]


async def test_a_baseline_is_frozen_and_its_diff_marks_meaning(store: WorkspaceStore):
    project = await store.project("alice", "shop", create=True)
    old = "# Shop\n\n## F\n\n- FR-01 The system shall send a receipt within 2 s.\n- FR-02 The operator shall approve each refund.\n"
    await store.store_items(project, items_from_text(old))
    baseline = await store.create_baseline(project, "v1", "alice")
    assert (baseline.name, baseline.count) == ("v1", 3)
    new = old.replace("2 s", "5 s").replace("operator", "manager")
    await store.store_items(project, items_from_text(new))
    frozen = await store.baseline_items(project, "v1")
    assert [i.text for i in frozen.items][1] == "The system shall send a receipt within 2 s."
    result = diff_items(frozen, items_from_text(new))
    marks = {change.id: [m.kind for m in change.meaning] for change in result.changes}
    assert marks == {"FR-01": ["quantity"], "FR-02": ["actor"]}
    with pytest.raises(WorkspaceError, match="baseline 'v1' already"):
        await store.create_baseline(project, "v1", "alice")
    assert [b.name for b in await store.baselines(project)] == ["v1"]
    with pytest.raises(WorkspaceError, match="no baseline 'v9'"):
        await store.baseline_items(project, "v9")


async def test_a_user_never_reaches_another_users_project(store: WorkspaceStore):
    alice = await store.project("alice", "secret", create=True)
    await store.store_items(alice, items_from_text("# S\n\n- FR-01 The system shall hide X.\n"))
    await store.create_baseline(alice, "v1", "alice")
    # by name: bob has no project "secret" (his own namespace)
    with pytest.raises(WorkspaceError, match="bob has no project 'secret'"):
        await store.project("bob", "secret")
    # by id: alice's project is "no such project" to bob
    with pytest.raises(WorkspaceError):
        await store.project_by_id("bob", alice.id)
    forged = type(alice)(alice.id, "bob", alice.name, alice.created_at, False, 0)
    for attempt in (
        store.items(forged),
        store.baselines(forged),
        store.baseline_items(forged, "v1"),
        store.create_baseline(forged, "stolen", "bob"),
        store.store_items(forged, items_from_text("# S\n\n- FR-01 Overwritten.\n")),
    ):
        with pytest.raises(WorkspaceError):
            await attempt
    # bob's project of the same name is his own, empty
    his = await store.project("bob", "secret", create=True)
    assert his.id != alice.id and await store.items(his) == []
    assert [i.text for i in await store.items(alice)] == ["The system shall hide X."]
    assert [b.name for b in await store.baselines(alice)] == ["v1"]
    assert [p.name for p in await store.projects("bob")] == ["default", "secret"]


async def _add_thread(store: WorkspaceStore, user: str) -> str:
    thread = str(uuid.uuid4())
    async with store.engine.begin() as connection:
        user_id = (
            await connection.execute(
                text('SELECT "id" FROM users WHERE "identifier" = :i'), {"i": user}
            )
        ).scalar()
        if user_id is None:
            user_id = str(uuid.uuid4())
            await connection.execute(
                text('INSERT INTO users ("id", "identifier", "metadata", "createdAt") '
                     "VALUES (:id, :i, '{}', '2026-01-01')"),
                {"id": user_id, "i": user},
            )  # fmt: skip
        await connection.execute(
            text('INSERT INTO threads ("id", "createdAt", "name", "userId", "userIdentifier") '
                 "VALUES (:id, '2026-01-01', 'old', :u, :i)"),
            {"id": thread, "u": user_id, "i": user},
        )  # fmt: skip
    return thread


async def test_existing_threads_move_into_their_users_default_project(
    store: WorkspaceStore, database_url: str
):
    threads = {user: await _add_thread(store, user) for user in ("alice", "bob")}
    await create_schema(database_url)  # the next start-up moves them
    await create_schema(database_url)  # and the one after changes nothing
    async with store.engine.connect() as connection:
        rows = (
            await connection.execute(
                text('SELECT p."owner", p."name", m."threadId" FROM thread_projects m '
                     'JOIN projects p ON p."id" = m."projectId" ORDER BY p."owner"')
            )
        ).all()  # fmt: skip
        counts = (
            await connection.execute(
                text('SELECT "owner", COUNT(*) FROM projects GROUP BY "owner"')
            )
        ).all()
    assert [tuple(r) for r in rows] == [
        ("alice", "default", threads["alice"]),
        ("bob", "default", threads["bob"]),
    ]
    assert sorted(tuple(c) for c in counts) == [("alice", 1), ("bob", 1)]
    assert (await store.thread_project("alice", threads["alice"])).name == "default"


async def test_a_thread_belongs_to_one_project_of_its_own_user(store: WorkspaceStore):
    alices = await _add_thread(store, "alice")
    bobs = await _add_thread(store, "bob")
    work = await store.project("alice", "work", create=True)
    await store.set_thread_project("alice", alices, work)
    assert (await store.thread_project("alice", alices)).id == work.id
    other = await store.project("alice", "other", create=True)
    await store.set_thread_project("alice", alices, other)  # moved, not in two projects
    assert (await store.thread_project("alice", alices)).id == other.id
    with pytest.raises(WorkspaceError):  # bob cannot move alice's thread
        await store.set_thread_project("bob", alices, await store.default_project("bob"))
    with pytest.raises(WorkspaceError):  # nor read which project it is in
        await store.thread_project("bob", alices)
    with pytest.raises(WorkspaceError):  # nor put his thread into her project
        await store.set_thread_project("bob", bobs, work)
    assert (await store.thread_project("alice", alices)).id == other.id
    assert (await store.thread_project("bob", bobs)).name == "default"


async def test_freezing_a_threads_document_stores_it_in_the_threads_project(
    store: WorkspaceStore,
):
    from reqstudio.workspace.freeze import freeze_document

    thread = await _add_thread(store, "alice")
    work = await store.project("alice", "work", create=True)
    await store.set_thread_project("alice", thread, work)
    srs = "# SRS\n\n## F\n\n- FR-01 The system shall answer within 2 s.\n"
    frozen = await freeze_document(store, "alice", thread, srs, "generated")
    assert (frozen.project.id, frozen.baseline.name, frozen.baseline.count) == (
        work.id,
        "generated",
        2,
    )
    reviewed = srs.replace("2 s", "1 s")
    await freeze_document(store, "alice", thread, reviewed, "reviewed")
    result = diff_items(
        await store.baseline_items(work, "generated"), await store.baseline_items(work, "reviewed")
    )
    assert [(c.id, c.matched_by, [m.kind for m in c.meaning]) for c in result.changes] == [
        ("FR-01", "id", ["quantity"])
    ]
    with pytest.raises(WorkspaceError, match="already"):  # refused before anything is stored
        await freeze_document(store, "alice", thread, srs + "- FR-02 New.\n", "reviewed")
    assert len(await store.items(work)) == 2
    with pytest.raises(WorkspaceError):  # bob cannot freeze into alice's thread's project
        await freeze_document(store, "bob", thread, srs, "stolen")
    assert [b.name for b in await store.baselines(work)] == ["generated", "reviewed"]


async def test_imports_at_once_into_one_project_each_get_a_revision(database_url: str):
    import asyncio

    stores = [WorkspaceStore(database_url) for _ in range(3)]
    try:
        project = await stores[0].project("alice", "busy", create=True)
        results = await asyncio.gather(
            *(s.store_items(project, items_from_text(V1)) for s in stores)
        )
        assert sorted(r.project.revision for r in results) == [1, 2, 3]
        assert len({tuple((i.id, i.uid) for i in r.items) for r in results}) == 1
        assert len(await stores[0].items(project)) == 5
    finally:
        for s in stores:
            await s.aclose()
