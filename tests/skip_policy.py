"""No silent skips: with REQSTUDIO_NO_SKIPS=1 (set by `scripts/test.sh`, hence by `.ci/run`) a
skipped test fails, unless `tests/allowed_skips.toml` lists it with the reason its skip is
expected (the `allowed_skips` ini option names another list). A suite that skips what it could not start (PostgreSQL, the S3 server, Chromium, the
offline model) would otherwise pass in CI having tested less than it says.

The skip becomes a failure of the test (an error when it was skipped while setting up, as
fixtures do), whose message names the test, the reason it gave and the allow-list. A listed
entry is `test` (a node id; `*` matches any text) and a non-empty `reason`."""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

SWITCH = "REQSTUDIO_NO_SKIPS"


@dataclass(frozen=True)
class AllowedSkip:
    test: str
    reason: str

    def matches(self, nodeid: str) -> bool:
        pattern = ".*".join(re.escape(part) for part in self.test.split("*"))
        return re.fullmatch(pattern, nodeid) is not None


def read_allow_list(path: Path) -> list[AllowedSkip]:
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8")).get("skip", [])
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise pytest.UsageError(f"{path}: {error}") from None
    allowed = []
    for number, entry in enumerate(entries, 1):
        test, reason = entry.get("test"), entry.get("reason")
        if not (isinstance(test, str) and test.strip() and isinstance(reason, str)):
            raise pytest.UsageError(f"{path}: skip entry {number} needs `test` and `reason`")
        if not reason.strip():
            raise pytest.UsageError(f"{path}: skip entry {number} ({test}) gives no reason")
        allowed.append(AllowedSkip(test.strip(), reason.strip()))
    return allowed


def skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


class SkipPolicy:
    def __init__(self, allow_list: str, allowed: list[AllowedSkip]):
        self.allow_list = allow_list
        self.allowed = allowed

    def allows(self, nodeid: str) -> bool:
        return any(entry.matches(nodeid) for entry in self.allowed)

    def fail_unlisted(self, report: pytest.TestReport | pytest.CollectReport) -> None:
        if not report.skipped or hasattr(report, "wasxfail") or self.allows(report.nodeid):
            return
        report.outcome = "failed"
        report.longrepr = (
            f"skipped: {skip_reason(report)}. With {SWITCH}=1 a skip fails unless "
            f"{self.allow_list} lists the test with the reason; start what it needs instead "
            "(./scripts/test.sh installs it)."
        )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        self.fail_unlisted(report)
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector):
        report = yield
        self.fail_unlisted(report)
        return report


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "allowed_skips",
        f"TOML list of the tests that may be skipped when {SWITCH}=1, each with its reason",
        default="tests/allowed_skips.toml",
    )


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(SWITCH) == "1":
        allow_list = str(config.getini("allowed_skips"))
        allowed = read_allow_list(config.rootpath / allow_list)
        config.pluginmanager.register(SkipPolicy(allow_list, allowed), "skip-policy")
