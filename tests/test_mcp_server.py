"""`reqstudio mcp` through the SDK's own client, over stdio and over streamable HTTP: the tools a
client lists and calls, the per-user tokens over HTTP (none, revoked, a disabled user's: refused),
an SRS generation with its progress notifications, and a provider that answers garbage."""

from __future__ import annotations

import base64
import contextlib
import json
import sqlite3
import subprocess
from pathlib import Path

import anyio
import pytest

from reqstudio.mcp_tokens import token_hash
from tests import test_srs_support as srs
from tests.cli_support import REQSTUDIO
from tests.mcp_support import (
    add_user,
    answer,
    client_refusal,
    create_token,
    env_for,
    error_text,
    http_server,
    http_session,
    refused_without_session,
    status_in_session,
    stdio_session,
    token_command,
)
from tests.scripted_server import Reply

DATA = Path(__file__).resolve().parent / "data"
EARS = DATA / "check" / "ears-en.md"
DOORS = DATA / "reqif" / "samples" / "doors-user-02.reqif"
DOCUMENT_TOOLS = {"check_requirements", "import_requirements", "export_reqif", "diff_requirements"}
MODEL_TOOLS = {"generate_srs", "review_document", "rewrite_document"}
PROJECT_TOOLS = {"list_projects", "list_items", "read_item"}  # tests/test_mcp_projects.py
OLD = "# Lift\n\n## Doors\n\n- LF-01: The lift shall open its doors within 2 seconds.\n"
NEW = "# Lift\n\n## Doors\n\n- LF-01: The lift may open its doors within 5 seconds.\n"


def cli_json(env: dict[str, str], cwd: Path, *args: str) -> dict:
    done = subprocess.run(
        [*REQSTUDIO, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode in (0, 4), done.stderr
    return json.loads(done.stdout)


def without_paths(data: dict) -> dict:
    return {key: value for key, value in data.items() if key not in ("file", "old", "new")}


def comparable(items: list[dict]) -> list[dict]:
    return [{k: item[k] for k in ("id", "uid", "text", "section", "kind", "attributes", "links")}
            for item in items]  # fmt: skip


@pytest.fixture
def env(llm_server, tmp_path: Path) -> dict[str, str]:
    return env_for(llm_server.base_url, tmp_path, OPENAI_TIMEOUT="10",
                   REQSTUDIO_RETRY_BACKOFF_SCALE="0.01")  # fmt: skip


# --- stdio --------------------------------------------------------------------------------


async def test_stdio_lists_the_tools_and_checks_a_document_as_the_command_does(env, tmp_path):
    async with stdio_session(env, tmp_path) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        checked = answer(await session.call_tool("check_requirements", {
            "document": {"name": "ears-en.md", "text": EARS.read_text(encoding="utf-8")}}))  # fmt: skip
        by_path = answer(await session.call_tool(
            "check_requirements", {"document": {"path": str(EARS)}}))  # fmt: skip
    assert tools == DOCUMENT_TOOLS | PROJECT_TOOLS | MODEL_TOOLS
    command = cli_json(env, tmp_path, "check", str(EARS), "--json")
    assert checked["summary"]["requirements"] > 20
    for result in (checked, by_path):
        assert without_paths(result) | {"text": ""} == without_paths(command) | {"text": ""}
    assert checked["file"] == by_path["file"] == "ears-en.md"


async def test_stdio_without_a_provider_offers_only_the_tools_that_need_no_model(tmp_path):
    env = env_for("", tmp_path)
    del env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"]
    async with stdio_session(env, tmp_path) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
    assert tools == DOCUMENT_TOOLS | PROJECT_TOOLS
    assert "not offered" in (tmp_path / "server-stderr.txt").read_text()


async def test_stdio_reqif_round_trip_keeps_every_item(env, tmp_path):
    async with stdio_session(env, tmp_path) as session:
        imported = answer(await session.call_tool(
            "import_requirements", {"document": {"path": str(DOORS)}}))  # fmt: skip
        exported = answer(await session.call_tool(
            "export_reqif", {"document": {"path": str(DOORS)}, "format": "reqif"}))  # fmt: skip
        again = answer(await session.call_tool("import_requirements", {
            "document": {"name": "again.reqif", "text": exported["text"]}}))  # fmt: skip
    assert imported == {**cli_json(env, tmp_path, "import", str(DOORS), "--json"),
                        "complete": imported["complete"]}  # fmt: skip
    assert len(imported["items"]) == exported["items"] > 0
    assert comparable(again["items"]) == comparable(imported["items"])
    (tmp_path / "out.reqif").write_text(exported["text"], encoding="utf-8")
    from tests.reqif_support import schema_errors

    assert schema_errors(tmp_path / "out.reqif") == []


async def test_stdio_diff_marks_a_change_of_meaning(env, tmp_path):
    (tmp_path / "old.md").write_text(OLD, encoding="utf-8")
    (tmp_path / "new.md").write_text(NEW, encoding="utf-8")
    async with stdio_session(env, tmp_path) as session:
        diffed = answer(await session.call_tool("diff_requirements", {
            "old": {"name": "old.md", "text": OLD}, "new": {"name": "new.md", "text": NEW}}))  # fmt: skip
    command = cli_json(env, tmp_path, "diff", "old.md", "new.md", "--json")
    assert without_paths(diffed) == {**without_paths(command), "skipped": {"old": [], "new": []}}
    assert diffed["differs"] is True
    [change] = diffed["changes"]
    assert change["id"] == "LF-01" and change["status"] == "changed"
    assert "meaning" in json.dumps(change)


async def test_a_document_that_cannot_be_read_is_a_tool_error(env, tmp_path):
    async with stdio_session(env, tmp_path) as session:
        missing = await session.call_tool("check_requirements", {
            "document": {"path": str(tmp_path / "nowhere.md")}})  # fmt: skip
        broken = await session.call_tool("import_requirements", {
            "document": {"name": "x.reqif", "text": "<not reqif"}})  # fmt: skip
        two = await session.call_tool("check_requirements", {
            "document": {"text": "a", "path": str(EARS)}})  # fmt: skip
    assert "no such file" in error_text(missing)
    assert "not a ReqIF file" in error_text(broken)
    assert "exactly one of" in error_text(two)


# --- HTTP and its tokens ------------------------------------------------------------------


async def test_http_serves_the_tools_to_a_token_and_refuses_one_revoked_mid_session(env, tmp_path):
    add_user(env, tmp_path, "alice")
    token_id, token = create_token(env, tmp_path, "alice")
    with http_server(env, tmp_path) as server:
        assert refused_without_session(server.url, None) == 401
        assert refused_without_session(server.url, token + "x") == 401
        async with http_session(server.url, token) as session:
            tools = {tool.name for tool in (await session.list_tools()).tools}
            checked = answer(await session.call_tool("check_requirements", {
                "document": {"name": "ears-en.md", "text": EARS.read_text(encoding="utf-8")}}))  # fmt: skip
            zipped = answer(await session.call_tool("export_reqif", {"format": "reqifz",
                "document": {"name": "d.reqif", "text": DOORS.read_text(encoding="utf-8")}}))  # fmt: skip
            again = answer(await session.call_tool("import_requirements", {"document": {
                "name": "d.reqifz", "content_base64": zipped["content_base64"]}}))  # fmt: skip
            diffed = answer(await session.call_tool("diff_requirements", {
                "old": {"name": "old.md", "text": OLD}, "new": {"name": "new.md", "text": NEW}}))  # fmt: skip
            by_path = await session.call_tool(
                "check_requirements", {"document": {"path": str(EARS)}}
            )
            session_id = session.session_id
            assert status_in_session(server.url, token, session_id) == 200
            revoked = token_command(env, tmp_path, "revoke", token_id)
            assert revoked.returncode == 0, revoked.stderr
            # the open session's next request, and any new session, are refused
            assert status_in_session(server.url, token, session_id) == 401
        assert await client_refusal(server.url, token) == 401
        assert await client_refusal(server.url, None) == 401
    assert tools == DOCUMENT_TOOLS | PROJECT_TOOLS | MODEL_TOOLS
    assert checked["summary"]["requirements"] > 20
    assert zipped["complete"] == (not zipped["skipped"])
    assert base64.b64decode(zipped["content_base64"])[:2] == b"PK"
    assert len(again["items"]) == zipped["items"] > 0
    assert diffed["differs"] is True
    assert "only over stdio" in error_text(by_path)  # a remote caller reads no server files


async def test_http_refuses_the_token_of_a_disabled_user(env, tmp_path):
    add_user(env, tmp_path, "bob")
    _, token = create_token(env, tmp_path, "bob")
    with http_server(env, tmp_path) as server:
        assert refused_without_session(server.url, token) == 200
        done = subprocess.run([*REQSTUDIO, "users", "disable", "bob"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert refused_without_session(server.url, token) == 401


async def test_http_tokens_on_postgresql(env, tmp_path, postgres_url):
    env = {**env, "REQSTUDIO_DATABASE_URL": postgres_url}
    add_user(env, tmp_path, "carol")
    token_id, token = create_token(env, tmp_path, "carol")
    with http_server(env, tmp_path) as server:
        async with http_session(server.url, token) as session:
            checked = answer(await session.call_tool("check_requirements", {
                "document": {"name": "a.md", "text": OLD}}))  # fmt: skip
        assert checked["summary"]["requirements"] == 1
        assert token_command(env, tmp_path, "revoke", token_id).returncode == 0
        assert refused_without_session(server.url, token) == 401
    listed = token_command(env, tmp_path, "list").stdout
    assert f"{token_id}\tcarol\t-\trevoked" in listed


def test_http_refuses_to_listen_beyond_loopback_unless_told(env, tmp_path):
    done = subprocess.run(
        [*REQSTUDIO, "mcp", "--transport", "http", "--host", "0.0.0.0"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--allow-network" in done.stderr and "0.0.0.0" in done.stderr


def test_tokens_are_issued_to_accounts_stored_hashed_and_revoked_once(env, tmp_path):
    unknown = token_command(env, tmp_path, "create", "--user", "nobody")
    assert unknown.returncode == 2 and "no user 'nobody'" in unknown.stderr
    add_user(env, tmp_path, "dave")
    token_id, token = create_token(env, tmp_path, "dave")
    _, second = create_token(env, tmp_path, "dave")
    assert token != second and token.startswith("rqs_mcp_")
    database = Path(env["REQSTUDIO_DATA_DIR"]) / "history.db"
    with sqlite3.connect(database) as connection:
        rows = connection.execute('SELECT "id", "tokenHash" FROM mcp_tokens').fetchall()
    assert (token_id, token_hash(token)) in rows
    assert token.encode() not in database.read_bytes()
    assert token_command(env, tmp_path, "revoke", token_id).returncode == 0
    twice = token_command(env, tmp_path, "revoke", token_id)
    assert twice.returncode == 2 and "revoked already" in twice.stderr
    listed = token_command(env, tmp_path, "list", "--user", "dave").stdout.splitlines()
    assert [line.split("\t")[3] for line in listed[1:]] == ["revoked", "active"]


# --- model tools --------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def session_over(transport: str, env: dict[str, str], tmp_path: Path):
    if transport == "stdio":
        async with stdio_session(env, tmp_path) as session:
            yield session
        return
    add_user(env, tmp_path, "erin")
    _, token = create_token(env, tmp_path, "erin")
    with http_server(env, tmp_path) as server:
        async with http_session(server.url, token) as session:
            yield session


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_generate_srs_sends_progress_and_answers_the_document(
    transport, env, tmp_path, llm_server
):
    llm_server.script(
        srs.parse_reply(("FR-01", "Place an order.")),
        srs.explore_reply(("FR-01", "Place an order."), ("FR-02", "Track a shipment.")),
        srs.doc_reply(),
    )
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async with session_over(transport, env, tmp_path) as session:
        with anyio.fail_after(120):
            result = await session.call_tool("generate_srs", {
                "request": {"name": "input.md", "text": "Customers order goods online."}},
                progress_callback=on_progress)  # fmt: skip
    generated = answer(result)
    assert generated["outcome"] == "passed"
    assert srs.without_matrix(generated["document"]) == srs.SRS_TEXT
    assert [r["id"] for r in generated["requirements"]] == ["FR-01", "FR-02"]
    steps = [line for line in progress if not line.startswith("note: ")]
    assert steps == [
        "ReqParse started", "ReqParse done",
        "ReqExplore (round 1) started", "ReqExplore (round 1) done",
        "DocGenerate (round 1) started", "DocGenerate (round 1) done",
    ], progress  # fmt: skip
    assert any("no-clarify" in line for line in progress)  # the engine's notice, passed on


async def test_a_provider_answering_garbage_ends_the_call_with_a_clear_error(
    env, tmp_path, llm_server
):
    llm_server.script(*[Reply(content="not json at all") for _ in range(5)])
    async with stdio_session(env, tmp_path) as session:
        with anyio.fail_after(120):
            result = await session.call_tool("generate_srs", {
                "request": {"name": "input.md", "text": "Customers order goods online."}})  # fmt: skip
        still = answer(await session.call_tool("check_requirements", {
            "document": {"name": "a.md", "text": OLD}}))  # fmt: skip
    said = error_text(result)
    assert "the SRS generation failed at ReqParse: " in said and "JSON" in said
    assert len(llm_server.requests) == 3  # the call path's tries, then the failure
    assert still["summary"]["requirements"] == 1  # the server lives on


@pytest.mark.parametrize(
    ("tool", "arguments", "said"),
    [
        ("review_document", {"document": {"name": "lift.md", "text": OLD}, "max_rounds": 1},
         "the review failed: round 1: neither the red team nor the judge could be read"),
        ("rewrite_document", {"document": {"name": "lift.md", "text": OLD},
                              "clarifications": [{"question": "How fast?", "answer": "2 s"}]},
         "the rewrite failed: stage outline_generation failed: the model's answer was not valid "
         "JSON after 3 attempts"),
    ],
)  # fmt: skip
async def test_review_and_rewrite_against_garbage_end_with_a_clear_error(
    tool, arguments, said, env, tmp_path, llm_server
):
    llm_server.script(*[Reply(content="not json at all") for _ in range(60)])
    async with stdio_session(env, tmp_path) as session:
        with anyio.fail_after(180):
            result = await session.call_tool(tool, arguments)
    assert said in error_text(result)
