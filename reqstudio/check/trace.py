"""Traceability without a model: the sentences of a request, which of them a
requirement's text matches, and the traceability matrix an SRS ends with.

A request is cut into sentences (lines, then sentence ends `. ! ? ; 。！？；`); headings
(a Markdown `#` line, or a short line without a final stop that introduces a paragraph or a
list) and fragments with fewer than two content words are not sentences. Sentences are numbered from 1
in that order: `S1`, `S2`, ... as the matrix and the checker name them.

A requirement matches a sentence when they share content words: English words without
stopwords, cut to their first six letters; Chinese as character pairs. The overlap, divided by the smaller
of the two word sets, must reach `THRESHOLD` with at least two shared words (one when either
side has only one). The sentences matched are the best one and any other within
`NEAR_BEST` of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

THRESHOLD = 0.3
NEAR_BEST = 0.8

# The heading the matrix section has (en, zh), and how the checker recognises it.
MATRIX_TITLE = {"en": "Traceability matrix", "zh": "追溯矩阵"}
MATRIX_HEADING_RE = re.compile(
    r"^\s{0,3}(#{1,6})\s+(?:traceability\s+matrix|追溯矩阵)\b", re.IGNORECASE
)
# An origin cell that names request sentences starts with one of these.
REQUEST_PREFIX = {"en": "request", "zh": "需求描述"}

_STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "both",
        "but",
        "by",
        "can",
        "could",
        "do",
        "does",
        "each",
        "either",
        "for",
        "from",
        "has",
        "have",
        "having",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "may",
        "me",
        "might",
        "must",
        "my",
        "no",
        "nor",
        "not",
        "of",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "within",
        "without",
        "would",
        "you",
        "your",
        "shall",
        "system",
        "able",
        "allow",
        "allows",
        "allowed",
        "let",
        "lets",
        "need",
        "needs",
        "want",
        "wants",
        "provide",
        "provides",
        "support",
        "supports",
        "via",
        "using",
        "use",
        "used",
        "etc",
        "e",
        "g",
        "ie",
        "eg",
    ]
)
_ZH_STOP = frozenset(
    ["系统", "可以", "能够", "需要", "应该", "应当", "必须", "提供", "进行", "支持", "以及", "我们"]
)
_EN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)、]|[a-z][.)]|（\d+）|\(\d+\))\s*")
_ATX = re.compile(r"^\s{0,3}#{1,6}\s")


def _stem(word: str) -> str:
    """A crude stem: no plural `s`, then the first six letters (purchase, purchases,
    purchasing and purchased all become `purcha`)."""
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:6]


@lru_cache(maxsize=4096)
def content_words(text: str) -> frozenset[str]:
    """The words two texts are compared by: English stems without stopwords, and the
    character pairs of the Chinese in it. Kept per text: a request's sentences and a
    reference's sections are compared with every requirement."""
    lowered = text.lower()
    words = {_stem(w) for w in _EN_WORD.findall(lowered) if w not in _STOPWORDS and len(w) > 1}
    for run in _CJK_RUN.findall(text):
        pairs = {run[i : i + 2] for i in range(len(run) - 1)} if len(run) > 1 else {run}
        words |= {p for p in pairs if p not in _ZH_STOP}
    return frozenset(w for w in words if w and w not in _STOPWORDS)


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared words over the smaller set; 0 below the minimum overlap."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    smaller = min(len(a), len(b))
    if shared < 2 and not (shared == 1 and smaller == 1):
        return 0.0
    return shared / smaller


def _short_unstopped(line: str) -> bool:
    """A line that could be a title: a few words, no final stop, no list marker."""
    text = line.strip().strip("*_").strip()
    if _LIST_MARKER.match(line) or re.search(r"[.!?;:。！？；：]$", text):
        return False
    return len(text.split()) <= 6 and (not _CJK_RUN.search(text) or len(text) <= 12)


def request_sentences(text: str) -> list[str]:
    """The request's sentences, in order (S1 is the first). A Markdown heading is none, nor
    is a title line: a short line without a final stop followed by a line that is not one
    too (a paragraph or a list). A short line alone ("Users log in with e-mail") is one."""
    lines = [line for line in text.splitlines() if line.strip()]
    sentences: list[str] = []
    for index, raw in enumerate(lines):
        if _ATX.match(raw):
            continue
        following = lines[index + 1] if index + 1 < len(lines) else None
        if (
            _short_unstopped(raw)
            and following is not None
            and not _ATX.match(following)
            and not _short_unstopped(following)
        ):
            continue
        line = _LIST_MARKER.sub("", raw, count=1)
        for part in _SENTENCE_END.split(line.strip()):
            part = part.strip()
            if len(content_words(part)) >= 2:
                sentences.append(part)
    return sentences


def match_sentences(text: str, sentences: list[str]) -> list[int]:
    """The numbers (from 1) of the sentences `text` matches: the best and those near it."""
    words = content_words(text)
    scores = [similarity(words, content_words(s)) for s in sentences]
    best = max(scores, default=0.0)
    if best < THRESHOLD:
        return []
    floor = max(THRESHOLD, NEAR_BEST * best)
    return [n for n, score in enumerate(scores, start=1) if score >= floor]


def best_match(text: str, candidates: Sequence[str]) -> int | None:
    """The index of the candidate `text` matches best (at least `THRESHOLD`), or None."""
    words = content_words(text)
    scores = [similarity(words, content_words(c)) for c in candidates]
    best = max(scores, default=0.0)
    return scores.index(best) if best >= THRESHOLD else None


# --- the matrix in a document ---------------------------------------------------------------


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"")
_SENTENCE_REF = re.compile(r"\bS(\d+)\b")


def origin_sentences(origin: str) -> list[int]:
    """The request sentences an origin cell names (`request S2, S3: “…”`), [] for others."""
    text = _QUOTED.sub("", origin).strip()
    if not text.lower().startswith(REQUEST_PREFIX["en"]) and not text.startswith(
        REQUEST_PREFIX["zh"]
    ):
        return []
    return [int(n) for n in _SENTENCE_REF.findall(text)]


@dataclass
class MatrixRow:
    id: str
    requirement: str
    origin: str


def read_matrix(markdown: str) -> list[MatrixRow] | None:
    """The rows of the document's traceability matrix; None when it has none."""
    lines = markdown.splitlines()
    span = matrix_span(lines)
    if span is None:
        return None
    rows: list[MatrixRow] = []
    header_seen = False
    for line in lines[span[0] + 1 : span[1]]:
        if not line.lstrip().startswith("|"):
            continue
        cells = _cells(line)
        if all(re.fullmatch(r":?-+:?", c) for c in cells if c):
            continue
        if not header_seen:
            header_seen = True
            continue
        if len(cells) >= 3:
            rows.append(MatrixRow(cells[0], cells[1].replace("\\|", "|"), cells[2]))
    return rows


def matrix_span(lines: list[str]) -> tuple[int, int] | None:
    """(first, end) line indices of the matrix section, or None. The last such heading counts:
    the matrix is appended after the document, which may have a section of that name itself."""
    starts = [i for i, line in enumerate(lines) if MATRIX_HEADING_RE.match(line)]
    if not starts:
        return None
    index = starts[-1]
    level = len(lines[index].strip().split()[0])  # the heading's #s
    for end in range(index + 1, len(lines)):
        other = re.match(r"^\s{0,3}(#{1,6})\s", lines[end])
        if other and len(other.group(1)) <= level:
            return index, end
    return index, len(lines)


def split_matrix(markdown: str) -> tuple[str, str]:
    """(the document without its matrix section, the matrix section or "")."""
    lines = markdown.splitlines(keepends=True)
    span = matrix_span(lines)
    if span is None:
        return markdown, ""
    start, end = span
    body = "".join(lines[:start] + lines[end:]).rstrip("\n")
    return (body + "\n") if body else "", "".join(lines[start:end])


def traced_sentences(markdown: str, requirement_texts: list[str], sentences: list[str]) -> set[int]:
    """The sentences some requirement traces to: those its matrix row names when the
    document has a matrix, otherwise those its text matches."""
    rows = read_matrix(markdown)
    if rows is not None:
        return {n for row in rows for n in origin_sentences(row.origin)}
    return {n for text in requirement_texts for n in match_sentences(text, sentences)}
