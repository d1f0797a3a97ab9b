"""A word-level diff of two texts, English or Chinese, with no dependency beyond the standard
library: English by words (a word, a number, or one mark of punctuation), Chinese by
character, since it has no spaces and a segmenter is a heavy dependency; neighbouring changed
characters come out as one change ("操作员" -> "用户"), which reads as words do.

    word_diff("The operator shall log in.", "The user shall log in.")
    -> [DiffOp("equal", "The ", "The "), DiffOp("replace", "operator", "user"),
        DiffOp("equal", " shall log in.", " shall log in.")]
    render_word_diff(...) -> "The [-operator-]{+user+} shall log in."   (git's --word-diff)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

# a Latin word (with inner hyphens and apostrophes), a number, one CJK character, or any
# other non-space character; the spaces after a token belong to it
_TOKEN = re.compile(
    r"(?:[A-Za-z0-9]+(?:['’.,-][A-Za-z0-9]+)*|[\u3400-\u9fff\uf900-\ufaff]|[^\sA-Za-z0-9])\s*"
    r"|\s+"
)


@dataclass(frozen=True)
class DiffOp:
    """One run of a word diff: "equal", "delete" (only in the old text), "insert" (only in
    the new one) or "replace"; the old and the new words as written, spaces included."""

    tag: str
    old: str
    new: str


def tokens(text: str) -> list[str]:
    """`text` cut into words (spaces after each kept with it): joining them gives `text`."""
    return _TOKEN.findall(text)


def word_diff(old: str, new: str) -> list[DiffOp]:
    """The runs of words that stay, go, come or are replaced from `old` to `new`; compared
    without the spaces and case of each word, shown as written."""
    a, b = tokens(old), tokens(new)
    matcher = SequenceMatcher(
        None, [t.strip().casefold() for t in a], [t.strip().casefold() for t in b], autojunk=False
    )
    ops = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        ops.append(DiffOp(tag, "".join(a[i1:i2]), "".join(b[j1:j2])))
    return ops


def changed_words(old: str, new: str) -> tuple[list[str], list[str]]:
    """The words only `old` has and those only `new` has, stripped, in order."""
    gone, came = [], []
    for op in word_diff(old, new):
        if op.tag in ("delete", "replace"):
            gone.append(op.old.strip())
        if op.tag in ("insert", "replace"):
            came.append(op.new.strip())
    return gone, came


def render_word_diff(ops: list[DiffOp] | tuple[str, str]) -> str:
    """The diff as one line: removed words in `[-…-]`, added in `{+…+}` (git's
    `--word-diff=plain`). Takes the ops of `word_diff`, or the two texts."""
    if isinstance(ops, tuple):
        ops = word_diff(*ops)
    out = []
    for n, op in enumerate(ops):
        if op.tag == "equal":
            # the spaces of the side that goes on: the old one's before words it lost
            following = ops[n + 1].tag if n + 1 < len(ops) else "equal"
            out.append(op.old if following == "delete" else op.new)
            continue
        if op.tag == "replace":  # one space after both: "[-operator-]{+user+} shall"
            out.append(f"[-{op.old.rstrip()}-]")
        elif op.tag == "delete":
            out.append(_marked("[-", op.old, "-]"))
        if op.tag in ("insert", "replace"):
            out.append(_marked("{+", op.new, "+}"))
    return "".join(out)


def _marked(opening: str, words: str, closing: str) -> str:
    """The words between the marks, the spaces after them outside."""
    stripped = words.rstrip()
    return f"{opening}{stripped}{closing}{words[len(stripped) :]}"
