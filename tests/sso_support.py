"""Shared helpers for the single sign-on tests (no tests here): a real OpenID Connect provider
(oidc-provider-mock) on loopback, the app's settings that point Chainlit's generic OAuth
provider at it, and the `reqstudio users` command run as an administrator runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from oidc_provider_mock import User, run_server_in_thread

from tests.apps import ROOT
from tests.browser_support import provider_env
from tests.scripted_server import ScriptedLLMServer


@contextmanager
def oidc_provider(*identities: User) -> Iterator[str]:
    """The provider's address, knowing `identities`; plain http is allowed while it runs."""
    before = os.environ.get("AUTHLIB_INSECURE_TRANSPORT")
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # plain http on loopback, for the test
    try:
        with run_server_in_thread(user_claims=list(identities)) as server:
            yield f"http://localhost:{server.server_port}"
    finally:
        if before is None:
            os.environ.pop("AUTHLIB_INSECURE_TRANSPORT", None)
        else:
            os.environ["AUTHLIB_INSECURE_TRANSPORT"] = before


def sso_env(provider: str, server: ScriptedLLMServer) -> dict[str, str]:
    return provider_env(server) | {
        "OAUTH_GENERIC_CLIENT_ID": "reqstudio",
        "OAUTH_GENERIC_CLIENT_SECRET": "reqstudio-test-secret",
        "OAUTH_GENERIC_AUTH_URL": f"{provider}/oauth2/authorize",
        "OAUTH_GENERIC_TOKEN_URL": f"{provider}/oauth2/token",
        "OAUTH_GENERIC_USER_INFO_URL": f"{provider}/userinfo",
        "OAUTH_GENERIC_SCOPES": "openid email profile",
        "OAUTH_GENERIC_NAME": "company-sso",
    }


def users(data_dir: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    """`reqstudio users ...` on the app's data folder (its SQLite store, whatever the
    environment's database URL)."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("REQSTUDIO_DATABASE_URL", "DATABASE_URL")
    }
    return subprocess.run(
        [sys.executable, "-m", "reqstudio.cli", "users", *args],
        cwd=ROOT, env=env | {"REQSTUDIO_DATA_DIR": str(data_dir)},
        input=stdin, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
