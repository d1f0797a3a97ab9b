"""Sign-in by an authenticating proxy's header is believed only from the proxies listed in
REQSTUDIO_TRUSTED_PROXIES: the real app over real HTTP, from two local
addresses, one of them the listed proxy."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import jwt
import pytest

from tests.apps import AppProcess, running_app
from tests.browser_support import provider_env
from tests.scripted_server import ScriptedLLMServer

PROXY = "127.0.0.2"  # the listed proxy; the test's other requests come from 127.0.0.1


def client(app: AppProcess, address: str = "127.0.0.1") -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=app.url, transport=transport, timeout=10)


def header_sign_in(app: AppProcess, address: str, headers: dict[str, str]) -> httpx.Response:
    with client(app, address) as http:
        return http.post("/auth/header", headers=headers)


@pytest.fixture(scope="module")
def proxied_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    with ScriptedLLMServer() as server:
        env = provider_env(server) | {"REQSTUDIO_TRUSTED_PROXIES": f"{PROXY}/32"}
        with running_app(tmp_path_factory.mktemp("proxy") / "data", env) as process:
            yield process


def test_the_header_signs_in_only_from_a_listed_proxy(proxied_app: AppProcess):
    named = {"X-Forwarded-User": "carol"}
    from_proxy = header_sign_in(proxied_app, PROXY, named)
    assert from_proxy.status_code == 200, from_proxy.text
    token = from_proxy.cookies["access_token"]
    with client(proxied_app) as http:
        http.cookies.set("access_token", token)
        assert http.get("/user").json()["identifier"] == "carol"

    refused = [
        header_sign_in(proxied_app, "127.0.0.1", named),  # straight to the app
        # claiming to come through the proxy: uvicorn believes X-Forwarded-For from loopback
        header_sign_in(proxied_app, "127.0.0.1", named | {"X-Forwarded-For": PROXY}),
        header_sign_in(proxied_app, PROXY, {}),  # the proxy named nobody
        header_sign_in(proxied_app, PROXY, {"X-Forwarded-User": "bad\x01name"}),
    ]
    assert [r.status_code for r in refused] == [401, 401, 401, 401]
    assert all("access_token" not in r.headers.get("set-cookie", "") for r in refused)
    assert "header sign-in refused from 127.0.0.1" in proxied_app.log()


def test_a_disabled_proxy_account_is_refused(proxied_app: AppProcess):
    named = {"X-Forwarded-User": "dave"}
    assert header_sign_in(proxied_app, PROXY, named).status_code == 200
    with sqlite3.connect(Path(proxied_app.data_dir) / "history.db") as db:
        db.execute('UPDATE accounts SET "disabled" = 1 WHERE "identifier" = ?', ("dave",))
    assert header_sign_in(proxied_app, PROXY, named).status_code == 401


@pytest.mark.parametrize("sign_in", ["password", "local"])
def test_without_listed_proxies_the_header_names_nobody(tmp_path: Path, sign_in: str):
    with ScriptedLLMServer() as server:
        env = provider_env(server)
        if sign_in == "password":
            env["REQSTUDIO_USERS"] = "alice:alice-pass"
        app = AppProcess(tmp_path / "data", env).start()
        try:
            replies = [
                header_sign_in(app, address, {"X-Forwarded-User": "alice"})
                for address in ("127.0.0.1", PROXY)
            ]
        finally:
            app.stop()
    if sign_in == "password":  # no header sign-in at all
        assert [r.status_code for r in replies] == [400, 400]
        assert all("access_token" not in r.headers.get("set-cookie", "") for r in replies)
    else:  # on one's own machine everyone is the local user, whatever the header says
        assert [r.status_code for r in replies] == [200, 200]
        for reply in replies:  # the app is stopped: the name is read from the token
            claims = jwt.decode(reply.cookies["access_token"], options={"verify_signature": False})
            assert claims["identifier"] == "local"
