"""The harness every mode's CLI runs through (`reqstudio/cli.py`): one set of exit codes, the
set-up refused with exit 2 and one line the same way in every mode, and writes that fall back
to another folder when the asked path fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reqstudio.cli import (
    EXIT_FAILED,
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_WITHOUT_PASS,
    write_with_fallback,
)
from tests.cli_support import cli_env, run_reqstudio

COMMAND_LINE = Path(__file__).resolve().parent.parent / "docs" / "command-line.md"


def test_the_exit_codes_are_the_documented_table():
    codes = (
        EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_WITHOUT_PASS, EXIT_INTERRUPTED
    )  # fmt: skip
    assert codes == (0, 1, 2, 3, 4, 130)
    text = COMMAND_LINE.read_text(encoding="utf-8")
    assert text.count("| exit code | meaning | which commands |") == 1  # listed once
    table = text.split("| exit code | meaning | which commands |")[1]
    rows = [line for line in table.splitlines()[2:8]]
    assert [row.split("|")[1].strip() for row in rows] == [str(code) for code in codes]


def test_a_write_that_fails_goes_to_the_first_folder_that_takes_it(tmp_path):
    missing = tmp_path / "gone" / "srs.md"
    unusable = tmp_path / "a-file"
    unusable.write_text("", encoding="utf-8")
    fallback = tmp_path / "fallback"
    where, problem = write_with_fallback(missing, "text", [unusable / "x", fallback], "kept.md")
    assert where == fallback / "kept.md" and where.read_text(encoding="utf-8") == "text"
    assert isinstance(problem, FileNotFoundError)


def test_a_write_that_works_needs_no_fallback(tmp_path):
    target = tmp_path / "out.md"
    assert write_with_fallback(target, "text", [tmp_path / "never"]) == (target, None)
    assert not (tmp_path / "never").exists()


def test_a_write_that_fails_everywhere_says_so(tmp_path):
    missing = tmp_path / "gone" / "out.md"
    # the same file again is no fallback; a folder under a file cannot be made
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    where, problem = write_with_fallback(missing, "text", [missing.parent, tmp_path / "a-file"])
    assert where is None and isinstance(problem, OSError)


@pytest.mark.parametrize(
    "args",
    [
        ["chat", "hello"],
        ["review", "--doc", "{doc}"],
        ["srs", "generate", "--input", "{doc}"],
        ["team", "write an SRS"],
    ],
    ids=lambda args: args[0],
)
def test_an_offline_model_that_cannot_start_exits_2_with_one_line_in_every_mode(tmp_path, args):
    document = tmp_path / "doc.md"
    document.write_text("# Shop\n\nCustomers order books.\n", encoding="utf-8")
    missing_model = tmp_path / "no-model.gguf"
    env = cli_env("", tmp_path, REQSTUDIO_LOCAL_MODEL_FILE=str(missing_model))
    del env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"]  # no provider: the offline model answers
    done = run_reqstudio("", tmp_path, *[a.format(doc=document) for a in args], env=env, timeout=60)
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stderr == f"reqstudio: the offline model file {missing_model} does not exist\n"
    assert done.stdout == ""


END_OF_A_RUN = """
import atexit, sys, threading, time
import reqstudio.cli
from pathlib import Path
from reqstudio.entry import run

marker = Path(sys.argv[1])

class Teardown:  # deallocated only by the interpreter's teardown, which the command skips
    def __del__(self):
        marker.with_suffix(".teardown").write_text("torn down", encoding="utf-8")

kept_until_teardown = Teardown()

def main():
    def late_handler():  # registered during the run, as the embedded model's stop is
        marker.write_text("atexit ran", encoding="utf-8")
    atexit.register(late_handler)
    def slow_writer():  # a non-daemon thread still working when main returns
        time.sleep(0.2)
        marker.with_suffix(".thread").write_text("thread done", encoding="utf-8")
    threading.Thread(target=slow_writer).start()
    sys.stdout.write("x" * 200_000)  # left in the buffer: flushed before the process ends
    return 3

reqstudio.cli.main = main
run()
"""


def test_the_command_ends_without_teardown_yet_loses_nothing(tmp_path):
    """`reqstudio.entry.run` ends the process with `os._exit` after the atexit handlers (the
    interpreter's teardown took 40-170 ms per command): the exit code is main's, buffered
    output is whole, late atexit handlers and non-daemon threads finish first."""
    marker = tmp_path / "marker.txt"
    done = subprocess.run(
        [sys.executable, "-c", END_OF_A_RUN, str(marker)], capture_output=True, timeout=60
    )
    assert done.returncode == 3, done.stderr.decode()
    assert done.stdout == b"x" * 200_000
    assert marker.read_text(encoding="utf-8") == "atexit ran"
    assert marker.with_suffix(".thread").read_text(encoding="utf-8") == "thread done"
    assert not marker.with_suffix(".teardown").exists()  # the teardown was skipped


def test_an_error_escaping_the_command_takes_the_normal_way_out(tmp_path):
    script = (
        "import reqstudio.cli\n"
        "from reqstudio.entry import run\n"
        "def main():\n"
        "    raise RuntimeError('boom')\n"
        "reqstudio.cli.main = main\n"
        "run()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert done.returncode == 1 and b"RuntimeError: boom" in done.stderr


def test_the_command_runs_with_young_collections_every_10000_allocations():
    # importing LangChain and the model client at CPython's 700 cost 0.24 s of collections
    script = (
        "import gc, reqstudio.cli\n"
        "from reqstudio.entry import run\n"
        "reqstudio.cli.main = lambda: print(gc.get_threshold()[0]) or 0\n"
        "run()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == b"10000", done.stderr
