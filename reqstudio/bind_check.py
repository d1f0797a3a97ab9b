"""Without sign-in every visitor is the one local user, so the app serves this machine only.

The rule is checked against the sockets the process really listens on, once the server has
bound them, whatever started it (`chainlit run --host`, `CHAINLIT_HOST`, an ASGI server started
by hand, a launcher of our own): a variable can say one address while the server listens on
another. The check lives in the app's own start-up hook and middleware, so every launcher of
the app gets it without code of its own.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import signal
import socket
import sys
from collections.abc import Iterable

log = logging.getLogger("reqstudio")

Address = tuple[str, int]

# How often and how long to look for the server's sockets after the app's start-up hook.
# ASGI servers call that hook before they bind (uvicorn binds within milliseconds after it);
# a server that listens only on a Unix socket never shows a TCP one, hence the bound.
LOOK_EVERY = 0.05
LOOK_FOR = 60.0

# The exit code of a refused start-up, as for a bad setting.
REFUSED_EXIT_CODE = 2


def is_loopback_host(host: str) -> bool:
    """Whether an address (or the host a server was told to bind) keeps the app on this
    machine. A Unix socket's path is local; a host name is assumed to reach elsewhere."""
    if host in ("localhost", "") or host.startswith("/"):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # ::ffff:127.0.0.1, as a dual-stack socket reports it
    return address.is_loopback


def anonymous_network_problem(host: str, has_sign_in: bool, allowed: bool) -> str | None:
    """Why the app must not serve: listening beyond loopback with every visitor the local
    user."""
    if has_sign_in or allowed or is_loopback_host(host):
        return None
    return (
        f"the app would listen on {host} with no sign-in, serving every thread to anyone who "
        "reaches it. Configure sign-in (`reqstudio users add NAME`, or single sign-on with "
        "OAUTH_* variables), bind to 127.0.0.1, or set REQSTUDIO_ALLOW_ANONYMOUS_NETWORK=true "
        f"to accept that. / 未配置登录时不能监听 {host}：请用 `reqstudio users add 用户名` "
        "添加用户或配置单点登录（OAUTH_* 变量）、改为 127.0.0.1，或明确设置 "
        "REQSTUDIO_ALLOW_ANONYMOUS_NETWORK=true。"
    )


def _open_descriptors() -> list[int]:
    for folder in ("/proc/self/fd", "/dev/fd"):  # Linux, then macOS and the BSDs
        try:
            return sorted(int(name) for name in os.listdir(folder))
        except (OSError, ValueError):
            continue
    return []


def listening_addresses() -> list[Address]:
    """(host, port) of every TCP socket this process listens on, read from its own file
    descriptors (so in any network namespace, and whoever created the socket)."""
    found: list[Address] = []
    for fd in _open_descriptors():
        try:
            sock = socket.socket(fileno=fd)  # wraps the descriptor; detach() leaves it open
        except OSError:
            continue  # not a socket, or closed meanwhile
        try:
            if (
                sock.family in (socket.AF_INET, socket.AF_INET6)
                and sock.type == socket.SOCK_STREAM
                and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
            ):
                host, port = sock.getsockname()[:2]
                found.append((host, port))
        except OSError:
            pass
        finally:
            sock.detach()
    return found


def beyond_loopback(addresses: Iterable[Address]) -> list[Address]:
    return [(host, port) for host, port in addresses if not is_loopback_host(host)]


class AnonymousNetworkCheck:
    """The rule for one app process: with no sign-in, refuse to serve beyond loopback unless
    `REQSTUDIO_ALLOW_ANONYMOUS_NETWORK` accepts it."""

    def __init__(self, has_sign_in: bool, allowed: bool):
        self.has_sign_in = has_sign_in
        self.allowed = allowed
        self.refused: str | None = None

    @property
    def local_only(self) -> bool:
        """Whether requests must come in on a loopback address."""
        return not (self.has_sign_in or self.allowed)

    def problem_with(self, addresses: Iterable[Address]) -> str | None:
        exposed = beyond_loopback(addresses)
        if not exposed:
            return None
        return anonymous_network_problem(exposed[0][0], self.has_sign_in, self.allowed)

    async def check_once_listening(self) -> None:
        """Wait until the process listens on TCP, then apply the rule: refuse (one line on
        stderr, then the server is stopped as by `kill`, and `exit_if_refused` in the app's
        shutdown hook ends the process with exit code 2) or, when anonymous access beyond
        loopback is allowed, warn."""
        addresses: list[Address] = []
        for _ in range(int(LOOK_FOR / LOOK_EVERY)):
            if addresses := listening_addresses():
                break
            await asyncio.sleep(LOOK_EVERY)
        else:
            log.debug("no TCP listening socket found; requests are checked one by one")
            return
        log.info("listening on %s", ", ".join(f"{host}:{port}" for host, port in addresses))
        if problem := self.problem_with(addresses):
            self.refused = problem
            print(f"ReqStudio will not start: {problem}", file=sys.stderr, flush=True)
            # The ASGI server shuts down as on `kill`: the app's shutdown hook still runs.
            os.kill(os.getpid(), signal.SIGTERM)
        elif not self.has_sign_in and (exposed := beyond_loopback(addresses)):
            log.warning(
                "no sign-in and REQSTUDIO_ALLOW_ANONYMOUS_NETWORK=true: every visitor who "
                "reaches %s is the one local user and sees every thread",
                ", ".join(f"{host}:{port}" for host, port in exposed),
            )

    def exit_if_refused(self) -> None:
        """At the end of the app's shutdown hook: a refused start-up exits with code 2
        (Chainlit's own shutdown would end the process with 0)."""
        if self.refused:
            sys.stderr.flush()
            os._exit(REFUSED_EXIT_CODE)
