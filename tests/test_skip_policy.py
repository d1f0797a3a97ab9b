"""No silent skips: with REQSTUDIO_NO_SKIPS=1 (the README's test command, hence CI) a skipped
test fails unless the allow-list names it with a reason. Checked on a small suite of its own,
run by pytest in a subprocess as CI runs the real one."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import postgres_support
from tests.apps import ROOT
from tests.cli_support import require_offline_model
from tests.skip_policy import read_allow_list
from tests.test_file_storage import MotoServer

SAMPLE_TESTS = """\
import pytest


def test_runs():
    pass


def test_skips_in_its_body():
    pytest.skip("no widget on this machine")


@pytest.mark.skipif(True, reason="the marker says no")
def test_skipped_by_a_marker():
    pass


@pytest.fixture
def missing_server():
    pytest.skip("server binaries not found")


def test_needs_a_server(missing_server):
    pass


def test_listed():
    pytest.skip("only some machines have it")


@pytest.mark.parametrize("name", ["a[1]", "b"])
def test_listed_by_pattern(name):
    pytest.skip("listed with a wildcard")


@pytest.mark.xfail(reason="a known bug, not a skip")
def test_expected_to_fail():
    assert False
"""

ALLOW_LIST = """\
[[skip]]
test = "test_sample.py::test_listed"
reason = "only some machines have it, and that is fine"

[[skip]]
test = "test_sample.py::test_listed_by_pattern[*]"
reason = "every parameter of it"
"""


def run_suite(
    folder: Path, files: dict[str, str], switch: str | None, allow_list: str = ALLOW_LIST
) -> tuple[int, str]:
    """pytest on `files` in `folder`, with the policy plugin and `allow_list`; its exit code
    and output."""
    (folder / "pytest.ini").write_text(
        "[pytest]\nallowed_skips = allowed.toml\nasyncio_default_fixture_loop_scope = function\n"
    )
    (folder / "allowed.toml").write_text(allow_list)
    for name, text in files.items():
        (folder / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "REQSTUDIO_NO_SKIPS"}
    env |= {"PYTHONPATH": str(ROOT), "COLUMNS": "300"}  # summary lines not cut short
    if switch is not None:
        env["REQSTUDIO_NO_SKIPS"] = switch
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.skip_policy", "-p", "no:cacheprovider",
         "-q", "-ra"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return result.returncode, result.stdout + result.stderr


def test_an_unlisted_skip_fails_the_run_and_says_which_test_and_why(tmp_path: Path):
    code, output = run_suite(tmp_path, {"test_sample.py": SAMPLE_TESTS}, switch="1")
    assert code == 1, output
    for outcome, test, reason in (
        ("FAILED", "test_skips_in_its_body", "no widget on this machine"),
        ("ERROR", "test_skipped_by_a_marker", "the marker says no"),
        ("ERROR", "test_needs_a_server", "server binaries not found"),
    ):
        start = f"{outcome} test_sample.py::{test} - skipped: {reason}. "
        line = next((line for line in output.splitlines() if line.startswith(start)), "")
        assert line, output
        assert "REQSTUDIO_NO_SKIPS=1" in line and "allowed.toml" in line
    assert "1 failed, 1 passed, 3 skipped, 1 xfailed, 2 errors" in output
    # The three listed skips (one test, two parameters of another) are the 3 skipped.
    assert not [
        line for line in output.splitlines() if "test_listed" in line and "was skip" in line
    ]


def test_without_the_switch_skips_pass_as_pytest_has_them(tmp_path: Path):
    for switch in (None, "0"):
        code, output = run_suite(tmp_path, {"test_sample.py": SAMPLE_TESTS}, switch)
        assert code == 0, output
        assert "1 passed, 6 skipped, 1 xfailed" in output


def test_a_listed_skip_passes(tmp_path: Path):
    listed_only = SAMPLE_TESTS.split("def test_skips_in_its_body")[0] + (
        "def test_listed():\n    pytest.skip('only some machines have it')\n"
    )
    code, output = run_suite(tmp_path, {"test_sample.py": listed_only}, switch="1")
    assert code == 0, output
    assert "1 passed, 1 skipped" in output


def test_a_module_that_skips_itself_fails_the_run(tmp_path: Path):
    module = (
        'import pytest\n\npytest.importorskip("no_such_module_here")\n\n\ndef test_x():\n    pass\n'
    )
    code, output = run_suite(tmp_path, {"test_module.py": module}, switch="1")
    assert code != 0, output
    assert "ERROR test_module.py - skipped: " in output and "no_such_module_here" in output


def test_an_allow_list_entry_without_a_reason_is_refused(tmp_path: Path):
    for allow_list in (
        '[[skip]]\ntest = "t.py::t"\n',
        '[[skip]]\ntest = "t.py::t"\nreason = " "\n',
    ):
        code, output = run_suite(tmp_path, {"test_sample.py": SAMPLE_TESTS}, "1", allow_list)
        assert code == 4, output  # a usage error: no test ran
        assert "skip entry 1" in output and "passed" not in output


def test_the_repository_allow_list_gives_a_reason_for_each_entry():
    for entry in read_allow_list(ROOT / "tests" / "allowed_skips.toml"):
        assert entry.reason and (ROOT / entry.test.split("::")[0]).is_file(), entry


def test_ci_and_the_readme_test_command_run_with_the_switch_on():
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'REQSTUDIO_NO_SKIPS=1 "$@"' in ci
    assert 'run_step "suite" ./scripts/test.sh\n' in ci
    assert (
        'export REQSTUDIO_NO_SKIPS="${REQSTUDIO_NO_SKIPS:-1}"'
        in (ROOT / "scripts" / "test.sh").read_text()
    )


# What the suite needs, missing: the tests that need it fail, they are not skipped.


def test_a_missing_offline_model_fails_its_tests(monkeypatch):
    real_find_spec = importlib.util.find_spec

    def without_llama_cpp(name, *args):
        return None if name == "llama_cpp" else real_find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_llama_cpp)
    with pytest.raises(pytest.fail.Exception, match=r"llama_cpp.*scripts/test\.sh"):
        require_offline_model()


def test_a_missing_s3_server_fails_its_tests(monkeypatch, tmp_path: Path):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))  # no moto_server beside
    with pytest.raises(pytest.fail.Exception, match=r"moto.*scripts/test\.sh"):
        MotoServer(tmp_path).start()


def test_a_missing_postgresql_server_fails_its_tests(monkeypatch):
    monkeypatch.setattr(postgres_support, "postgres_bin_dir", lambda: None)
    with pytest.raises(pytest.fail.Exception, match=r"postgresql.*scripts/test\.sh"):
        postgres_support.required_postgres_bin_dir()
