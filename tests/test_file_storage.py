"""Thread files in the configured store: an SRS run's downloads and its
uploaded reference, written through one app instance, are served by another one sharing the
database (the `database` back end on one PostgreSQL, the `s3` back end on a real
S3-compatible server, moto), and by the same data folder moved elsewhere (`local`). The
stores refuse, on the way in, files too big or of a type not allowed, and say so in one line.

The apps are real processes driven over their socket and HTTP, as the browser drives them."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import socketio

from reqstudio.local_model import free_port
from reqstudio.settings import SettingsError, load_settings
from reqstudio.web.storage import (
    DatabaseStorage,
    FileNotStored,
    LocalDiskStorage,
    make_storage,
    storage_kind,
)
from tests import test_srs_support as srs
from tests.apps import AppProcess, shared_database_env, two_instances
from tests.browser_support import provider_env
from tests.scripted_server import ScriptedLLMServer
from tests.test_srs_support import (
    without_matrix,
)
from tests.test_team_run import answer

REFERENCE = srs.E_STORE / "reference.md"
RUN_FILES = {"srs.md", "srs-log.json", "reference.md"}


def script_srs_run(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(
        srs.parse_reply(("FR-01", "Readers search books."), ("FR-02", "Readers reserve books.")),
        srs.explore_reply(("FR-01", "Readers search books by title."), ("FR-02", "Reserve.")),
        srs.clarify_reply(FR_01=2, FR_02=2),
        srs.doc_reply(srs.SRS_TEXT),
    )


async def cookie_of(base_url: str) -> str:
    async with httpx.AsyncClient(base_url=base_url) as http:
        await http.get("/user")  # the one local user's sign-in cookie (no REQSTUDIO_USERS)
        return "; ".join(f"{k}={v}" for k, v in http.cookies.items())


async def run_srs_with_reference(app: AppProcess) -> tuple[str, bytes]:
    """An SRS run as the browser makes it: upload the reference, send the description with it
    attached, wait until srs.md and srs-log.json are offered. Returns the thread id and srs.md
    as the running session's download link serves it."""
    thread_id, live = await run_in_mode(
        app, "SRS", "A library lending system: readers search and reserve books.",
        {"srs.md", "srs-log.json"}, attach=REFERENCE,
    )  # fmt: skip
    return thread_id, live["srs.md"]


async def run_in_mode(
    app: AppProcess,
    mode: str,
    text: str,
    offered: set[str],
    attach: Path | None = None,
    said: str = "",
    ask_upload: Path | None = None,
) -> tuple[str, dict[str, bytes]]:
    """Send `text` (with `attach` uploaded and attached) in `mode` over the app's socket, as
    the browser does; wait until the files named `offered` are shown and a message holds
    `said`. Asked for a file, choose to upload one and upload `ask_upload`. Returns the thread
    id and those files as the running session serves them."""
    cookie = await cookie_of(app.url)
    session_id = str(uuid.uuid4())
    client = socketio.AsyncClient(reconnection=False)
    changed = asyncio.Event()
    thread: dict[str, str] = {}
    shown: dict[str, dict] = {}
    texts: list[str] = []

    @client.on("first_interaction")
    async def first(data: dict) -> None:
        thread["id"] = data["thread_id"]

    @client.on("element")
    async def element(data: dict) -> None:
        shown[data["name"]] = data
        changed.set()

    @client.on("new_message")
    async def message(data: dict) -> None:
        texts.append(data.get("output") or "")
        changed.set()

    @client.on("ask")
    async def ask(data: dict) -> object:
        if data["spec"]["type"] == "action":  # SRS: upload a reference or go on without
            choice = "upload" if ask_upload else "skip"
            return {"name": choice, "payload": {"choice": choice}, "label": choice}
        assert ask_upload is not None and data["spec"]["type"] == "file"
        async with httpx.AsyncClient(base_url=app.url, headers={"Cookie": cookie}) as http:
            parent = data["msg"].get("parentId")
            uploaded = await http.post(
                "/project/file",
                params={"session_id": session_id, **({"ask_parent_id": parent} if parent else {})},
                files={"file": (ask_upload.name, ask_upload.read_bytes(), "text/markdown")},
            )
        assert uploaded.status_code == 200, uploaded.text
        return [uploaded.json()]

    async def until(condition, timeout: float = 90) -> None:
        async def wait() -> None:
            while not condition():
                changed.clear()
                await changed.wait()

        await asyncio.wait_for(wait(), timeout)

    await client.connect(
        app.url,
        socketio_path="/ws/socket.io",
        transports=["websocket"],
        headers={"Cookie": cookie, "Accept-Language": "en-US"},
        auth={"clientType": "webapp", "sessionId": session_id, "threadId": "",
              "userEnv": "{}", "chatProfile": mode},
    )  # fmt: skip
    try:
        await client.emit("connection_successful")
        await until(lambda: any("mode is on" in t for t in texts))
        references = None
        async with httpx.AsyncClient(base_url=app.url, headers={"Cookie": cookie}) as http:
            if attach is not None:
                uploaded = await http.post(
                    "/project/file",
                    params={"session_id": session_id},
                    files={"file": (attach.name, attach.read_bytes(), "text/markdown")},
                )
                assert uploaded.status_code == 200, uploaded.text
                references = [uploaded.json()]
            step = {
                "id": str(uuid.uuid4()), "threadId": "", "name": "local",
                "type": "user_message", "output": text, "createdAt": "", "streaming": False,
                "metadata": {}, "modes": {},
            }  # fmt: skip
            await client.emit("client_message", {"message": step, "fileReferences": references})
            await until(lambda: offered <= shown.keys() and any(said in t for t in texts[1:]))
            live = {}
            for name in offered:
                reply = await http.get(
                    f"/project/file/{shown[name]['chainlitKey']}", params={"session_id": session_id}
                )
                assert reply.status_code == 200
                live[name] = reply.content
    finally:
        await client.disconnect()
    return thread.get("id", ""), live


def stored_files(app: AppProcess, thread_id: str, names: set[str]) -> dict[str, dict]:
    """The thread's files as another tab opening it gets them (`GET /project/thread/<id>`);
    waits, bounded, for the history writes the run started to land."""
    with httpx.Client(base_url=app.url, timeout=30) as http:
        http.get("/user")
        deadline = time.monotonic() + 30
        while True:
            reply = http.get(f"/project/thread/{thread_id}")
            assert reply.status_code == 200, reply.text
            found = {e["name"]: e for e in reply.json().get("elements") or []}
            if names <= found.keys() or time.monotonic() > deadline:
                return found
            time.sleep(0.2)


def download(app: AppProcess, url: str) -> httpx.Response:
    """What the browser's download link fetches: the app's own route, or a presigned URL."""
    target = url if url.startswith("http") else app.url + url
    return httpx.get(target, timeout=30)


def assert_run_files_served(app: AppProcess, files: dict[str, dict]) -> None:
    assert files.keys() >= RUN_FILES, sorted(files)
    document = download(app, files["srs.md"]["url"])
    assert document.status_code == 200 and without_matrix(document.text) == srs.SRS_TEXT
    assert document.headers["content-type"].startswith("text/markdown")
    log = download(app, files["srs-log.json"]["url"])
    assert log.status_code == 200 and '"usage"' in log.text
    reference = download(app, files["reference.md"]["url"])
    assert reference.content == REFERENCE.read_bytes()  # the upload itself, byte for byte


# --- database: two instances, separate data folders, one PostgreSQL -------------------------


def test_second_instance_serves_the_files_the_first_wrote_from_postgres(
    llm_server: ScriptedLLMServer, postgres_url: str, tmp_path: Path
):
    env = shared_database_env(provider_env(llm_server), postgres_url)
    with two_instances(tmp_path, env) as (first, second):
        script_srs_run(llm_server)
        thread_id, live = asyncio.run(run_srs_with_reference(first))
        assert without_matrix(live.decode()) == srs.SRS_TEXT
        files = stored_files(second, thread_id, RUN_FILES)
        first.stop()  # the instance that wrote them is gone
        assert all(f["url"].startswith("/reqstudio/files/") for f in files.values())
        assert_run_files_served(second, files)
        # nothing of it on either machine's disk: the files are in the database
        assert (
            not list((tmp_path / "a").glob("files/*"))
            and not (tmp_path / "a/thread-files").exists()
        )
        assert "thread files stored in: database" in second.log()

        # a link is only as good as its signature and its time
        url = files["srs.md"]["url"]
        assert download(second, url.replace("signature=", "signature=0")).status_code == 403
        expired = url.split("?")[0] + "?expires=1&signature=" + url.split("signature=")[1]
        assert download(second, expired).status_code == 403


def test_a_team_record_written_on_one_instance_downloads_from_another(
    llm_server: ScriptedLLMServer, postgres_url: str, tmp_path: Path
):
    """Team keeps its record as a download (Review and Rewrite keep theirs the same way, as
    elements of their closing message): nothing per mode, Chainlit stores it."""
    env = shared_database_env(provider_env(llm_server), postgres_url)
    with two_instances(tmp_path, env) as (first, second):
        llm_server.script(answer("Login: FR-1 users sign in.", "List the login requirements"))
        thread_id, live = asyncio.run(
            run_in_mode(first, "Team", "List the login requirements", {"team-record.json"})
        )
        files = stored_files(second, thread_id, {"team-record.json"})
        first.stop()
        record = download(second, files["team-record.json"]["url"])
        assert record.status_code == 200 and record.content == live["team-record.json"]
        assert record.json()["reason"] == "answered"


def test_a_reference_uploaded_when_asked_is_one_chip_on_another_instance(
    llm_server: ScriptedLLMServer, postgres_url: str, tmp_path: Path
):
    env = shared_database_env(provider_env(llm_server), postgres_url)
    with two_instances(tmp_path, env) as (first, second):
        script_srs_run(llm_server)
        thread_id, _ = asyncio.run(
            run_in_mode(
                first, "SRS", "A library lending system.", {"srs.md", "reference.md"},
                ask_upload=REFERENCE,
            )
        )  # fmt: skip
        files = stored_files(second, thread_id, RUN_FILES)
        first.stop()
        assert_run_files_served(second, files)
        with httpx.Client(base_url=second.url) as http:
            http.get("/user")
            thread = http.get(f"/project/thread/{thread_id}").json()
        chips = [e for e in thread["elements"] if e["name"] == "reference.md"]
        read = next(  # the app's "reference read" message (not the ask, not the upload turn)
            s for s in thread["steps"]
            if "reference.md" in (s.get("output") or "")
            and ("” read" in s["output"] or "已读取" in s["output"])
        )  # fmt: skip
        assert len(chips) == 1 and chips[0]["forId"] == read["id"]  # on the "read" message


# --- s3: a real S3-compatible server (moto) -------------------------------------------------


class MotoServer:
    """moto's S3-compatible HTTP server on a free port of 127.0.0.1."""

    def __init__(self, folder: Path):
        self.port = free_port()
        self.log = folder / "moto.log"
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> MotoServer:
        binary = Path(sys.executable).parent / "moto_server"
        if not binary.exists():
            pytest.fail("moto[server] is not installed: run ./scripts/test.sh (the dev extra)")
        log = open(self.log, "wb")  # noqa: SIM115 - owned by the process
        self.process = subprocess.Popen(
            [str(binary), "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(self.url, timeout=1)
                return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError(f"moto did not start: {self.log.read_text()}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.url, **AWS_TEST_KEYS)


AWS_TEST_KEYS = {
    "aws_access_key_id": "test-key",
    "aws_secret_access_key": "test-secret",
    "region_name": "us-east-1",
}


def aws_env(moto: MotoServer, bucket: str) -> dict[str, str]:
    return {
        "REQSTUDIO_S3_BUCKET": bucket,
        "REQSTUDIO_S3_ENDPOINT_URL": moto.url,
        "AWS_ACCESS_KEY_ID": AWS_TEST_KEYS["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": AWS_TEST_KEYS["aws_secret_access_key"],
        "AWS_DEFAULT_REGION": AWS_TEST_KEYS["region_name"],
        "AWS_EC2_METADATA_DISABLED": "true",  # never ask a cloud for credentials
    }


@pytest.fixture
def moto(tmp_path: Path) -> Iterator[MotoServer]:
    server = MotoServer(tmp_path).start()
    try:
        yield server
    finally:
        server.stop()


def test_second_instance_serves_from_s3_what_the_first_wrote(
    llm_server: ScriptedLLMServer, postgres_url: str, moto: MotoServer, tmp_path: Path
):
    moto.client().create_bucket(Bucket="reqstudio-files")
    env = shared_database_env(
        provider_env(llm_server) | aws_env(moto, "reqstudio-files"), postgres_url
    )
    with two_instances(tmp_path, env) as (first, second):
        script_srs_run(llm_server)
        thread_id, _ = asyncio.run(run_srs_with_reference(first))
        files = stored_files(second, thread_id, RUN_FILES)
        first.stop()
        # presigned URLs of the S3 server: the browser downloads from the store itself
        assert all(f["url"].startswith(moto.url + "/reqstudio-files/") for f in files.values())
        assert_run_files_served(second, files)
        keys = [
            o["Key"] for o in moto.client().list_objects_v2(Bucket="reqstudio-files")["Contents"]
        ]
        assert {k.rsplit("/", 1)[-1] for k in keys} >= RUN_FILES
        assert "thread files stored in: s3" in second.log()


def test_s3_store_down_costs_one_log_line_a_file_and_the_live_download_stays(
    llm_server: ScriptedLLMServer, moto: MotoServer, tmp_path: Path
):
    moto.client().create_bucket(Bucket="reqstudio-files")
    app = AppProcess(tmp_path / "a", provider_env(llm_server) | aws_env(moto, "reqstudio-files"))
    app.start()
    moto.stop()  # the store goes away after start-up
    try:
        script_srs_run(llm_server)
        _, live = asyncio.run(run_srs_with_reference(app))
        assert (
            without_matrix(live.decode()) == srs.SRS_TEXT
        )  # the running session still offers what it made
    finally:
        app.stop()
    lines = [line for line in app.log().splitlines() if "file store unavailable" in line]
    # one line per file (the reference, srs.md, srs.docx, srs.reqif, srs-trace.csv,
    # srs-log.json), no traceback
    assert len(lines) == 6 and all("EndpointConnectionError" in line for line in lines), lines
    assert "Traceback" not in app.log()


# --- local: the embedded default, and the data folder moved ---------------------------------


def test_local_files_follow_the_data_folder_when_it_moves(
    llm_server: ScriptedLLMServer, tmp_path: Path
):
    env = provider_env(llm_server)
    app = AppProcess(tmp_path / "before", env).start()
    try:
        script_srs_run(llm_server)
        thread_id, _ = asyncio.run(run_srs_with_reference(app))
        stored_files(app, thread_id, RUN_FILES)  # written before the app stops
    finally:
        app.stop()
    assert "thread files stored in: local" in app.log()
    shutil.move(tmp_path / "before", tmp_path / "after")
    # the secret the links are signed with moves with the folder (ensure_auth_secret)
    moved = AppProcess(tmp_path / "after", env).start()
    try:
        files = stored_files(moved, thread_id, RUN_FILES)
        assert_run_files_served(moved, files)
    finally:
        moved.stop()


# --- refused on the way in ------------------------------------------------------------------

MB = 1024 * 1024
TYPES = ("text/markdown", "application/json")


async def test_database_store_refuses_big_files_wrong_types_and_a_full_table(postgres_url):
    store = DatabaseStorage(postgres_url, max_mb=1, allowed_types=TYPES, table_max_mb=1.5)
    await store.create_table()
    try:
        written = await store.upload_file("u/1/a.md", b"# A\n", "text/markdown")
        assert written["object_key"] == "u/1/a.md"
        assert await store.read("u/1/a.md") == (b"# A\n", "text/markdown")

        with pytest.raises(FileNotStored) as too_big:
            await store.upload_file("u/2/big.md", b"x" * (MB + 1), "text/markdown")
        assert str(too_big.value) == (
            "file 'big.md' not stored: 1.00 MB is over the 1 MB limit (REQSTUDIO_FILE_MAX_MB)"
        )
        with pytest.raises(FileNotStored, match="content type 'text/html' is not allowed"):
            await store.upload_file("u/3/page.html", b"<script>", "text/html")

        await store.upload_file("u/4/b.md", b"y" * (MB - 10), "text/markdown")
        with pytest.raises(FileNotStored, match="REQSTUDIO_DATABASE_FILES_MAX_MB"):
            await store.upload_file("u/5/c.md", b"z" * (MB - 10), "text/markdown")
        # writing a key again replaces it: its old size does not count against the table
        await store.upload_file("u/4/b.md", b"w" * (MB - 10), "text/markdown")
        assert await store.read("u/2/big.md") is None and await store.read("u/5/c.md") is None
    finally:
        await store.close()


async def test_database_store_unavailable_is_one_line(postgres_server, postgres_url):
    store = DatabaseStorage(postgres_url, max_mb=1, allowed_types=TYPES, table_max_mb=1)
    await store.create_table()
    await asyncio.to_thread(postgres_server.stop)
    try:
        with pytest.raises(FileNotStored) as down:
            await store.upload_file("u/1/a.md", b"# A\n", "text/markdown")
        assert str(down.value).startswith("file store unavailable: ")
        assert "\n" not in str(down.value)
    finally:
        await asyncio.to_thread(postgres_server.start)
        await store.close()


async def test_local_store_keeps_names_users_gave_inside_its_folder(tmp_path: Path):
    store = LocalDiskStorage(tmp_path / "files", max_mb=1, allowed_types=TYPES)
    written = await store.upload_file("u/1/../../../escape.md", b"# kept\n", "text/markdown")
    assert written["object_key"] == "u/1/escape.md"  # what Chainlit records for the element
    assert not (tmp_path / "escape.md").exists()
    assert [p.parent for p in (tmp_path / "files").iterdir()] == [tmp_path / "files"] * 2
    assert await store.read("u/1/escape.md") == (b"# kept\n", "text/markdown")
    with pytest.raises(FileNotStored, match="content type 'image/svg\\+xml' is not allowed"):
        await store.upload_file("u/2/x.svg", b"<svg/>", "image/svg+xml")


def test_an_oversized_attachment_is_refused_in_words_and_not_stored(
    llm_server: ScriptedLLMServer, postgres_url: str, tmp_path: Path
):
    limits = {"REQSTUDIO_REFERENCE_MAX_MB": "0.01", "REQSTUDIO_FILE_MAX_MB": "0.01"}
    env = provider_env(llm_server) | {"REQSTUDIO_DATABASE_URL": postgres_url} | limits
    app = AppProcess(tmp_path / "a", env).start()
    try:
        said = "over the 0.01 MB limit"  # the app's own refusal, in the chat
        asyncio.run(run_in_mode(app, "SRS", "A library.", set(), attach=REFERENCE, said=said))
        deadline = time.monotonic() + 30  # the store's refusal is written by another task
        while "not stored" not in app.log() and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        app.stop()
    size = REFERENCE.stat().st_size / MB
    refused = [line for line in app.log().splitlines() if "not stored" in line]
    assert len(refused) == 1 and refused[0].endswith(
        f"file 'reference.md' not stored: {size:.2f} MB is over the 0.01 MB limit "
        "(REQSTUDIO_FILE_MAX_MB)"
    )
    assert "Traceback" not in app.log()


# --- settings -------------------------------------------------------------------------------


def test_auto_picks_the_store_from_what_is_configured(tmp_path: Path):
    base = {"REQSTUDIO_DATA_DIR": str(tmp_path)}
    pg = "postgresql+asyncpg://u@127.0.0.1/d"
    assert storage_kind(load_settings(**base)) == "local"
    assert storage_kind(load_settings(**base, REQSTUDIO_DATABASE_URL=pg)) == "database"
    with_bucket = load_settings(**base, REQSTUDIO_DATABASE_URL=pg, REQSTUDIO_S3_BUCKET="b")
    assert storage_kind(with_bucket) == "s3"
    chosen = load_settings(**base, REQSTUDIO_DATABASE_URL=pg, REQSTUDIO_STORAGE="local")
    assert isinstance(make_storage(chosen), LocalDiskStorage)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {"REQSTUDIO_FILE_MAX_MB": "5"},
            "Invalid settings: REQSTUDIO_FILE_MAX_MB (5) is below REQSTUDIO_REFERENCE_MAX_MB "
            "(10): accepted references could not be kept",
        ),
        (
            {"REQSTUDIO_STORAGE": "s3"},
            "Invalid settings: REQSTUDIO_STORAGE=s3 needs REQSTUDIO_S3_BUCKET",
        ),
        (
            {"REQSTUDIO_S3_ENDPOINT_URL": "minio:9000"},
            'Invalid setting REQSTUDIO_S3_ENDPOINT_URL="minio:9000": must start with http:// or https://',
        ),
        (
            {"REQSTUDIO_STORAGE": "disk"},
            'Invalid setting REQSTUDIO_STORAGE="disk": '
            "Input should be 'auto', 'local', 'database' or 's3'",
        ),
    ],
)
def test_storage_settings_refused_in_one_line(values: dict, message: str):
    with pytest.raises(SettingsError) as refused:
        load_settings(**values)
    assert str(refused.value) == message


def test_s3_without_boto3_is_refused_in_one_line(monkeypatch, tmp_path: Path):
    monkeypatch.setitem(sys.modules, "boto3", None)  # as if the s3 extra were not installed
    monkeypatch.delitem(sys.modules, "chainlit.data.storage_clients.s3", raising=False)
    settings = load_settings(REQSTUDIO_DATA_DIR=str(tmp_path), REQSTUDIO_S3_BUCKET="b")
    with pytest.raises(SettingsError, match=r"need boto3: install the s3 extra"):
        make_storage(settings)
