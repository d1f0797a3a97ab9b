"""`reqstudio mcp`'s tools on stored projects (`list_projects`, `list_items`, `read_item`)
through the SDK's own client: over stdio they read the local user's projects (the ones
`reqstudio import --project` stores without `--user`), over HTTP the token's user's only; a
second user's token never reaches the first user's project, even by its name, and an
unknown project or id is a tool error that says what there is. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli_support import REQSTUDIO
from tests.mcp_support import (
    add_user,
    answer,
    create_token,
    env_for,
    error_text,
    http_server,
    http_session,
    stdio_session,
)

PROJECT_TOOLS = {"list_projects", "list_items", "read_item"}
LIFT = """# Lift SRS

## Doors

- LF-01: The lift shall open its doors within 2 seconds.
- LF-02: The lift shall close its doors after 5 seconds, as LF-01 allows.

## Safety

- LF-03: The lift shall stop at the nearest floor when its power fails.
"""
BOBS = "# Bob's lift\n\n- BL-01: The lift shall ring a bell at every floor.\n"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    env = env_for("", tmp_path)
    del env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"]  # these tools need no model
    return env


def reqstudio(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([*REQSTUDIO, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


def store(env: dict[str, str], cwd: Path, text: str, project: str, *user: str) -> None:
    (cwd / "doc.md").write_text(text, encoding="utf-8")
    reqstudio(env, cwd, "import", "doc.md", "--project", project, *user)


def items_json(env: dict[str, str], cwd: Path, project: str, *user: str) -> dict:
    listed = reqstudio(env, cwd, "items", "list", "--project", project, "--json", *user)
    return json.loads(listed.stdout)


def names(listed: dict) -> list[str]:
    return [p["name"] for p in listed["projects"]]


async def test_stdio_reads_the_local_users_projects_as_the_command_does(env, tmp_path):
    store(env, tmp_path, LIFT, "lift")
    command = items_json(env, tmp_path, "lift")
    async with stdio_session(env, tmp_path) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        projects = answer(await session.call_tool("list_projects", {}))
        items = answer(await session.call_tool("list_items", {"project": "lift"}))
        headings = answer(await session.call_tool(
            "list_items", {"project": "lift", "kind": "heading"}))  # fmt: skip
        read = answer(await session.call_tool("read_item", {"project": "lift", "id": "LF-01"}))
        by_uid = answer(await session.call_tool(
            "read_item", {"project": "lift", "id": read["item"]["uid"]}))  # fmt: skip
        unknown = await session.call_tool("read_item", {"project": "lift", "id": "LF-99"})
        no_project = await session.call_tool("list_items", {"project": "elevator"})
        bad_kind = await session.call_tool("list_items", {"project": "lift", "kind": "wish"})
        default = answer(await session.call_tool("list_items", {}))
    assert tools >= PROJECT_TOOLS
    assert projects["user"] == "local"
    assert names(projects) == ["default", "lift"]
    lift = projects["projects"][1]
    assert lift["items"] == len(command["items"]) and lift["revision"] == 1
    assert lift["default"] is False and projects["projects"][0]["default"] is True
    assert items == command  # the same keys and values as `reqstudio items list --json`
    assert {i["kind"] for i in headings["items"]} == {"heading"} and headings["items"]
    assert read["item"] == next(i for i in command["items"] if i["id"] == "LF-01")
    assert read["linked_from"] == ["LF-02"]  # LF-02 names LF-01
    assert by_uid["item"] == read["item"]
    said = error_text(unknown)
    assert "the project 'lift' has no item 'LF-99'" in said and "LF-01" in said
    assert "local has no project 'elevator'" in error_text(no_project)
    assert "wish" in error_text(bad_kind)
    assert default == {"project": "default", "revision": 0, "items": []}


async def test_http_shows_each_token_only_its_users_projects(env, tmp_path):
    for user in ("alice", "bob"):
        add_user(env, tmp_path, user)
    store(env, tmp_path, LIFT, "lift", "--user", "alice")
    store(env, tmp_path, LIFT, "secret", "--user", "alice")
    store(env, tmp_path, BOBS, "lift", "--user", "bob")  # bob's own project of the same name
    store(env, tmp_path, LIFT, "lift")  # and the local user's, which HTTP serves to no one
    _, alices = create_token(env, tmp_path, "alice")
    _, bobs = create_token(env, tmp_path, "bob")
    alice_items = items_json(env, tmp_path, "lift", "--user", "alice")
    with http_server(env, tmp_path) as server:
        async with http_session(server.url, alices) as session:
            tools = {tool.name for tool in (await session.list_tools()).tools}
            a_projects = answer(await session.call_tool("list_projects", {}))
            a_items = answer(await session.call_tool("list_items", {"project": "lift"}))
            a_read = answer(await session.call_tool(
                "read_item", {"project": "lift", "id": "LF-03"}))  # fmt: skip
        async with http_session(server.url, bobs) as session:
            b_projects = answer(await session.call_tool("list_projects", {}))
            b_items = answer(await session.call_tool("list_items", {"project": "lift"}))
            b_secret = await session.call_tool("list_items", {"project": "secret"})
            b_read = await session.call_tool("read_item", {"project": "lift", "id": "LF-03"})
            b_read_secret = await session.call_tool(
                "read_item", {"project": "secret", "id": "LF-03"}
            )
    assert tools >= PROJECT_TOOLS
    assert a_projects["user"] == "alice" and names(a_projects) == ["default", "lift", "secret"]
    assert a_items == alice_items
    assert (
        a_read["item"]["text"] == "The lift shall stop at the nearest floor when its power fails."
    )
    assert b_projects["user"] == "bob" and names(b_projects) == ["default", "lift"]
    assert [i["id"] for i in b_items["items"] if i["kind"] == "functional"] == ["BL-01"]
    assert "LF-01" not in json.dumps(b_items)
    assert "bob has no project 'secret'" in error_text(b_secret)
    assert "has no item 'LF-03'" in error_text(b_read) and "BL-01" in error_text(b_read)
    assert "bob has no project 'secret'" in error_text(b_read_secret)
    assert "power fails" not in error_text(b_read_secret)


async def test_http_reads_the_tokens_users_project_on_postgresql(env, tmp_path, postgres_url):
    env = {**env, "REQSTUDIO_DATABASE_URL": postgres_url}
    add_user(env, tmp_path, "carol")
    store(env, tmp_path, LIFT, "lift", "--user", "carol")
    _, token = create_token(env, tmp_path, "carol")
    with http_server(env, tmp_path) as server:
        async with http_session(server.url, token) as session:
            projects = answer(await session.call_tool("list_projects", {}))
            read = answer(await session.call_tool("read_item", {"project": "lift", "id": "LF-02"}))
    assert names(projects) == ["default", "lift"]
    assert read["item"]["links"][0]["target_id"] == "LF-01"
