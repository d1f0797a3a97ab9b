"""How people sign in: password accounts, single sign-on, or the one local user.

- Password accounts (`reqstudio users add`, Argon2 hashes in the `accounts` table) and the
  deprecated `REQSTUDIO_USERS` list turn on Chainlit's password form, behind the failed-login
  limit (reqstudio/web/login_guard.py).
- Single sign-on: any of Chainlit's OAuth providers configured by its `OAUTH_*` variables (the
  generic OpenID Connect one, Keycloak, Azure AD, Okta, Google, GitHub, GitLab...). The identity
  becomes an account at its first sign-in. With REQSTUDIO_SSO_ALLOWED_DOMAINS (a verified
  e-mail in one of them) or REQSTUDIO_SSO_ALLOWED_GROUPS, an identity they cover signs in and
  any other is refused; with neither, a new identity is added pending and signs in once an
  administrator approves it (the admin page, `reqstudio users approve`).
- A proxy that authenticates (REQSTUDIO_TRUSTED_PROXIES): the user it names in a header
  (REQSTUDIO_PROXY_USER_HEADER, `X-Forwarded-User`), believed from those addresses only
  (reqstudio/web/proxy_sign_in.py).
- None of these: no form, every visitor is the local user (refused beyond loopback by app.py);
  a user-naming header is ignored.

Whether the password form shows is decided at start-up: after adding the first password
account to an app running without one, restart it. The start-up log says how single sign-on
admits identities, and, when no account administers, which command makes one.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chainlit as cl
import jwt
from chainlit.oauth_providers import get_configured_oauth_providers
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from starlette.types import ASGIApp, Receive, Scope, Send

from reqstudio.accounts import LEGACY, AccountStore, AwaitingApproval
from reqstudio.errors import is_database_failure
from reqstudio.settings import Settings
from reqstudio.web.awaiting_approval import note_awaiting_approval
from reqstudio.web.outage import note_sign_in_database_failure
from reqstudio.web.proxy_sign_in import trust_header_sign_in_from
from reqstudio.web.refusal import refuse
from reqstudio.web.revocation import guarded_token

log = logging.getLogger("reqstudio.login")


@dataclass(frozen=True)
class SignIn:
    passwords: bool  # the password form (accounts or REQSTUDIO_USERS)
    sso: tuple[str, ...]  # the configured OAuth providers' ids
    store: AccountStore
    proxy: bool = False  # a trusted proxy names the user in a header

    @property
    def configured(self) -> bool:
        return self.passwords or bool(self.sso) or self.proxy


def _account_counts(database_url: str) -> tuple[int, int]:
    """How many password accounts and enabled administrators exist, read before Chainlit's
    loop runs (a loop of its own in a thread: app.py is imported inside the server's loop)."""

    url = make_url(database_url)
    if url.get_backend_name() == "sqlite" and not Path(url.database or "").is_file():
        return 0, 0  # a first start: nothing is created before the start-up checks pass

    async def count() -> tuple[int, int]:
        probe = AccountStore(database_url)
        try:
            return await probe.counts()
        except DBAPIError:
            return 0, 0  # a database from before accounts existed: the table comes at start-up
        finally:
            await probe.aclose()

    result: list[tuple[int, int]] = []
    thread_error: list[BaseException] = []

    def run() -> None:
        try:
            result.append(asyncio.run(count()))
        except BaseException as error:
            thread_error.append(error)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if thread_error:
        raise thread_error[0]
    return result[0]


def new_user(identifier: str, provider: str, display_name: str | None = None) -> cl.User:
    # a fresh sign-in id makes each token unique: one signed out and revoked must not be the
    # very token a sign-in in the same second is given
    return cl.User(
        identifier=identifier,
        display_name=display_name,
        metadata={"provider": provider, "sign_in": secrets.token_hex(8)},
    )


def _as_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [part for part in value.replace(",", " ").split() if part]
    if isinstance(value, Iterable):
        return [str(item) for item in value]
    return []


def email_verified(raw: dict[str, Any]) -> bool:
    """The provider says the e-mail address is the person's: OpenID Connect's `email_verified`
    (Google's older userinfo names it `verified_email`). Missing is not verified: a domain
    check on an address anyone could type into their profile admits anyone."""
    value = raw.get("email_verified", raw.get("verified_email"))
    return value is True or (isinstance(value, str) and value.lower() == "true")


def sso_refusal(
    identifier: str, raw: dict[str, Any], domains: frozenset[str], groups: frozenset[str]
) -> str | None:
    """Why an identity the provider vouched for may not sign in here (None: it may)."""
    if domains:
        email = str(raw.get("email") or (identifier if "@" in identifier else ""))
        domain = email.rpartition("@")[2].lower()
        if not email or domain not in domains:
            return f"e-mail domain {domain or '(none)'} is not allowed"
        if not email_verified(raw):
            return "e-mail address not verified by the provider (email_verified not true)"
    if groups:
        held = set(_as_list(raw.get("groups"))) | set(_as_list(raw.get("roles")))
        if not held & groups:
            return "in none of the allowed groups"
    return None


def admitted_without_approval(identifier: str, raw: dict[str, Any], settings: Settings) -> bool:
    """A single sign-on identity signs in without approval when an allowed domain or group
    covers it (sso_refusal checked that), or REQSTUDIO_ADMINS names it (by a verified e-mail
    when the name is one); any other waits for an administrator's approval."""
    if settings.sso_domains or settings.sso_groups:
        return True
    return identifier in settings.admin_names and ("@" not in identifier or email_verified(raw))


def log_sign_in_mode(settings: Settings, sso: tuple[str, ...], administrators: int) -> None:
    """At start-up: how single sign-on admits identities, and how to make an administrator
    when there is none (nobody becomes one by being first)."""
    if sso:
        covered = []
        if settings.sso_domains:
            covered.append("a verified e-mail in " + ", ".join(sorted(settings.sso_domains)))
        if settings.sso_groups:
            covered.append("one of the groups " + ", ".join(sorted(settings.sso_groups)))
        if covered:
            log.info(
                "single sign-on (%s): signs in an identity with %s; any other is refused",
                ", ".join(sso), " and ".join(covered),
            )  # fmt: skip
        else:
            log.info(
                "single sign-on (%s): a new identity waits for an administrator's approval "
                "(/reqstudio/admin or `reqstudio users approve NAME`); set "
                "REQSTUDIO_SSO_ALLOWED_DOMAINS or REQSTUDIO_SSO_ALLOWED_GROUPS to admit "
                "identities they cover at once",
                ", ".join(sso),
            )
    if not administrators and not settings.admin_names:
        log.warning(
            "no administrator: make one with `reqstudio users add NAME --admin`%s, or name one "
            "in REQSTUDIO_ADMINS",
            " (a password account), `reqstudio users approve NAME --admin` (an identity that "
            "has signed in once through single sign-on)"
            if sso
            else "",
        )


def the_local_user() -> cl.User:
    """The one user of an app without sign-in (also answered at `GET /user`)."""
    return new_user("local", "local")


def configure_sign_in(settings: Settings) -> SignIn:
    store = AccountStore(settings.resolved_database_url, settings.admin_names)
    legacy = settings.user_passwords
    with_password, administrators = _account_counts(settings.resolved_database_url)
    passwords = bool(legacy) or with_password > 0
    sso = tuple(get_configured_oauth_providers())
    proxies = settings.trusted_proxy_networks
    sign_in = SignIn(passwords=passwords, sso=sso, store=store, proxy=bool(proxies))
    if sign_in.configured:
        log_sign_in_mode(settings, sso, administrators)

    if legacy:
        log.warning(
            "REQSTUDIO_USERS (plain-text passwords) is deprecated and will be removed: move each "
            "user to hashed passwords with `reqstudio users add NAME`, then unset it. / "
            "REQSTUDIO_USERS 明文密码已弃用：请用 `reqstudio users add 用户名` 迁移后删除该变量。"
        )

    # The routes these need (the checked /login, /auth/oauth callback, /auth/header, /user)
    # are put in front of Chainlit's by reqstudio/web/chainlit_seam.py, from `sign_in`.
    if passwords:

        @cl.password_auth_callback
        async def login(username: str, password: str) -> cl.User | None:
            try:
                return await check_password(username, password)
            except Exception as error:  # Chainlit would answer "wrong password" for it
                if is_database_failure(error):
                    note_sign_in_database_failure(error)  # answered 503 (reqstudio/web/outage.py)
                    return None
                raise

        async def check_password(username: str, password: str) -> cl.User | None:
            account = await store.verify_password(username, password)
            if account is not None:
                return new_user(account.identifier, "credentials", account.display_name)
            expected = legacy.get(username)
            if expected is not None and hmac.compare_digest(expected, password):
                account = await store.sign_in_external(
                    username, provider=LEGACY, subject=None, display_name=None
                )
                if account is not None:
                    return new_user(username, "credentials")
                log.warning("sign-in of %r refused: account disabled", username)
            return None

    if sso:

        @cl.oauth_callback
        async def single_sign_on(
            provider_id: str,
            token: str,
            raw_user_data: dict[str, Any],
            default_user: cl.User,
            id_token: str | None = None,
        ) -> cl.User | None:
            identifier = str(default_user.identifier or "").strip()
            if not identifier:
                log.warning("single sign-on through %s refused: no user identifier", provider_id)
                return None
            if problem := sso_refusal(
                identifier, raw_user_data, settings.sso_domains, settings.sso_groups
            ):
                log.warning("single sign-on of %r refused: %s", identifier, problem)
                return None
            display = str(
                raw_user_data.get("name")
                or raw_user_data.get("preferred_username")
                or default_user.display_name
                or identifier
            )
            subject = raw_user_data.get("sub") or raw_user_data.get("id")
            try:
                account = await store.sign_in_external(
                    identifier,
                    provider=f"sso:{provider_id}",
                    subject=str(subject) if subject else None,
                    display_name=display,
                    needs_approval=not admitted_without_approval(
                        identifier, raw_user_data, settings
                    ),
                )
            except AwaitingApproval:
                log.warning(
                    "single sign-on of %r refused: waiting for an administrator's approval "
                    "(/reqstudio/admin or `reqstudio users approve NAME`)",
                    identifier,
                )
                note_awaiting_approval()
                return None
            if account is None:
                log.warning(
                    "single sign-on of %r refused: account disabled or held by another sign-in",
                    identifier,
                )
                return None
            log.info("single sign-on of %r through %s", identifier, provider_id)
            return new_user(identifier, provider_id, display)

    if proxies:
        trust_header_sign_in_from(proxies)  # the checked /auth/header believes these only
        header = settings.proxy_user_header

        @cl.header_auth_callback
        async def proxy_user(headers) -> cl.User | None:
            name = (headers.get(header) or "").strip()
            if not name or len(name) > 200 or not name.isprintable():
                log.warning("header sign-in refused: no usable %s header", header)
                return None
            account = await store.sign_in_external(
                name, provider="proxy", subject=None, display_name=None
            )
            if account is None:
                log.warning(
                    "header sign-in of %r refused: account disabled or not a proxy one", name
                )
                return None
            log.info("header sign-in of %r through a trusted proxy", name)
            return new_user(name, "proxy", account.display_name)

    if not sign_in.configured:
        # On one's own machine: no login form, one local user, and the history sidebar works.
        @cl.header_auth_callback
        def local_user(headers) -> cl.User:
            return the_local_user()

    return sign_in


# identifier -> when it was last found enabled, shared by the guard and the admin routes
_FOUND_ENABLED: dict[str, float] = {}


def forget_account_check(identifier: str) -> None:
    """An account changed on this instance: check it again at its next request."""
    _FOUND_ENABLED.pop(identifier, None)


class DisabledAccountGuard:
    """ASGI middleware: a signed-in token of an account disabled since is refused (401, or a
    closed socket handshake) on every route, not only at the next sign-in. An account found
    enabled is checked again after `RECHECK_S` seconds (at once after a change made on this
    instance), a disabled one at every request."""

    RECHECK_S = 2.0

    def __init__(self, app: ASGIApp, store: AccountStore):
        self.app = app
        self.store = store

    async def _disabled(self, identifier: str) -> bool:
        now = time.monotonic()
        if now - _FOUND_ENABLED.get(identifier, -self.RECHECK_S) < self.RECHECK_S:
            return False
        account = await self.store.get(identifier)
        if account is not None and account.disabled:
            return True
        if len(_FOUND_ENABLED) > 10_000:  # forget old entries rather than grow without bound
            _FOUND_ENABLED.clear()
        _FOUND_ENABLED[identifier] = now
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = guarded_token(scope)
        try:  # the signature is Chainlit's to check; this only refuses more
            identifier = jwt.decode(token, options={"verify_signature": False})["identifier"]
        except (jwt.PyJWTError, KeyError, TypeError):
            identifier = None
        if not identifier or not await self._disabled(str(identifier)):
            await self.app(scope, receive, send)
            return
        await refuse(scope, send, 401, "account disabled")
