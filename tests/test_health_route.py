"""`GET /reqstudio/health`, what a container's or load balancer's health check asks: 200 while
the app serves and its database answers, 503 while the database is away, 200 again once it is
back. Real app processes (`chainlit run`) on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from tests.apps import running_app
from tests.browser_support import provider_env
from tests.postgres_support import PostgresServer
from tests.scripted_server import ScriptedLLMServer


def health(url: str) -> httpx.Response:
    return httpx.get(f"{url}/reqstudio/health", timeout=10)


def test_health_is_ok_on_sqlite_without_signing_in(llm_server: ScriptedLLMServer, tmp_path: Path):
    with running_app(tmp_path / "data", provider_env(llm_server)) as app:
        reply = health(app.url)
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"  # not the web app's page
    assert reply.json() == {"status": "ok"}


def test_health_says_when_postgresql_is_away_and_when_it_is_back(
    llm_server: ScriptedLLMServer, postgres_server: PostgresServer, postgres_url: str,
    tmp_path: Path,
):  # fmt: skip
    env = provider_env(llm_server) | {"REQSTUDIO_DATABASE_URL": postgres_url}
    with running_app(tmp_path / "data", env) as app:
        try:
            assert health(app.url).json() == {"status": "ok"}
            postgres_server.stop()
            away = health(app.url)
            assert away.status_code == 503, away.text
            assert away.json()["status"] == "unavailable"
            assert postgres_url not in away.text  # no address, user or password in the answer
        finally:
            if not postgres_server.running:
                postgres_server.start()
        # pooled connections are checked before use: the next check after the restart passes
        deadline = time.monotonic() + 20
        back = health(app.url)
        while back.status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
            back = health(app.url)
        assert back.status_code == 200 and back.json() == {"status": "ok"}, back.text
    assert "health check: the database is unavailable" in app.log()
