"""The container image and compose.yaml, built and run with podman as users run them.

The session builds the Debian base (once; kept), PostgreSQL's stand-in image and the app's
image from the repository's Containerfile. Then: the image runs as a user that is not root
and its offline model answers; the compose stack (app + PostgreSQL, named volumes) comes up
as the README says (database, an administrator added with `compose run`, then `up`), its
health check passes, an administrator signs in and has one Chat turn against the scripted
provider on the host; the stack goes down and comes up again, and the thread is in the
history with both messages, the same sign-in still valid. Timings and the image's size go to
test-output/container-timings.json (README, "Containers").

Runs as its own step (`./scripts/test-container.sh`, marker `container`), not in the suite.
"""

from __future__ import annotations

import asyncio
import json
import time
import tomllib
import uuid
from collections.abc import Iterator

import httpx
import pytest

from reqstudio.local_model import free_port
from tests.container.podman import APP_IMAGE, HERE, POSTGRES_IMAGE, ROOT, Compose, Podman
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.socket_support import ChatSocket

pytestmark = pytest.mark.container

ADMIN, PASSWORD = "admin", "container-pass-1"
TIMINGS: dict[str, float] = {}


@pytest.fixture(scope="module")
def podman(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Podman]:
    started = time.monotonic()
    podman = Podman(tmp_path_factory.mktemp("podman"))
    TIMINGS["base_image_s"] = podman.ensure_base()
    TIMINGS["postgres_build_s"] = podman.build(POSTGRES_IMAGE, HERE / "postgres")
    TIMINGS["app_build_s"] = podman.build(
        APP_IMAGE, ROOT, containerfile=ROOT / "Containerfile", mounts=podman.build_context_mounts()
    )
    TIMINGS["app_image_bytes"] = podman.image_size(APP_IMAGE)
    TIMINGS["base_image_bytes"] = podman.image_size("docker.io/library/debian:bookworm-slim")
    TIMINGS["images_s"] = time.monotonic() - started
    yield podman
    output = ROOT / "test-output"
    output.mkdir(exist_ok=True)
    TIMINGS["total_s"] = time.monotonic() - started
    (output / "container-timings.json").write_text(json.dumps(TIMINGS, indent=2) + "\n")


def test_the_image_runs_as_a_user_not_root_with_the_offline_model(podman: Podman):
    user = podman("run", "--rm", "--network=host", APP_IMAGE, "id", "-u").stdout.strip()
    assert user != "0"
    # ReqStudio is the installed wheel, not a source tree: the package in site-packages, and
    # no source directory recorded for it (an editable install records one)
    installed = podman(
        "run", "--rm", "--network=host", APP_IMAGE, "python3", "-c",
        "import json, reqstudio; from importlib.metadata import distribution; "
        "origin = json.loads(distribution('reqstudio').read_text('direct_url.json') or '{}'); "
        "print(reqstudio.__file__); print(origin.get('url')); print('dir_info' in origin)",
    ).stdout.split()  # fmt: skip
    site = "/opt/reqstudio/lib/python3.11/site-packages"
    assert installed[0] == f"{site}/reqstudio/__init__.py", installed
    assert installed[1].endswith("-py3-none-any.whl") and installed[2] == "False", installed
    version = podman("run", "--rm", "--network=host", APP_IMAGE, "reqstudio", "--version")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert version.stdout.strip() == f"reqstudio {project['version']}"
    answer = podman(
        "run", "--rm", "--network=host", APP_IMAGE, "python3", "-c",
        "from llama_cpp import Llama; from reqstudio.local_model import find_model_file; "
        "m = Llama(model_path=str(find_model_file()), n_ctx=256, n_threads=1, verbose=False); "
        "r = m.create_chat_completion([{'role': 'user', 'content': 'Say hello.'}], max_tokens=8); "
        "print(r['choices'][0]['finish_reason'], repr(r['choices'][0]['message']['content']))",
        timeout=180,
    ).stdout  # fmt: skip
    finish, _, text = answer.strip().partition(" ")
    assert finish in ("stop", "length") and text.strip("'\" "), answer


def page_served_after(url: str, started: float, timeout: float = 180) -> float:
    """Seconds from `started` until the app serves its page."""
    while time.monotonic() - started < timeout:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return time.monotonic() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} served no page within {timeout} s")


def sign_in(url: str) -> str:
    with httpx.Client(base_url=url, timeout=30) as http:
        reply = http.post("/login", data={"username": ADMIN, "password": PASSWORD})
        assert reply.status_code == 200, reply.text
        return "; ".join(f"{k}={v}" for k, v in http.cookies.items())


def test_compose_stack_serves_signs_in_chats_and_keeps_the_thread_over_a_restart(
    podman: Podman,
):
    # the containers reach the host at host.containers.internal, through their network's bridge
    provider = ScriptedLLMServer(host="0.0.0.0").start()
    app_port = free_port()
    url = f"http://127.0.0.1:{app_port}"
    compose = Compose(podman, f"reqstudio-test-{uuid.uuid4().hex[:8]}", {
        "POSTGRES_PASSWORD": "a-test-password",
        "CHAINLIT_AUTH_SECRET": "",  # the app keeps its own in the data volume
        "OPENAI_API_KEY": "sk-test-not-a-real-key",
        "OPENAI_BASE_URL": f"http://host.containers.internal:{provider.port}/v1",
        "OPENAI_MODEL": "scripted-model",
        "REQSTUDIO_PORT": str(app_port),
    })  # fmt: skip
    try:
        # as the README says: the database, an administrator, then the whole stack
        compose("up", "-d", "postgres")
        compose.wait_healthy("postgres")
        added = compose("run", "--rm", "-T", "app", "reqstudio", "users", "add", ADMIN, "--admin",
                        input=PASSWORD + "\n")  # fmt: skip
        assert f"added {ADMIN} (administrator)" in added.stdout + added.stderr
        started = time.monotonic()
        compose("up", "-d")
        TIMINGS["first_up_to_page_s"] = page_served_after(url, started)
        compose.wait_healthy("app")
        TIMINGS["first_up_to_healthy_s"] = time.monotonic() - started
        health = httpx.get(f"{url}/reqstudio/health", timeout=10)
        assert health.status_code == 200 and health.json() == {"status": "ok"}
        # the process serving the app, as podman sees it from outside the container: the
        # image's command (`reqstudio serve`) became `chainlit run` of the installed package
        processes = podman("top", compose.container("app"), "user,args").stdout.split("\n")[1:]
        rows = [line.split(None, 1) for line in processes if line.strip()]
        assert len(rows) == 1 and rows[0][0] == "reqstudio", rows
        assert "chainlit.cli" in rows[0][1] and " run /data/app/app.py " in rows[0][1], rows
        assert "--host 0.0.0.0 --port 8000" in rows[0][1], rows

        cookie = sign_in(url)
        provider.script(Reply(content="Hello from the scripted provider, through the container."))

        async def chat() -> str:
            socket = await ChatSocket(url, cookie).connect()
            try:
                await socket.wait_for(  # the chat has started: its start-up step has ended
                    lambda event, data: (
                        event == "update_message" and data.get("name") == "on_chat_start"
                    )
                )
                await socket.send("What does the container run?")
                await socket.wait_for(
                    lambda event, data: (
                        event in ("new_message", "update_message")
                        and "through the container" in (data.get("output") or "")
                    ),
                    timeout=120,
                )
                await socket.wait_until_idle(timeout=120)
                return socket.thread_id
            finally:
                await socket.close()

        thread_id = asyncio.run(chat())
        assert provider.texts_with("What does the container run?")

        compose("down")  # the volumes stay
        assert podman("ps", "-a", "--filter", f"label=io.podman.compose.project={compose.project}",
                      "--format", "{{.Names}}").stdout.strip() == ""  # fmt: skip
        assert len(compose.volumes()) == 2, compose.volumes()
        started = time.monotonic()
        compose("up", "-d")
        TIMINGS["restart_up_to_page_s"] = page_served_after(url, started)
        compose.wait_healthy("app")

        # the sign-in made before the restart still holds: the login secret is in the data volume
        with httpx.Client(base_url=url, timeout=30, headers={"Cookie": cookie}) as http:
            listed = http.post("/project/threads", json={"pagination": {"first": 20}, "filter": {}})
            assert listed.status_code == 200, listed.text
            assert [t["id"] for t in listed.json()["data"]] == [thread_id]
            thread = http.get(f"/project/thread/{thread_id}")
            assert thread.status_code == 200, thread.text
        outputs = [step.get("output") or "" for step in thread.json()["steps"]]
        assert "What does the container run?" in outputs
        assert any("through the container" in output for output in outputs)
        assert sign_in(url)  # and the account is still there
    finally:
        try:
            compose("down", "-v")
        finally:
            provider.stop()
