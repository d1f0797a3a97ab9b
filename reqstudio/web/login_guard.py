"""Failed sign-ins are limited per user name and per client address, and logged.

Chainlit's `POST /login` answers every try at once. Here a user name with `USER_LIMIT` failed
tries in a row, or an address with `ADDRESS_LIMIT`, is refused (429, `Retry-After`) until a
wait has passed since its last failure: `FIRST_WAIT_S`, doubling with each further failure, at
most `MAX_WAIT_S`. A successful sign-in clears its user name's count (not the address's: one
good password does not reopen an address that tried twenty). Every failure and refusal is
logged with the user name and address, never the password. Counts live in the process: each
instance behind a proxy counts for itself.

A sign-in that would wait behind `accounts.MAX_IN_LINE` others for its password check (one at
a time, about 0.15 s each) is answered 429 at once, with `Retry-After` and a sentence in the
browser's language, instead of joining a line without a bound."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated

from chainlit import server as chainlit_server
from fastapi import APIRouter, Depends, HTTPException, Request, Response
from fastapi.security import OAuth2PasswordRequestForm

from reqstudio import accounts
from reqstudio.errors import describe_sign_in_busy
from reqstudio.web.outage import database_unavailable, request_language, sign_in_database_failure

log = logging.getLogger("reqstudio.login")

USER_LIMIT = 5
BUSY_RETRY_AFTER_S = 5  # when `accounts.MAX_IN_LINE` sign-ins are already in line
ADDRESS_LIMIT = 20
FIRST_WAIT_S = 30.0
MAX_WAIT_S = 900.0


@dataclass
class Failures:
    count: int = 0
    last: float = 0.0


@dataclass
class LoginAttempts:
    """Failed tries per key (`user:<name>`, `address:<ip>`) and the wait they impose."""

    clock: Callable[[], float] = time.monotonic
    failures: dict[str, Failures] = field(default_factory=dict)

    def _wait(self, key: str, limit: int) -> float:
        record = self.failures.get(key)
        if record is None or record.count < limit:
            return 0.0
        wait = min(FIRST_WAIT_S * 2 ** (record.count - limit), MAX_WAIT_S)
        return max(0.0, record.last + wait - self.clock())

    def refusal(self, user: str, address: str) -> float:
        """Seconds until this user name and address may try again (0: now)."""
        return max(
            self._wait(f"user:{user}", USER_LIMIT), self._wait(f"address:{address}", ADDRESS_LIMIT)
        )

    def failed(self, user: str, address: str) -> None:
        now = self.clock()
        for key in (f"user:{user}", f"address:{address}"):
            record = self.failures.setdefault(key, Failures())
            record.count += 1
            record.last = now

    def succeeded(self, user: str) -> None:
        self.failures.pop(f"user:{user}", None)


ATTEMPTS = LoginAttempts()
router = APIRouter()


@router.post("/login")
async def login(
    request: Request,
    response: Response,
    form_data: Annotated[OAuth2PasswordRequestForm, Depends()],
):
    user = form_data.username
    address = request.client.host if request.client else "unknown"
    if accounts.hashes_in_line() >= accounts.MAX_IN_LINE:
        log.warning("sign-in of %r from %s refused: %d sign-ins in line", user, address,
                    accounts.hashes_in_line())  # fmt: skip
        raise HTTPException(
            status_code=429,
            detail=describe_sign_in_busy(request_language(request)),
            headers={"Retry-After": str(BUSY_RETRY_AFTER_S)},
        )
    wait = ATTEMPTS.refusal(user, address)
    if wait > 0:
        log.warning("sign-in refused for %r from %s: too many failed tries", user, address)
        raise HTTPException(
            status_code=429,
            detail="too many failed sign-ins; try again later",
            headers={"Retry-After": str(math.ceil(wait))},
        )
    try:
        answer = await chainlit_server.login(request, response, form_data)
    except HTTPException as error:
        if error.status_code == 401 and (cause := sign_in_database_failure()) is not None:
            # the accounts could not be read: said in the user's language (503), not counted
            log.warning("sign-in of %r refused: the database is unavailable (%r)", user, cause)
            raise database_unavailable(request, "sign_in") from None
        if error.status_code == 401:
            ATTEMPTS.failed(user, address)
            log.warning("failed sign-in for %r from %s", user, address)
        raise
    ATTEMPTS.succeeded(user)
    return answer
