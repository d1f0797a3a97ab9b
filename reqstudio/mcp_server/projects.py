"""The tools on a user's stored requirements: list the caller's projects, list a project's
items, read one item. They read what `reqstudio items list --json` reads, from the app's
database (the workspace store, `reqstudio.workspace.store`), and only the caller's projects
(`current_user()`: the token's account over HTTP, `local` over stdio, as the commands
without `--user`): another user's project of the same name is never reached, and the store
checks the owner again on every read. Nothing here writes an item."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from pydantic import Field

from reqstudio.workspace.store import Project, WorkspaceError, WorkspaceStore
from reqstudio.workspace.store_schema import DEFAULT_PROJECT

# The kinds a project's items have (acceptance tests are kept apart: `reqstudio tests`).
ItemKind = Literal["functional", "non-functional", "constraint", "heading", "information"]
ProjectName = Annotated[
    str, Field(description="one of your projects (`list_projects`); default: your default one")
]
IDS_NAMED = 20  # the ids an unknown id's error names, so the caller can pick one


def register_project_tools(
    server: FastMCP, store: WorkspaceStore, caller: Callable[[], str]
) -> None:
    async def project_of(name: str) -> Project:
        try:
            return await store.project(caller(), name or DEFAULT_PROJECT)
        except WorkspaceError as error:
            raise ToolError(f"{error} (see list_projects)") from None

    @server.tool(
        name="list_projects",
        description="List your projects (the requirement items stored by `reqstudio import "
        "FILE --project NAME` or the browser): name, whether it is your default project, "
        "created, revision (its import count) and how many current items it holds. Only "
        "the caller's own projects.",
    )
    async def list_projects() -> dict[str, Any]:
        user = caller()
        projects = []
        for project in await store.projects(user):
            items = await store.items(project)
            projects.append({**project.as_dict(), "items": len(items)})
        return {"user": user, "projects": projects}

    @server.tool(
        name="list_items",
        description="List a project's current requirement items, with the ids the project "
        "keeps for them: id, uid, text, section, kind, attributes, links. Answers what "
        "`reqstudio items list --json` prints; `kind` keeps only the items of that kind.",
    )
    async def list_items(
        project: ProjectName = DEFAULT_PROJECT, kind: ItemKind | None = None
    ) -> dict[str, Any]:
        found = await project_of(project)
        items = await store.items(found)
        return {
            "project": found.name,
            "revision": found.revision,
            "items": [item.as_dict() for item in items if kind is None or item.kind == kind],
        }

    @server.tool(
        name="read_item",
        description="Read one requirement item of a project by its id (`FR-01`, as "
        "`list_items` gives it; its uid works too): the item, and the ids of the items whose "
        "links point at it.",
    )
    async def read_item(
        id: Annotated[str, Field(description="the item's id (or uid)")],
        project: ProjectName = DEFAULT_PROJECT,
    ) -> dict[str, Any]:
        found = await project_of(project)
        items = await store.items(found)
        wanted = id.strip()
        item = next((i for i in items if i.id == wanted), None) or next(
            (i for i in items if i.uid == wanted), None
        )
        if item is None:
            known = ", ".join(i.id for i in items[:IDS_NAMED]) or "none"
            more = ", ..." if len(items) > IDS_NAMED else ""
            raise ToolError(
                f"the project {found.name!r} has no item {wanted!r} (its ids: {known}{more})"
            )
        linked_from = [i.id for i in items if any(link.target == item.uid for link in i.links)]
        return {
            "project": found.name,
            "revision": found.revision,
            "item": item.as_dict(),
            "linked_from": linked_from,
        }
