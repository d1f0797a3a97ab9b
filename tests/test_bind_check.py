"""Without sign-in the app serves this machine only, decided from the sockets the server really
listens on, whatever launched it: `chainlit run --host`, `CHAINLIT_HOST`, an ASGI server
started by hand. Each launch is a real process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import httpx

from reqstudio.bind_check import (
    AnonymousNetworkCheck,
    anonymous_network_problem,
    is_loopback_host,
    listening_addresses,
)
from reqstudio.local_model import free_port
from reqstudio.web.local_only import LocalOnlyWithoutSignIn
from tests.apps import _PROVIDER_VARS, CHAINLIT, ROOT

# How a user serves the app with an ASGI server of their choice: Chainlit's server app, with
# the app module loaded the way `chainlit run` loads it (config from the working directory).
HAND_STARTED_MODULE = """\
import logging

from chainlit.config import config, load_module

logging.basicConfig(level=logging.INFO)
config.run.headless = True
config.run.module_name = "app.py"
load_module("app.py")

from chainlit.server import app  # noqa: E402
"""


def anonymous_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    """No sign-in, a provider that is never called (the offline model is not started)."""
    env = {k: v for k, v in os.environ.items() if k not in _PROVIDER_VARS}
    env.pop("CHAINLIT_HOST", None)
    env.pop("REQSTUDIO_ALLOW_ANONYMOUS_NETWORK", None)
    env |= {"OPENAI_API_KEY": "sk-x", "REQSTUDIO_DATA_DIR": str(tmp_path / "data")}
    return env | {"PYTHONUNBUFFERED": "1"} | settings


def chainlit_run(*args: str) -> list[str]:
    return [str(CHAINLIT), "run", "app.py", "--headless", *args]


def uvicorn_by_hand(tmp_path: Path, host: str, port: int) -> list[str]:
    (tmp_path / "handstarted.py").write_text(HAND_STARTED_MODULE)
    return [
        sys.executable, "-m", "uvicorn", "--app-dir", str(tmp_path), "handstarted:app",
        "--host", host, "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip


def assert_refused(command: list[str], env: dict[str, str]) -> None:
    """The launch ends by itself with exit code 2 and one line saying how to fix it."""
    result = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=90
    )  # a server that is not refused runs until the timeout
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    lines = [line for line in output.splitlines() if "REQSTUDIO" in line]
    assert len(lines) == 1 and lines[0].startswith("ReqStudio will not start:"), output
    assert "0.0.0.0" in lines[0] and "reqstudio users add" in lines[0] and "OAUTH_" in lines[0]
    assert "REQSTUDIO_ALLOW_ANONYMOUS_NETWORK" in lines[0]
    assert "Traceback" not in output


def wait_until_listening(process: subprocess.Popen, log: Path, seconds: float = 90) -> None:
    """Until the app has logged the addresses it listens on (its bind check has run); fails
    with the log when the process ends first or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while "listening on" not in log.read_text(errors="replace"):
        assert process.poll() is None, log.read_text(errors="replace")
        assert time.monotonic() < deadline, log.read_text(errors="replace")
        time.sleep(0.1)


@contextmanager
def serving(command: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """The launch, once its bind check has run (the app logs the addresses it listens on)."""
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
    try:
        wait_until_listening(process, log)
        yield process
    finally:
        process.terminate()
        process.wait(timeout=40)


def own_address_beyond_loopback() -> str | None:
    """This machine's address on its default route (a UDP connect sends nothing)."""
    with closing(socket.socket(socket.AF_INET, socket.SOCK_DGRAM)) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if is_loopback_host(address) else address


def test_chainlit_run_with_host_beyond_loopback_refuses_to_serve(tmp_path: Path):
    assert_refused(chainlit_run("--host", "0.0.0.0", "--port", "0"), anonymous_env(tmp_path))


def test_chainlit_host_variable_beyond_loopback_refuses_to_serve(tmp_path: Path):
    env = anonymous_env(tmp_path, CHAINLIT_HOST="0.0.0.0", CHAINLIT_PORT=str(free_port()))
    assert_refused(chainlit_run(), env)


def test_an_asgi_server_started_by_hand_beyond_loopback_refuses_to_serve(tmp_path: Path):
    # No variable says where it listens: only the socket does.
    assert_refused(uvicorn_by_hand(tmp_path, "0.0.0.0", 0), anonymous_env(tmp_path))


def test_a_stale_host_variable_does_not_refuse_a_server_on_loopback(tmp_path: Path):
    port = free_port()
    env = anonymous_env(tmp_path, CHAINLIT_HOST="0.0.0.0")
    command = uvicorn_by_hand(tmp_path, "127.0.0.1", port)
    with serving(command, env, tmp_path / "app.log") as process:
        assert httpx.get(f"http://127.0.0.1:{port}/", timeout=10).status_code == 200
        assert process.poll() is None
    assert "will not start" not in (tmp_path / "app.log").read_text()


def test_on_loopback_the_app_serves_without_sign_in(tmp_path: Path):
    port = free_port()
    command = chainlit_run("--host", "127.0.0.1", "--port", str(port))
    with serving(command, anonymous_env(tmp_path), tmp_path / "app.log") as process:
        assert httpx.get(f"http://127.0.0.1:{port}/", timeout=10).status_code == 200
        assert process.poll() is None
    log = (tmp_path / "app.log").read_text()
    assert f"listening on 127.0.0.1:{port}" in log
    assert "will not start" not in log and "REQSTUDIO_ALLOW_ANONYMOUS_NETWORK" not in log


def test_allowed_anonymous_network_serves_everyone_with_a_warning(tmp_path: Path):
    port = free_port()
    env = anonymous_env(tmp_path, REQSTUDIO_ALLOW_ANONYMOUS_NETWORK="true")
    command = chainlit_run("--host", "0.0.0.0", "--port", str(port))
    with serving(command, env, tmp_path / "app.log") as process:
        hosts = ["127.0.0.1", *filter(None, [own_address_beyond_loopback()])]
        for host in hosts:
            assert httpx.get(f"http://{host}:{port}/", timeout=10).status_code == 200, host
        assert process.poll() is None
    log = (tmp_path / "app.log").read_text()
    assert (
        "no sign-in and REQSTUDIO_ALLOW_ANONYMOUS_NETWORK=true: every visitor who reaches "
        f"0.0.0.0:{port} is the one local user and sees every thread"
    ) in log
    assert "will not start" not in log


def test_which_binds_need_sign_in():
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2", "::ffff:127.0.0.1", "/run/r.sock"):
        assert anonymous_network_problem(host, has_sign_in=False, allowed=False) is None
    for host in ("0.0.0.0", "::", "192.168.1.5", "::ffff:10.0.0.1", "app.example.com"):
        assert anonymous_network_problem(host, has_sign_in=False, allowed=False)
        assert anonymous_network_problem(host, has_sign_in=True, allowed=False) is None
        assert anonymous_network_problem(host, has_sign_in=False, allowed=True) is None


def test_the_listening_sockets_are_read_from_the_process_itself(tmp_path: Path):
    def listener(family: int, host: str) -> socket.socket:
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.bind((host, 0))
        sock.listen()
        return sock

    loopback = listener(socket.AF_INET, "127.0.0.1")
    everywhere = listener(socket.AF_INET, "0.0.0.0")
    everywhere_address = everywhere.getsockname()
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(str(tmp_path / "s"))
    unix.listen()
    client = socket.create_connection(loopback.getsockname())  # connected, not listening
    with loopback, everywhere, unix, client:
        found = listening_addresses()
        assert loopback.getsockname() in found and everywhere_address in found
        assert client.getsockname() not in found
        check = AnonymousNetworkCheck(has_sign_in=False, allowed=False)
        assert check.problem_with([loopback.getsockname()]) is None
        assert "0.0.0.0" in check.problem_with([loopback.getsockname(), everywhere_address])
    assert everywhere_address not in listening_addresses()  # closed


async def call_guard(check: AnonymousNetworkCheck, kind: str, server) -> tuple[bool, list]:
    """Whether the app behind the guard was called for a request arriving on `server`, and
    what the guard sent."""
    reached, sent = [], []

    async def app(scope, receive, send):
        reached.append(scope)

    async def send(message):
        sent.append(message)

    scope = {"type": kind, "path": "/", "headers": [], "server": server}
    await LocalOnlyWithoutSignIn(app, check)(scope, None, send)
    return bool(reached), sent


async def test_without_sign_in_a_request_on_an_address_beyond_loopback_is_refused():
    anonymous = AnonymousNetworkCheck(has_sign_in=False, allowed=False)
    for server in (("192.0.2.2", 8000), ("::ffff:10.1.2.3", 8000), ("fd00::2", 8000)):
        reached, sent = await call_guard(anonymous, "http", server)
        assert not reached and sent[0]["status"] == 403, server
        reached, sent = await call_guard(anonymous, "websocket", server)
        assert not reached and sent == [{"type": "websocket.close", "code": 1008}]
    for server in (("127.0.0.1", 8000), ("::1", 8000), ("::ffff:127.0.0.1", 8000), None):
        assert (await call_guard(anonymous, "http", server))[0], server
    assert (await call_guard(anonymous, "http", ("/run/reqstudio.sock", None)))[0]
    for signed_in_or_allowed in (
        AnonymousNetworkCheck(has_sign_in=True, allowed=False),
        AnonymousNetworkCheck(has_sign_in=False, allowed=True),
    ):
        assert (await call_guard(signed_in_or_allowed, "http", ("192.0.2.2", 8000)))[0]
