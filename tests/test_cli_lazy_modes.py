"""A command imports only its own mode: `reqstudio review --help` loads Review mode's CLI module
and no other mode, and no command's start-up loads LangChain, LangGraph, the model client,
the settings, Chainlit or SQLAlchemy (its run imports them); a run imports its own engine and, of other
modes, only the two shared pieces named below (never Team, Chat or Agent for Review). Checked
on `sys.modules` in a fresh process."""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from reqstudio.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parent.parent
# Commands of a mode (not `users`, which is the app's own and belongs to no mode).
MODE_PACKAGES = {
    command.name: command.module.rsplit(".", 1)[0]
    for command in COMMANDS
    if command.module.startswith("reqstudio.modes.")
}
HEAVY = (
    "langchain_core",
    "langchain_openai",
    "langgraph",
    "openai",
    "chainlit",
    "sqlalchemy",
    "pydantic_settings",
)
SHOW_MODULES = """
import contextlib, io, json, sys
from reqstudio.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exit:  # --help
        code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def run_listing_modules(*argv: str) -> tuple[int, list[str], str]:
    """`reqstudio ARGV` in a fresh process: its exit code, the modules it imported, stderr."""
    done = subprocess.run(
        [sys.executable, "-c", SHOW_MODULES, *argv],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    return report["code"], report["modules"], done.stderr


def modules_after(*argv: str) -> list[str]:
    code, modules, stderr = run_listing_modules(*argv)
    assert code == 0, stderr
    return modules


def project_packages(modules: list[str]) -> set[str]:
    """The mode packages (reqstudio.modes.<mode>) among `modules`."""
    return {".".join(m.split(".")[:3]) for m in modules if m.startswith("reqstudio.modes.")}


def heavy(modules: list[str]) -> list[str]:
    return sorted({m.split(".")[0] for m in modules} & set(HEAVY))


def test_top_level_help_imports_no_mode():
    modules = modules_after("--help")
    assert project_packages(modules) == set()
    assert heavy(modules) == []


@pytest.mark.parametrize(
    "argv",
    [[command.name] for command in COMMANDS] + [["srs", "generate"]],
    ids=lambda argv: " ".join(argv),
)
def test_a_commands_help_imports_only_its_own_mode(argv: list[str]):
    modules = modules_after(*argv, "--help")
    own = {MODE_PACKAGES[argv[0]]} if argv[0] in MODE_PACKAGES else set()
    assert project_packages(modules) == own
    assert heavy(modules) == []


# Shared pieces that still live in a mode's package: the document reader (SRS) and the
# offline model's output bounds (Rewrite). Nothing else of another mode is imported by a run.
# The checker (reqstudio.check) is no mode: its requirement parser guards Review's and Rewrite's
# revisions (a revision keeps every requirement statement).
SHARED_FROM_OTHER_MODES = {
    "reqstudio.modes.srs",
    "reqstudio.modes.srs.documents",
    "reqstudio.modes.rewrite",
    "reqstudio.modes.rewrite.embedded",
    # Every mode's role declarations (temperature variables, retry policies), which the
    # settings are built from (`reqstudio.model_roles`): plain data, with their packages.
    *MODE_PACKAGES.values(),
    *(f"{package}.roles" for package in MODE_PACKAGES.values()),
}
# Each command as far as its argument checks: its run's imports are done, no model is called.
REFUSED_RUNS = {
    "agent": ["agent", " "],
    "srs generate": ["srs", "generate", "--input", "/nonexistent/input.md"],
    "review": ["review", "--doc", "/nonexistent/srs.md"],
    "rewrite": ["rewrite", "--original-doc", "/nonexistent/a.md", "--clarifications", "/x.json"],
    "team": ["team", " "],
}


@pytest.mark.parametrize("name", REFUSED_RUNS)
def test_a_commands_run_imports_no_other_mode(name: str):
    argv = REFUSED_RUNS[name]
    code, modules, stderr = run_listing_modules(*argv)
    assert code == 2 and stderr.startswith("reqstudio: "), stderr
    own = MODE_PACKAGES[argv[0]]
    # the run's imports happened (SRS's graph, and LangGraph with it, once its first request
    # has left: see the next test)
    assert own + ".cli" in modules and "langchain_core" in modules
    assert name == "srs generate" or "langgraph" in modules
    others = {m for m in modules if m.startswith("reqstudio.modes.") and not m.startswith(own)}
    assert others <= SHARED_FROM_OTHER_MODES
    assert not {"chainlit"} & {m.split(".")[0] for m in modules}


def test_the_srs_runs_graph_imports_no_other_mode():
    # `srs generate` imports its graph while the first request is in flight, after the checks
    done = subprocess.run(
        [sys.executable, "-c", "import json, sys, reqstudio.modes.srs.graph; "
         "print(json.dumps(sorted(sys.modules)))"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout)
    assert "langgraph" in modules
    others = {m for m in modules if m.startswith("reqstudio.modes.") and "modes.srs" not in m}
    assert others <= SHARED_FROM_OTHER_MODES
    assert not {"chainlit"} & {m.split(".")[0] for m in modules}


def test_each_commands_summary_is_the_one_its_module_registers():
    # The registry's line in `reqstudio --help` and the mode's own parser say the same.
    for command in COMMANDS:
        parser = build_parser([command.name])
        [subparsers] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        helps = {action.dest: action.help for action in subparsers._choices_actions}
        assert helps[command.name] == command.summary


def test_a_mode_registered_at_run_time_gets_its_command(tmp_path, monkeypatch):
    (tmp_path / "echo_mode_cli.py").write_text(
        "def register(subparsers):\n"
        "    parser = subparsers.add_parser('echo', help='say it back')\n"
        "    parser.add_argument('words')\n"
        "    parser.set_defaults(handler=lambda args: len(args.words))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("reqstudio.commands.COMMANDS", list(COMMANDS))
    from reqstudio import cli, commands

    cli.register_command(cli.Command("echo", "say it back", "echo_mode_cli"))

    assert cli.main(["echo", "four"]) == 4
    assert "echo_mode_cli" in sys.modules
    assert [c.name for c in commands.COMMANDS][-1] == "echo"


@pytest.mark.parametrize("package", [*MODE_PACKAGES.values(), "reqstudio.tools"])
def test_every_lazily_exported_name_resolves(package: str):
    module = importlib.import_module(package)
    assert module.__all__, package
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018
