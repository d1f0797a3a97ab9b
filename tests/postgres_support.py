"""A real PostgreSQL server for the tests: Debian's `postgresql` package, a cluster made with
initdb in a temporary directory, listening on a free port of 127.0.0.1, stopped afterwards.

PostgreSQL refuses to run as root; as root the cluster belongs to the package's `postgres`
system user and its programs run through `runuser`."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from reqstudio.local_model import free_port

DB_USER = "reqstudio"


def postgres_bin_dir() -> Path | None:
    """The newest installed server's bin directory (Debian: /usr/lib/postgresql/<N>/bin)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parent.parent.name),
    )
    return Path(found[-1]).parent if found else None


class PostgresServer:
    def __init__(self, bin_dir: Path):
        self.bin_dir = bin_dir
        self.port = 0
        self.dir = Path(tempfile.mkdtemp(prefix="reqstudio-pg-"))
        self.data = self.dir / "data"
        self.log_file = self.dir / "server.log"
        self.owner: str | None = None
        if os.geteuid() == 0:
            self.owner = "postgres"
            account = pwd.getpwnam(self.owner)  # created by the postgresql package
            os.chown(self.dir, account.pw_uid, account.pw_gid)
        self.dir.chmod(0o755)

    def _run(self, program: str, *args: str, timeout: float = 120) -> None:
        command = [str(self.bin_dir / program), *args]
        if self.owner:
            command = ["runuser", "-u", self.owner, "--", *command]
        subprocess.run(command, check=True, timeout=timeout, capture_output=True, cwd=self.dir)

    def init(self) -> PostgresServer:
        self._run("initdb", "-D", str(self.data), "-U", DB_USER, "-A", "trust",
                  "-E", "UTF8", "--locale=C", "--no-sync")  # fmt: skip
        return self

    def start(self) -> PostgresServer:
        self.port = self.port or free_port()
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log_file), "-o", options,
                  "-w", "-t", "60", "start")  # fmt: skip
        return self

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    @property
    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def create_database(self) -> str:
        """A new empty database; its SQLAlchemy URL as users write REQSTUDIO_DATABASE_URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.libpq_url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def url(self, database: str) -> str:
        return f"postgresql+asyncpg://{DB_USER}@127.0.0.1:{self.port}/{database}"

    def libpq_url(self, database: str) -> str:
        return f"postgresql://{DB_USER}@127.0.0.1:{self.port}/{database}"

    def cleanup(self) -> None:
        if self.running:
            with contextlib.suppress(subprocess.SubprocessError):
                self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def required_postgres_bin_dir() -> Path:
    """The server's bin directory; its absence fails the test (never skips it): the README's
    test command installs the package."""
    bin_dir = postgres_bin_dir()
    if bin_dir is None:
        pytest.fail(
            "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin): "
            "install Debian's postgresql package or run ./scripts/test.sh, which does"
        )
    return bin_dir


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    server = PostgresServer(required_postgres_bin_dir()).init().start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A fresh database on the shared test server (started again if a test stopped it)."""
    if not postgres_server.running:
        postgres_server.start()
    return postgres_server.create_database()
