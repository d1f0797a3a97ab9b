"""Freeze a document a thread produced as a baseline of the thread's project: what a "freeze as
baseline" button in the browser does, without Chainlit (the web layer passes the signed-in
user, the thread and the document's text).

The document's items become the project's current items (each keeping the id the project
gave it before, `reqstudio.workspace.stable_ids`), then are frozen under `name`. The thread
must be the user's, and its project is the user's (`WorkspaceStore.thread_project`)."""

from __future__ import annotations

from dataclasses import dataclass

from reqstudio.workspace.items import items_from_text
from reqstudio.workspace.store import Baseline, Project, Stored, WorkspaceStore


@dataclass(frozen=True)
class Frozen:
    project: Project
    stored: Stored
    baseline: Baseline


async def freeze_document(
    store: WorkspaceStore, owner: str, thread_id: str, document: str, name: str, title: str = ""
) -> Frozen:
    """Store `document`'s items in the project of the owner's thread and freeze them as the
    baseline `name` (refused, and nothing stored, when the project has that baseline)."""
    from reqstudio.workspace.store import WorkspaceError, check_name

    name = check_name(name, "a baseline name")
    project = await store.thread_project(owner, thread_id)
    if any(b.name == name for b in await store.baselines(project)):
        raise WorkspaceError(f"the project {project.name!r} has a baseline {name!r} already")
    stored = await store.store_items(project, items_from_text(document, title))
    baseline = await store.create_baseline(stored.project, name, owner)
    return Frozen(stored.project, stored, baseline)
