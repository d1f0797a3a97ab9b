"""Whether an author's answer can replace its section (issue 16, item 6).

An author is asked for the section's new body. Answers seen instead: JSON (`{"improvements":
[]}` replaced 13 lines of a purpose section), a fragment, and a revision that silently dropped
requirement FR-3. Such an answer is asked again once, then rejected: the section keeps its
text. Removing is fine only where a task asks for it."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from agents.review.models import SpecificTask

# FR-3, NFR-12, REQ-001, UC-2.1, SEC-PWD-01: letters, a dash, a number. Lookarounds rather than
# \b, which does not fall between CJK characters and Latin letters ("需求FR-3应").
REQUIREMENT_ID = re.compile(
    r"(?<![A-Za-z0-9_-])[A-Z][A-Z0-9]{0,9}(?:-[A-Z][A-Z0-9]{0,9})*-\d+(?:\.\d+)*(?![\d])"
)
# Words of a task that asks to remove or shorten, in English and Chinese.
REMOVAL_WORDS = re.compile(
    r"\b(?:remove|removes|removing|delete|deleting|drop|dropping|omit|shorten|merge|"
    r"consolidate|split|move)\b|删除|删去|删掉|去掉|去除|移除|删减|精简|合并|拆分|移到|移至",
    re.IGNORECASE,
)
# An answer below this share of the section's length is a fragment, unless a task removes.
MIN_LENGTH_SHARE = 0.4
# Sections shorter than this (characters) are not judged by length: one line may well shrink.
MIN_JUDGED_CHARS = 120
_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.DOTALL)


def requirement_ids(text: str) -> list[str]:
    return list(dict.fromkeys(REQUIREMENT_ID.findall(text)))


def is_json(text: str) -> bool:
    """The whole answer is a JSON object or array (fenced or not): data, not a section."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    if not body.startswith(("{", "[")):
        return False
    try:
        return isinstance(json.loads(body), dict | list)
    except ValueError:
        return False


def _task_text(task: SpecificTask) -> str:
    return f"{task.category} {task.instruction} {task.validation}"


def asks_removal(tasks: Sequence[SpecificTask]) -> bool:
    return any(REMOVAL_WORDS.search(_task_text(t)) for t in tasks)


def removable_ids(tasks: Sequence[SpecificTask]) -> set[str]:
    """Requirement ids that a task both names and asks to remove (or merge, move...)."""
    return {
        rid
        for task in tasks
        if REMOVAL_WORDS.search(_task_text(task))
        for rid in requirement_ids(_task_text(task))
    }


def rejection_reason(before: str, after: str, tasks: Sequence[SpecificTask]) -> str | None:
    """Why `after` cannot replace `before` (None: it can)."""
    if not after.strip():
        return "the answer was empty"
    if is_json(after):
        return "the answer is JSON, not the section's text"
    old, new = before.strip(), after.strip()
    if (
        len(old) >= MIN_JUDGED_CHARS
        and len(new) < MIN_LENGTH_SHARE * len(old)
        and not asks_removal(tasks)
    ):
        return (
            f"the answer is a fragment: {len(new)} characters for a section of {len(old)}, "
            "and no task asks to remove anything"
        )
    kept = set(requirement_ids(after))
    lost = [rid for rid in requirement_ids(before) if rid not in kept]
    lost = [rid for rid in lost if rid not in removable_ids(tasks)]
    if lost:
        return f"requirement id(s) {', '.join(lost)} were dropped, and no task asks to remove them"
    return None
