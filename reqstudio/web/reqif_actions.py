"""What a user does with a ReqIF file the browser read (`reqstudio.web.reqif_files`): check
its requirements (the checker of `reqstudio check`, no model), store its items in the thread's
project (as `reqstudio import FILE --project` does: each keeps the id and uid the project gave
it before), and freeze the project as a baseline, which marks suspect the acceptance tests
whose requirement changed (`reqstudio.web.acceptance_view` shows them).

The items read are kept in the session under a key, and the buttons carry only that key: an
upload's path never travels through the browser, and what is stored is what was read, with
its ReqIF uids and attributes. After a reload the session no longer has them: the button says
to attach the file again. Every write goes through `WorkspaceStore` on the thread's project
of the signed-in user (`thread_project`), which refuses a thread or project not theirs."""

from __future__ import annotations

import secrets

import chainlit as cl

from reqstudio.web.projects import (
    owner,
    project_label,
    say_refused,
    thread_project,
    workspace_store,
)
from reqstudio.web.session import button_action
from reqstudio.web.texts import Catalog, counted
from reqstudio.web.workspace_buttons import generate_action, show_action
from reqstudio.workspace.items import ItemSet
from reqstudio.workspace.store import WorkspaceError

IMPORTS_KEY = "reqif_imports"
KEPT = 3  # the latest imports of a session its buttons still reach
CHECK, STORE, FREEZE = "reqif_check", "reqif_store", "project_freeze"

tr = Catalog("workspace")


class _Imports:
    """The session's latest imports. Not JSON: the thread's saved state (the session's values,
    `reqstudio.web.thread_state`) holds it as null, not a copy of every file read."""

    def __init__(self) -> None:
        self.by_key: dict[str, dict] = {}


def keep_import(name: str, item_set: ItemSet, markdown: str) -> str:
    """Keep what was read for the buttons under it; the key they carry."""
    kept = cl.user_session.get(IMPORTS_KEY)
    if not isinstance(kept, _Imports):
        kept = _Imports()
        cl.user_session.set(IMPORTS_KEY, kept)
    key = secrets.token_hex(8)
    kept.by_key[key] = {"name": name, "items": item_set, "markdown": markdown}
    for old in list(kept.by_key)[:-KEPT]:
        del kept.by_key[old]
    return key


def import_actions(key: str, *, check: bool = True) -> list[cl.Action]:
    """The buttons under a ReqIF file's read message (`check`: the mode does not check the
    document itself)."""
    payload = {"import": key}
    actions = [cl.Action(name=STORE, payload=payload, label=tr("reqif_store"), icon="archive")]
    if check:
        actions.insert(
            0, cl.Action(name=CHECK, payload=payload, label=tr("reqif_check"), icon="list-checks")
        )
    return actions


async def _kept(action: cl.Action) -> dict | None:
    key, kept = action.payload.get("import"), cl.user_session.get(IMPORTS_KEY)
    found = kept.by_key.get(key) if isinstance(kept, _Imports) and isinstance(key, str) else None
    if found is None:
        await cl.Message(content=tr("import_gone")).send()
    return found


@button_action(CHECK)
async def check_import(action: cl.Action) -> None:
    from reqstudio.web.requirements_check import show_requirements_check

    if (found := await _kept(action)) is not None:
        await show_requirements_check(found["markdown"])


def project_actions() -> list[cl.Action]:
    """What a project's stored items lead to: its tests and matrix, writing tests, a baseline."""
    return [
        show_action(),
        generate_action(),
        cl.Action(name=FREEZE, payload={}, label=tr("freeze_project"), icon="snowflake"),
    ]


@button_action(STORE)
async def store_import(action: cl.Action) -> None:
    if (found := await _kept(action)) is None:
        return
    item_set: ItemSet = found["items"]
    store = workspace_store()
    try:
        project = await thread_project()  # the signed-in user's thread, or refused
        stored = await store.store_items(project, item_set)
    except WorkspaceError as error:
        await say_refused("ReqIF import not stored", error)
        return
    requirements = sum(1 for i in stored.items if i.kind not in ("heading", "information"))
    content = tr(
        "stored",
        project=project_label(stored.project),
        items=counted(len(stored.items), "item"),
        requirements=counted(requirements, "requirement"),
        **stored.counts(),
    )
    await cl.Message(content=content, actions=project_actions()).send()


@button_action(FREEZE)
async def freeze_project(action: cl.Action) -> None:
    """Freeze the thread's project's current items under a name the user gives."""
    from reqstudio.web.baselines import new_baseline

    store = workspace_store()
    try:
        chosen = await new_baseline()
        if chosen is None:
            return
        name, project = chosen
        baseline = await store.create_baseline(project, name, owner())
    except WorkspaceError as error:
        await say_refused("baseline refused", error)
        return
    requirements = sum(
        1 for i in await store.items(project) if i.kind not in ("heading", "information")
    )
    lines = [
        tr("frozen", baseline=baseline.name, project=project_label(project),
           items=counted(requirements, "requirement")),
    ]  # fmt: skip
    if baseline.suspect_tests:
        tests = ", ".join(baseline.suspect_tests)
        lines.append(tr("suspect_marked", count=len(baseline.suspect_tests), tests=tests))
    await cl.Message(content="\n\n".join(lines), actions=[show_action()]).send()
