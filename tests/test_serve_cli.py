"""`reqstudio serve` and `reqstudio --version` as a user runs them (real processes): the help
names the options and the safe default, a listening address beyond loopback without sign-in is
refused with one line and the CLI's usage exit code, and on loopback the app is served with
Chainlit's folder copied from the package into the data folder, nothing written where the
command ran. (The same command from an installed wheel: tests/wheel/.)"""

from __future__ import annotations

import signal
import subprocess
import tomllib
from pathlib import Path

import httpx

from reqstudio.cli import EXIT_USAGE
from reqstudio.local_model import free_port
from tests.cli_support import REQSTUDIO, ROOT
from tests.socket_support import sign_in_cookie
from tests.test_bind_check import anonymous_env, assert_refused, wait_until_listening


def reqstudio(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*REQSTUDIO, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_version_prints_the_installed_version(tmp_path: Path):
    done = reqstudio("--version", env=anonymous_env(tmp_path), cwd=tmp_path)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert (done.returncode, done.stdout.strip()) == (0, f"reqstudio {version}")


def test_serve_help_names_host_port_the_offline_model_and_sign_in(tmp_path: Path):
    done = reqstudio("serve", "--help", env=anonymous_env(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "--host HOST" in text and "(127.0.0.1)" in text
    assert "--port PORT" in text and "(8000)" in text
    assert "offline demo model" in text and "needs sign-in" in text
    assert not (tmp_path / "data").exists()  # --help starts nothing


def test_serve_beyond_loopback_without_sign_in_is_refused_with_one_line(tmp_path: Path):
    # the refusal's exit code is the CLI's usage code, as for any other bad setting
    assert EXIT_USAGE == 2
    command = [*REQSTUDIO, "serve", "--host", "0.0.0.0", "--port", str(free_port())]
    assert_refused(command, anonymous_env(tmp_path))


def test_serve_refuses_a_port_out_of_range_before_starting(tmp_path: Path):
    done = reqstudio("serve", "--port", "70000", env=anonymous_env(tmp_path), cwd=tmp_path)
    assert done.returncode == EXIT_USAGE
    assert done.stderr.strip() == "reqstudio: --port: 70000 is not a port number (1-65535)"
    assert not (tmp_path / "data").exists()


def test_serve_on_loopback_serves_the_app_from_the_package_folder(tmp_path: Path):
    port, cwd = free_port(), tmp_path / "elsewhere"
    site = ROOT / "reqstudio" / "web" / "site"
    cwd.mkdir()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [*REQSTUDIO, "serve", "--port", str(port)],
            cwd=cwd, env=anonymous_env(tmp_path), stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_until_listening(process, log)
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)
        assert page.status_code == 200
        # the in-app Readme Chainlit serves is the package's, from the copied folder
        url = f"http://127.0.0.1:{port}"
        settings = httpx.get(
            f"{url}/project/settings?language=zh-CN", timeout=10,
            headers={"Cookie": sign_in_cookie(url)},
        )  # fmt: skip
        assert settings.status_code == 200, settings.text
        readme = (site / "chainlit_zh-CN.md").read_text(encoding="utf-8")
        assert settings.json()["markdown"] == readme
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=40)
    assert f"listening on 127.0.0.1:{port}" in log.read_text()
    root = tmp_path / "data" / "app"
    for name in ("app.py", "chainlit.md", "chainlit_zh-CN.md", ".chainlit/config.toml"):
        assert (root / name).is_file(), name
    assert (root / ".chainlit" / "config.toml").read_bytes() == (
        site / ".chainlit" / "config.toml"
    ).read_bytes()
    assert list(cwd.iterdir()) == []  # nothing written where the command ran
