"""The thread's project in the browser: the workspace store of the app's database, the signed-in
user it acts for, and the project chooser of the settings panel (a select of the user's
projects, "default" first). The choice is stored with the thread (`thread_projects`), so a
reopened thread, after a restart too, is in the project it was put in; every operation goes
through `WorkspaceStore`, which refuses a project or thread that is not the caller's."""

from __future__ import annotations

import logging

import chainlit as cl
from chainlit.input_widget import Select

from reqstudio.web.session import runtime, send_notice
from reqstudio.web.texts import Catalog
from reqstudio.web.workspace_buttons import show_action
from reqstudio.workspace.store import Project, WorkspaceError, WorkspaceStore
from reqstudio.workspace.store_schema import DEFAULT_PROJECT

log = logging.getLogger("reqstudio.ui")

PROJECT_ID = "thread_project"
CHOICES_KEY = "project_choices"  # the user's project names and the thread's, for the panel

tr = Catalog("workspace")
refusals = Catalog("acceptance")  # its `refused`: what any refused project operation says
_stores: dict[str, WorkspaceStore] = {}


def workspace_store() -> WorkspaceStore:
    """The store over the app's database (one per database URL: it shares the data pool)."""
    url = runtime().settings.resolved_database_url
    if url not in _stores:
        _stores[url] = WorkspaceStore(url)
    return _stores[url]


def owner() -> str:
    """The signed-in user's identifier (`local` for the one local user)."""
    user = cl.context.session.user
    return user.identifier if user is not None else "local"


def thread_id() -> str:
    return cl.context.session.thread_id


async def thread_project() -> Project:
    return await workspace_store().thread_project(owner(), thread_id())


async def say_refused(what: str, error: WorkspaceError) -> None:
    """The store refused an operation on the thread's project (a thread or project not the
    user's): logged as `what` with why, said to the user in the catalogue's words."""
    log.warning("%s: %s", what, error)
    await cl.Message(content=f"⚠️ {refusals('refused')}").send()


def project_label(project: Project) -> str:
    return tr("project_default") if project.is_default else project.name


async def load_project_choices() -> None:
    """Read the user's projects and the thread's for the panel (its widgets are built without
    awaiting). When the database cannot say, the panel offers the default project only."""
    try:
        projects = await workspace_store().projects(owner())
        current = (await thread_project()).name
    except Exception:
        log.warning("the projects could not be read for the settings panel", exc_info=True)
        projects, current = [], DEFAULT_PROJECT
    names = [p.name for p in projects if not p.is_default]
    cl.user_session.set(CHOICES_KEY, {"names": names, "current": current})


def project_widget() -> Select:
    choices = cl.user_session.get(CHOICES_KEY) or {}
    items = {tr("project_default"): DEFAULT_PROJECT, **{n: n for n in choices.get("names", [])}}
    current = choices.get("current", DEFAULT_PROJECT)
    return Select(
        id=PROJECT_ID,
        label=tr("project"),
        items=items,
        initial_value=current if current in items.values() else DEFAULT_PROJECT,
    )


def current_choice() -> str:
    return (cl.user_session.get(CHOICES_KEY) or {}).get("current", DEFAULT_PROJECT)


async def choose_project(name: str) -> bool:
    """Put the thread in the user's project `name` (the panel offered it); said either way."""
    if name == current_choice():
        return True
    store = workspace_store()
    try:
        project = await store.project(owner(), name)
        await store.set_thread_project(owner(), thread_id(), project)
    except WorkspaceError as error:
        log.warning("thread project refused: %s", error)
        await send_notice(f"⚠️ {tr('project_refused', project=name)}")
        return False
    choices = cl.user_session.get(CHOICES_KEY) or {"names": []}
    cl.user_session.set(CHOICES_KEY, {**choices, "current": project.name})
    # the project's tests and matrix are a button away from here, in any mode
    await send_notice(tr("project_chosen", project=project_label(project)), [show_action()])
    return True
