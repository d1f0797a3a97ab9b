"""A large document checked on two processes gives the report one process gives
(reqstudio/check/parallel.py), also when the second process dies; and only where forking is
safe and pays."""

from __future__ import annotations

import json
import os
import threading

import pytest

from benchmarks.check_speed import synthetic_document
from reqstudio.check import parallel
from reqstudio.check.engine import check_document, check_requirement
from reqstudio.check.parse import parse_requirements
from tests.test_check import run_check


@pytest.fixture(scope="module")
def document(tmp_path_factory) -> tuple[str, object]:
    text = synthetic_document(2400)
    path = tmp_path_factory.mktemp("large") / "srs.md"
    path.write_text(text, encoding="utf-8")
    return text, path


def rules_on(requirements):
    return [finding for r in requirements for finding in check_requirement(r)]


def test_the_two_parts_are_what_one_process_finds(document):
    text, _ = document
    requirements = parse_requirements(text).requirements
    from reqstudio.check.cross import cross_findings

    findings, across = parallel.check_on_two_processes(requirements, rules_on, cross=True)
    assert findings == rules_on(requirements)
    assert across == cross_findings(requirements)
    assert across, "the document has findings across requirements to compare"
    # each names this process's requirements, not copies of them
    assert {id(r) for f in across for r in f.requirements} <= {id(r) for r in requirements}


def test_a_second_process_that_dies_leaves_its_part_to_this_one(document, monkeypatch):
    text, _ = document
    requirements = parse_requirements(text).requirements
    monkeypatch.setattr(parallel, "_second_part", lambda *args: os._exit(3))
    findings, across = parallel.check_on_two_processes(requirements, rules_on, cross=False)
    assert findings == rules_on(requirements)
    assert across == []


def test_the_command_on_two_processes_writes_the_report_of_one(document):
    """The command runs alone in its process: 2,400 requirements go to two processes on a
    machine of two cores (this one's)."""
    text, path = document
    done = run_check(str(path), "--json")
    assert done.returncode == 0, done.stderr
    alone = check_document(text.replace("\r\n", "\n")).as_dict()
    assert json.loads(done.stdout) == json.loads(json.dumps({"file": str(path), **alone}))


def test_only_a_large_document_in_a_process_of_one_thread_is_forked(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert not parallel.two_processes_help(parallel.PARALLEL_FROM - 1)
    waiting = threading.Event()
    other = threading.Thread(target=waiting.wait)
    other.start()
    try:
        assert not parallel.two_processes_help(parallel.PARALLEL_FROM)
    finally:
        waiting.set()
        other.join()
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert not parallel.two_processes_help(parallel.PARALLEL_FROM)


def test_a_second_process_that_fails_prints_nothing_and_this_one_does_its_part(
    document, monkeypatch, capfd
):
    text, _ = document
    requirements = parse_requirements(text).requirements

    def rules_failing_in_the_second(part):
        if os.getpid() != parent:
            raise RuntimeError("a rule failed")
        return rules_on(part)

    parent = os.getpid()
    findings, _ = parallel.check_on_two_processes(
        requirements, rules_failing_in_the_second, cross=False
    )
    assert findings == rules_on(requirements)
    assert "Traceback" not in capfd.readouterr().err
