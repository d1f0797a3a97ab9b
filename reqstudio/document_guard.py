"""Is a model's answer a document, or the prompt given back?

Small models, asked for a document, often answer with the prompt that asked: its instructions
("你是一位资深的技术文档作者，正在按照既定大纲逐节撰写…"), its placeholders ("Title of the new
document", "<section written so far>", "The <system> shall <response>"), or the data it was
given, serialized ("IEEE Std 830-1998 [JSON] [FR-01, FR-02, FR-03]", a JSON list). Every mode
that writes a document asks `document_problem` with the prompt templates its answer came from;
the check is derived from those templates' own fixed text, not from a list of phrases per mode.

A template's fixed text is what the template says whatever it is given: its literal text and
the string constants of its expressions (Jinja's AST), through its includes; the values it is
rendered with (the background, the document under review) are not part of it, since a document
may well repeat them. An answer's share of echo is the share of its text (letters, digits and
CJK characters) that falls in
  - runs of words from the fixed text (four tokens, or six CJK characters, in a row),
  - a whole line or field that is a piece of the fixed text ("Section title", "章节标题"),
  - placeholders (`<words>`, `{slot}`, `{{ slot }}`),
  - serialized structures where prose belongs (JSON, YAML, Python reprs, `[FR-01, FR-02]`).
At `ECHO_LIMIT` or more, the answer is not a document.

Calibration (tests/test_document_guard.py measures it again), over the real documents of
`tests/data/` and the 74 cases of `cases/pure/` (inputs and references): whole documents
against DocGenerate's prompt measure 0.05 at most; their 1 100 sections against the section
writers' prompts (Rewrite's fill and patch, Review's author) 0.19 at most (a form's `<project
name>` fields). Cut finer, into 9 500 paragraphs, 4 reach 0.5 (a page of `[pic]`, C code, a
form of `<e.g. ...>` fields): what the section or the original itself holds is not counted
(`material`). The offline model's junk and the prompt files' own lines given back measure 0.9
and more.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from jinja2 import nodes

from reqstudio.failures import Failure, FailureCode, render
from reqstudio.prompts import parse_prompt

ECHO_LIMIT = 0.5
# Runs of this many tokens in a row, found in the fixed text, are its words; a token is a word
# of letters or digits, or one CJK character (six of those in a row: four is a common phrase).
RUN_TOKENS = 4
RUN_CJK = 6
# A whole line (or field) is a piece of the fixed text when it has at least this many tokens.
PIECE_TOKENS = 2
PIECE_CJK = 3

_TOKEN = re.compile(r"[A-Za-z0-9]+|[\u3400-\u9fff]")
_CJK = re.compile(r"[\u3400-\u9fff]")
# Text a share is counted on: letters, digits, CJK (not spaces, punctuation, Markdown marks).
_COUNTED = re.compile(r"[A-Za-z0-9\u3400-\u9fff]")
# `<section written so far>`, `<系统>`, `{title}`, `{{ title }}`: a template's holes.
# (Not markup, which has `/` or `=`, nor a link `<https://...>` or `<a@b.c>`.)
_PLACEHOLDER = re.compile(
    r"<(?!br\b|hr\b|img\b|a\b|p\b|details\b|summary\b|sup\b|sub\b)"
    r"[A-Za-z\u3400-\u9fff][^<>/=@:\n]{0,60}>"
    r"|\{\{[^{}\n]{1,60}\}\}|\{%[^{}\n]{1,60}%\}|\{[A-Za-z_][\w.]{0,40}\}"
)
# A requirement id, as in a list of them: FR-01, NFR-PERF-2, REQ_12.
_ID = r"[A-Z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*[-_]\d+(?:\.\d+)*"
# `[FR-01, FR-02, …]`, `[JSON]`, `["a", "b"]`: a list or a tag in brackets where prose belongs
# (not a Markdown link `[text](url)`, a task box `[ ]` / `[x]`, or a footnote `[^1]`).
_BRACKETED = re.compile(
    r"\[\s*(?:" + _ID + r"|\.\.\.|…)(?:\s*[,，、;]\s*(?:" + _ID + r"|\.\.\.|…))*\s*\](?!\()"
    r"|\[[A-Z]{2,12}\](?!\()"
    r"|\[\s*(?:\"[^\"\n]*\"|'[^'\n]*')(?:\s*,\s*(?:\"[^\"\n]*\"|'[^'\n]*'))*\s*\](?!\()"
)
# A line of serialized data: JSON/YAML/Python punctuation, a "key": value or key: value pair
# with an identifier as its key, a repr.
_STRUCTURE_LINE = re.compile(
    r"""^\s*(?:
        [\[\]{}(),]+                                  # brackets alone
      | ["'][^"'\n]*["']\s*:\s*.*                     # "key": value
      | ["'][^"'\n]*["']\s*,?\s*                      # "item",
      | -?\s*[a-z_][a-z0-9_]{0,30}:(?:\s.*)?           # yaml key: value (id: FR-1)
      | [A-Z][A-Za-z]+\((?:[a-z_]+=.*)\)\s*,?         # Requirement(id='FR-1', ...)
      | [{\[].*[}\]]\s*,?                             # a one-line object or list
    )\s*$""",
    re.VERBOSE,
)
_FENCE = re.compile(r"^\s*(```|~~~)")
_ECHO, _STRUCTURE = 1, 2  # what covers a character of the answer
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")


@dataclass(frozen=True)
class EchoMeasure:
    """How much of an answer is not its own text: `echoed` (the prompt's fixed text and
    placeholders) and `structured` (serialized data), as shares of the answer's counted
    characters; `examples` are a few of the pieces counted, for the message."""

    echoed: float
    structured: float
    examples: tuple[str, ...] = ()

    @property
    def share(self) -> float:
        return self.echoed + self.structured


@dataclass(frozen=True)
class NotADocumentReason:
    """Why an answer is not a document: `kind` is "empty", "headings_only", "json" (a section
    that is JSON), "json_document" or "echo" (the prompt given back, or data where prose
    belongs: `measure` says how much)."""

    kind: str
    measure: EchoMeasure | None = None

    @property
    def failure(self) -> Failure:
        """The reason as a failure code and values (the examples quoted, "—" for none)."""
        values: dict[str, object] = {"kind": self.kind}
        if self.measure is not None:
            examples = tuple(f"“{e}”" for e in self.measure.examples) or ("—",)
            values |= {"share": round(100 * self.measure.share), "examples": examples}
        return Failure(FailureCode.NOT_A_DOCUMENT, values)

    def text(self, language: str = "en") -> str:
        return render(self.failure, language)

    def __str__(self) -> str:
        return self.text("en")


class Refusal(Protocol):
    """Why an answer is no document: a `NotADocumentReason`, or a revision's refusal
    (`reqstudio.check.keeping.RevisionRefusal`, which uses this module: named here by its
    shape, not imported)."""

    @property
    def failure(self) -> Failure: ...

    def text(self, language: str = "en") -> str: ...


class NotADocumentError(ValueError):
    """A writer's answer, asked again within its role's policy, was no document: `reason`
    says why (`text(language)` in either language)."""

    cause_code = "not_a_document"  # why the document is asked for again (reqstudio.waits)
    remedy = "model"  # the same model would most likely write the same (reqstudio.errors)

    def __init__(self, reason: Refusal, label: str = ""):
        super().__init__(f"{label + ': ' if label else ''}{reason}")
        self.reason = reason

    def text(self, language: str = "en") -> str:
        return self.reason.text(language)

    @property
    def failure(self) -> Failure:
        """What `reqstudio.errors.describe_failure` tells the user."""
        return self.reason.failure


# --- a template's fixed text --------------------------------------------------------------


@cache
def fixed_text(template: str) -> tuple[str, ...]:
    """The pieces of `reqstudio/prompts/<template>` that do not depend on what it is rendered with: its
    literal text and its string constants, through its includes."""
    pieces: list[str] = []
    for node in parse_prompt(template).find_all((nodes.TemplateData, nodes.Const, nodes.Include)):
        if isinstance(node, nodes.Include):
            included = node.template
            if isinstance(included, nodes.Const) and isinstance(included.value, str):
                pieces.extend(fixed_text(included.value))
        elif isinstance(node, nodes.TemplateData):
            pieces.append(node.data)
        elif isinstance(node.value, str) and len(node.value) > 1:
            pieces.append(node.value)
    return tuple(p for p in pieces if _TOKEN.search(p))


def _tokens(text: str) -> list[re.Match[str]]:
    return list(_TOKEN.finditer(text))


def _key(tokens: Sequence[re.Match[str]]) -> str:
    return " ".join(t.group().lower() for t in tokens)


@dataclass(frozen=True)
class _Fixed:
    runs: frozenset[str]
    joined: str  # every piece's tokens, space-separated, pieces apart: for whole lines


@cache
def _fixed(templates: tuple[str, ...]) -> _Fixed:
    runs: set[str] = set()
    joined: list[str] = []
    for template in templates:
        for piece in fixed_text(template):
            for line in piece.splitlines() or [piece]:
                tokens = _tokens(line)
                joined.append(" " + _key(tokens) + " ")
                for size in (RUN_TOKENS, RUN_CJK):
                    for start in range(len(tokens) - size + 1):
                        runs.add(_key(tokens[start : start + size]))
    return _Fixed(frozenset(runs), "\n".join(joined))


# --- measuring an answer -------------------------------------------------------------------


def _structure_lines(lines: list[str]) -> set[int]:
    """Indexes of the lines that are serialized data: a fenced block that parses as JSON,
    or lines of data punctuation (two or more in a row, or one holding a whole object)."""
    found: set[int] = set()
    index = 0
    while index < len(lines):
        if _FENCE.match(lines[index]):
            end = next((j for j in range(index + 1, len(lines)) if _FENCE.match(lines[j])), None)
            if end is not None and _is_json("\n".join(lines[index + 1 : end])):
                found.update(range(index, end + 1))
                index = end + 1
                continue
        index += 1
    data = [bool(_STRUCTURE_LINE.match(line)) and bool(line.strip()) for line in lines]
    for i, is_data in enumerate(data):
        if not is_data:
            continue
        neighbours = (i > 0 and data[i - 1]) or (i + 1 < len(data) and data[i + 1])
        stripped = lines[i].strip()
        if neighbours or (stripped[:1] in "[{" and _is_data(stripped)):
            found.add(i)
    return found


def _is_data(text: str) -> bool:
    """JSON, or a Python literal (a repr of a list or a dict)."""
    if _is_json(text):
        return True
    try:
        return isinstance(ast.literal_eval(text), dict | list)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _is_json(text: str) -> bool:
    body = text.strip()
    if not body or body[0] not in "[{":
        return False
    try:
        return isinstance(json.loads(body), dict | list)
    except ValueError:
        return False


def _mark(covered: bytearray, start: int, end: int, value: int) -> None:
    for i in range(start, end):
        if not covered[i]:
            covered[i] = value


_UNCOUNTED = re.compile(r"[^A-Za-z0-9\u3400-\u9fff]")  # every character but `_COUNTED`'s
_ONE_PER_CHARACTER = re.compile(r"[^\x00]")


def _as_bits(mask: str | bytes | bytearray, value: int | None = None) -> int:
    """A mask as an integer with one bit set per marked character: for a string, each
    character other than NUL; for bytes, each byte that is not 0 (or is `value`)."""
    if isinstance(mask, str):
        mask = _ONE_PER_CHARACTER.sub("\x01", mask).encode("latin-1")
    elif value is not None:
        mask = bytes(mask).translate(bytes(1 if b == value else 0 for b in range(256)))
    else:
        mask = bytes(mask).translate(bytes([0] + [1] * 255))
    return int.from_bytes(mask, "little")


def _line_keys(text: str) -> set[str]:
    return {key for line in text.splitlines() if (key := _key(_tokens(line)))}


def measure_echo(answer: str, templates: Iterable[str], material: str = "") -> EchoMeasure:
    """How much of `answer` echoes the fixed text of `templates` (names under `reqstudio/prompts/`) or
    is serialized structure. Lines that are lines of `material` (what the document is written
    from: the section revised, the original rewritten) are the document's own: a form with
    `<e.g. Acme Ltd>` fields, code, a JSON example there may stay in it."""
    fixed = _fixed(tuple(dict.fromkeys(templates)))
    own = _line_keys(material) if material else set()
    covered = bytearray(len(answer))
    examples: list[str] = []
    offset = 0
    lines = answer.splitlines(keepends=True)
    data_lines = _structure_lines([line.rstrip("\r\n") for line in lines])
    # A title says what was asked ("Software Requirements Specification"): headings are not
    # counted, unless the answer has nothing else.
    heading = bytearray(len(answer))
    fenced = False
    for number, line in enumerate(lines):
        start, end = offset, offset + len(line)
        offset = end
        fenced = fenced != bool(_FENCE.match(line))
        if not fenced and _HEADING.match(line):
            heading[start:end] = b"\x01" * (end - start)
        if own and _key(_tokens(line)) in own:
            continue
        if number in data_lines:
            _mark(covered, start, end, _STRUCTURE)
            examples.append(line.strip())
            continue
        for found in _BRACKETED.finditer(line):
            _mark(covered, start + found.start(), start + found.end(), _STRUCTURE)
            examples.append(found.group())
        for found in _PLACEHOLDER.finditer(line):
            _mark(covered, start + found.start(), start + found.end(), _ECHO)
            examples.append(found.group())
        tokens = _tokens(line)
        # each token's lower-case text and whether it is CJK, once per line: the windows
        # below read them many times
        words = [t.group().lower() for t in tokens]
        is_cjk = [bool(_CJK.fullmatch(word)) for word in words]
        cjk = sum(is_cjk)
        count = len(tokens)
        whole = count >= PIECE_TOKENS if cjk < count else cjk >= PIECE_CJK
        if whole and f" {' '.join(words)} " in fixed.joined:
            _mark(covered, start + tokens[0].start(), start + tokens[-1].end(), _ECHO)
            examples.append(line.strip())
            continue
        position = 0
        while position < count:
            size = RUN_CJK if all(is_cjk[position : position + RUN_TOKENS]) else RUN_TOKENS
            if (
                position + size <= count
                and " ".join(words[position : position + size]) in fixed.runs
            ):
                stop = position + size  # extend the run as far as it goes on matching
                while stop < count and " ".join(words[stop - size + 1 : stop + 1]) in fixed.runs:
                    stop += 1
                first, last = tokens[position], tokens[stop - 1]
                _mark(covered, start + first.start(), start + last.end(), _ECHO)
                examples.append(line[first.start() : last.end()])
                position = stop
            else:
                position += 1
    # The shares are counted on masks, one byte per character of the answer (1: the
    # character is so), read as integers: an AND and a bit count per mask, not a loop.
    letters = _as_bits(_UNCOUNTED.sub("\x00", answer))
    counted = letters ^ (letters & _as_bits(heading))
    if not counted:  # headings alone: judged on them
        counted = letters
    total = counted.bit_count()
    if not total:
        return EchoMeasure(0.0, 0.0)
    echoed = (counted & _as_bits(covered, _ECHO)).bit_count() / total
    structured = (counted & _as_bits(covered, _STRUCTURE)).bit_count() / total
    shown = tuple(dict.fromkeys(e.strip()[:60] for e in examples if e.strip()))[:3]
    return EchoMeasure(round(echoed, 3), round(structured, 3), shown)


def document_problem(
    answer: str, templates: Iterable[str], *, material: str = "", whole_document: bool = False
) -> NotADocumentReason | None:
    """Why `answer` is not a document written for the prompt `templates` rendered, or None.
    `material`: what the prompt gave to write from (`measure_echo`). `whole_document`: the
    answer is a whole document (an SRS), not a section's body; one that holds nothing but
    headings is then no document either."""
    if not answer.strip():
        return NotADocumentReason("empty")
    if _is_json(_unfenced(answer)):
        return NotADocumentReason("json_document" if whole_document else "json")
    if whole_document:
        body = [
            line
            for line in answer.splitlines()
            if line.strip() and not line.lstrip().startswith("#")
        ]
        if not any(_COUNTED.search(line) for line in body):
            return NotADocumentReason("headings_only")
    measure = measure_echo(answer, templates, material)
    if measure.share >= ECHO_LIMIT:
        return NotADocumentReason("echo", measure)
    return None


_FENCED = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.DOTALL)


def _unfenced(text: str) -> str:
    body = text.strip()
    fenced = _FENCED.match(body)
    return fenced.group(1).strip() if fenced else body


def fields_problem(values: Iterable[str], templates: Iterable[str]) -> NotADocumentReason | None:
    """`document_problem` for a structured answer's text fields (an outline's title, section
    titles and goals), one line each: "Title of the new document" / "Section title" is the
    example of the prompt, not an outline."""
    text = "\n".join(v.replace("\n", " ").strip() for v in values if v.strip())
    if not text:
        return NotADocumentReason("empty")
    measure = measure_echo(text, templates)
    if measure.share >= ECHO_LIMIT:
        return NotADocumentReason("echo", measure)
    return None
