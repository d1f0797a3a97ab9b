"""Podman and podman-compose as the container tests drive them on this kind of machine.

What the machine needs, and users' machines do not (so it lives here, not in the
Containerfile or compose.yaml):
- cgroups v1 whose limits cannot be raised, no systemd: podman runs with runc and cgroupfs and
  sets no ulimits (a containers.conf of the test's own, through CONTAINERS_CONF); health checks
  are not scheduled, so the test runs them itself (`podman healthcheck run`), and podman 4.3
  cannot wait for one (podman-compose starts `app` without waiting for `postgres` to be
  healthy), so the test starts the database first, as the README says.
- No image registry: the base image is built here with debootstrap (once; kept as
  docker.io/library/debian:bookworm-slim, the name the Containerfiles use), and PostgreSQL's
  image is a stand-in built from Debian's package under the name compose.yaml uses.
- pip inside a build reaches the package index with this machine's CA bundle, and finds the
  llama.cpp wheel set-up already built in pip's cache (so the build does not compile it again):
  both through a pip.conf mounted at /etc/pip.conf for the build's steps only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
BASE_IMAGE = "docker.io/library/debian:bookworm-slim"
POSTGRES_IMAGE = "docker.io/library/postgres:15-bookworm"  # as compose.yaml names it
APP_IMAGE = "localhost/reqstudio:latest"  # as compose.yaml names it
DEBIAN_MIRROR = "http://deb.debian.org/debian"

CONTAINERS_CONF = """\
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
"""


class CommandFailed(AssertionError):
    pass


def run(command: list[str], *, env: dict[str, str], input: str | None = None,
        timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess:  # fmt: skip
    result = subprocess.run(
        command, env=env, input=input, text=True, capture_output=True, timeout=timeout,
        stdin=None if input is not None else subprocess.DEVNULL,
    )  # fmt: skip
    if check and result.returncode != 0:
        raise CommandFailed(
            f"{' '.join(command)} exited {result.returncode}\n"
            f"--- stdout\n{result.stdout[-4000:]}\n--- stderr\n{result.stderr[-4000:]}"
        )
    return result


def required_program(name: str) -> str:
    """A program the test needs; its absence fails the test (never skips it)."""
    found = shutil.which(
        name, path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    )
    if found is None:
        raise AssertionError(
            f"{name} not found: run ./scripts/test-container.sh, which installs podman, runc and "
            "debootstrap (apt) and podman-compose (the dev extra)"
        )
    return found


class Podman:
    def __init__(self, workdir: Path):
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        conf = workdir / "containers.conf"
        conf.write_text(CONTAINERS_CONF)
        self.env = os.environ | {"CONTAINERS_CONF": str(conf)}
        self.podman = required_program("podman")
        required_program("runc")

    def __call__(self, *args: str, input: str | None = None, timeout: float = 600,
                 check: bool = True) -> subprocess.CompletedProcess:  # fmt: skip
        return run([self.podman, *args], env=self.env, input=input, timeout=timeout, check=check)

    def image_exists(self, name: str) -> bool:
        return self("image", "exists", name, check=False).returncode == 0

    def image_size(self, name: str) -> int:
        return int(self("image", "inspect", name, "--format", "{{.Size}}").stdout.strip())

    def ensure_base(self) -> float:
        """Seconds spent making the Debian base image (0 when it is already here)."""
        if self.image_exists(BASE_IMAGE):
            return 0.0
        started = time.monotonic()
        rootfs = self.workdir / "rootfs"
        run([required_program("debootstrap"), "--variant=minbase", "bookworm", str(rootfs),
             DEBIAN_MIRROR], env=self.env, timeout=1200)  # fmt: skip
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run(
            [self.podman, "import", "-", BASE_IMAGE], stdin=tar.stdout, env=self.env,
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        tar.wait(timeout=60)
        shutil.rmtree(rootfs, ignore_errors=True)
        if imported.returncode != 0 or tar.returncode != 0:
            raise CommandFailed(f"podman import of the base image failed:\n{imported.stderr}")
        return time.monotonic() - started

    def build_context_mounts(self) -> list[str]:
        """`podman build -v` mounts: this machine's pip settings and the cached llama.cpp wheel."""
        wheels = self.workdir / "wheels"
        wheels.mkdir(exist_ok=True)
        for wheel in cached_llama_wheels():
            shutil.copy2(wheel, wheels / wheel.name)
        settings = ["[global]", "find-links = /wheels"]
        mounts = ["-v", f"{wheels}:/wheels:ro"]
        bundle = os.environ.get("PIP_CERT") or "/etc/ssl/certs/ca-certificates.crt"
        if Path(bundle).is_file():
            settings.append("cert = /etc/pip-ca.crt")
            mounts += ["-v", f"{bundle}:/etc/pip-ca.crt:ro"]
        pip_conf = self.workdir / "pip.conf"
        pip_conf.write_text("\n".join(settings) + "\n")
        return [*mounts, "-v", f"{pip_conf}:/etc/pip.conf:ro"]

    def build(self, tag: str, context: Path, *, containerfile: Path | None = None,
              mounts: list[str] = ()) -> float:  # fmt: skip
        started = time.monotonic()
        args = ["build", "--network=host", "--isolation=chroot", "--format=docker", *mounts]
        if containerfile is not None:
            args += ["-f", str(containerfile)]
        log = self.workdir / f"build-{tag.rsplit('/', 1)[-1].replace(':', '-')}.log"
        result = self(*args, "-t", tag, str(context), timeout=1800, check=False)
        log.write_text(result.stdout + result.stderr)
        if result.returncode != 0:
            raise CommandFailed(
                f"podman build of {tag} failed (log: {log}):\n{result.stderr[-4000:]}"
            )
        return time.monotonic() - started


def cached_llama_wheels() -> list[Path]:
    """The llama-cpp-python wheels in pip's cache (the version pyproject.toml pins among them),
    as set-up built them."""
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "cache", "list", "--format=abspath", "llama_cpp_python"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return [Path(line) for line in listed.stdout.split() if line.endswith(".whl")]


# What compose.yaml reads from the environment (or .env): the test sets each of them.
COMPOSE_VARIABLES = ("POSTGRES_PASSWORD", "CHAINLIT_AUTH_SECRET", "OPENAI_API_KEY",
                     "OPENAI_BASE_URL", "OPENAI_MODEL", "REQSTUDIO_PORT")  # fmt: skip


class Compose:
    """podman-compose on the repository's compose.yaml, unchanged, as a project of its own."""

    def __init__(self, podman: Podman, project: str, variables: dict[str, str]):
        assert set(variables) == set(COMPOSE_VARIABLES), variables
        self.podman = podman
        self.project = project
        self.program = required_program("podman-compose")
        self.env = podman.env | variables
        self.files = ["-f", str(ROOT / "compose.yaml")]

    def __call__(self, *args: str, input: str | None = None,
                 timeout: float = 300) -> subprocess.CompletedProcess:  # fmt: skip
        command = [self.program, "-p", self.project, *self.files, *args]
        return run(command, env=self.env, input=input, timeout=timeout)

    def container(self, service: str) -> str:
        names = self.podman(
            "ps", "--filter", f"label=io.podman.compose.project={self.project}",
            "--filter", f"label=com.docker.compose.service={service}", "--format", "{{.Names}}",
        ).stdout.split()  # fmt: skip
        assert len(names) == 1, f"{service}: running containers {names}"
        return names[0]

    def wait_healthy(self, service: str, timeout: float = 120) -> float:
        """Runs the service's own health check (compose.yaml's) until it passes; the seconds
        it took. Podman schedules health checks with systemd, which this machine lacks."""
        started = time.monotonic()
        last = ""
        while time.monotonic() - started < timeout:
            names = self.podman(
                "ps", "--filter", f"label=io.podman.compose.project={self.project}",
                "--filter", f"label=com.docker.compose.service={service}", "--format", "{{.Names}}",
            ).stdout.split()  # fmt: skip
            if names:
                check = self.podman("healthcheck", "run", names[0], check=False)
                if check.returncode == 0:
                    return time.monotonic() - started
                last = check.stdout + check.stderr
            time.sleep(0.5)
        logs = self.podman("logs", "--tail", "60", names[0], check=False) if names else None
        raise AssertionError(
            f"{service} not healthy after {timeout} s: {last}\n{logs.stdout + logs.stderr if logs else ''}"
        )

    def volumes(self) -> list[str]:
        listed = self.podman("volume", "ls", "--format", "json").stdout
        return sorted(v["Name"] for v in json.loads(listed or "[]")
                      if v["Name"].startswith(f"{self.project}_"))  # fmt: skip
