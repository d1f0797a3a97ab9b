"""A large document's checks on two processes, for `reqstudio check`.

On a document of 10,000 requirements the checks take about three seconds of one core: most of
it the rules run on each requirement (independent of one another), a fifth the checks across
requirements. A second process, forked after the document was read and parsed (it has the
requirements without copying them), runs the rules on the last part of the requirements and
the checks across requirements, while this one runs the rules on the first part; it sends
back its findings, and those across requirements by the requirements' positions, so that
the report holds this process's requirements, as one process would have made it.

Only the command line uses it: a web app's event loop and threads must not be forked. If
the second process cannot start or dies, this process does its part: the report is the same,
only slower."""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from reqstudio.check.cross import CrossFinding, cross_findings
from reqstudio.check.parse import Requirement

log = logging.getLogger("reqstudio.check")

PARALLEL_FROM = 2000  # requirements: below this a second process saves less than it costs
# the part of the requirements the second process runs the rules on, beside the checks across
# requirements: the two then take about as long (measured at 10,000: rules 1.7 s, across 0.6 s)
SECOND_SHARE = 0.3


def two_processes_help(requirements: int) -> bool:
    """Whether a document of `requirements` is checked faster on two processes here: large
    enough, a second core, forking available, and no other thread (a fork copies only this
    one, and a lock another held would stay held in the copy)."""
    return (
        requirements >= PARALLEL_FROM
        and (os.cpu_count() or 1) >= 2
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
    )


def check_on_two_processes(
    requirements: list[Requirement],
    rules_on: Callable[[list[Requirement]], list[Any]],
    cross: bool,
) -> tuple[list[Any], list[CrossFinding]]:
    """`rules_on(requirements)` and (if `cross`) `cross_findings(requirements)`, the second
    process running the rules on the last `SECOND_SHARE` and the checks across."""
    split = len(requirements) - int(len(requirements) * SECOND_SHARE)
    context = multiprocessing.get_context("fork")
    receiving, sending = context.Pipe(duplex=False)
    second = context.Process(
        target=_second_part, args=(sending, requirements, split, rules_on, cross), daemon=True
    )
    try:
        second.start()
    except OSError:
        log.warning("check: no second process; checking in this one", exc_info=True)
        return rules_on(requirements), cross_findings(requirements) if cross else []
    sending.close()
    first = rules_on(requirements[:split])
    try:
        later, across = receiving.recv()
    except (EOFError, OSError):  # it died: its part here
        log.warning("check: the second process ended without its findings; checking here")
        later = rules_on(requirements[split:])
        across = _by_position(cross_findings(requirements), requirements) if cross else []
    finally:
        receiving.close()
        second.join()
    return first + later, [_with_requirements(found, requirements) for found in across]


def _second_part(
    sending: Any,
    requirements: list[Requirement],
    split: int,
    rules_on: Callable[[list[Requirement]], list[Any]],
    cross: bool,
) -> None:
    # Whatever stops it here (an error, Ctrl-C reaching both processes) ends it without a
    # traceback of its own: this process then does its part, and says what went wrong, once.
    try:
        later = rules_on(requirements[split:])
        across = _by_position(cross_findings(requirements), requirements) if cross else []
        sending.send((later, across))
    except BaseException:
        os._exit(1)
    finally:
        sending.close()


def _by_position(found: list[CrossFinding], requirements: list[Requirement]) -> list[Any]:
    """The findings with each requirement given by its position: the other process's copies
    of the requirements are not this one's."""
    position = {id(requirement): n for n, requirement in enumerate(requirements)}
    return [replace(f, requirements=[position[id(r)] for r in f.requirements]) for f in found]


def _with_requirements(found: CrossFinding, requirements: list[Requirement]) -> CrossFinding:
    return replace(found, requirements=[requirements[n] for n in found.requirements])
