"""Reading a page as a user reads it, for the walks through every mode (no tests here): the
visible text outside the user's own messages, and what in it must not be there: text of the
other language, internals (raw JSON, field names, status codes, tool names), and waits with
nothing changing on screen. The checks are pure functions, tested in tests/test_page_reading.py;
the browser part is `visible_text`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Names a page in either language may show as they are: the product, its modes' own names
# (the mode menu reads "Review 审阅"), standards, formats, file types, agents of the SRS
# pipeline, providers, units. Ids (FR-01, sec-02, agent-1, improved.md, the model's name) are
# told apart by their digits, dots and hyphens, not listed.
NAMES = {
    "reqstudio", "chainlit", "chat", "agent", "srs", "review", "rewrite", "team", "react",
    "ieee", "std", "prd", "mcp", "json", "markdown", "word", "pdf", "docx", "md", "txt", "csv", "url",
    "utc", "http", "https", "sms", "api", "id", "ids", "llm", "ai", "python", "java", "plotly",
    "reqparse", "reqexplore", "reqclarify", "docgenerate", "smollm", "openai", "deepseek",
    "qwen", "ollama", "vllm", "llama", "cpp", "root", "token", "tokens", "s", "ms", "mb", "kb",
    "fr", "nfr", "con", "sug", "ears", "stdio", "sse", "reqif", "reqifz",
}  # fmt: skip

MARKS = ("✅", "⚠️", "❌", "⏹", "📄", "📊")  # how the app's closing lines begin
_WORD = re.compile(r"[A-Za-z]+")
# An id, a file or a model's name: letters joined to digits, dots, hyphens or slashes.
_ID = re.compile(r"[A-Za-z0-9]*[0-9./-][A-Za-z0-9./-]*[A-Za-z0-9]|[A-Za-z]+[0-9]+")
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+")
_SNAKE = re.compile(r"(?<![\w./-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w-]|\.\w)")
# The document's or the model's own words, quoted by the app (the checker's findings quote the
# term: L3 · ISO29148-ambiguous “some”): theirs, in whatever language they were written.
_QUOTED = re.compile(r"“[^”]*”")
_JSON = re.compile(r'\{\s*"|"\s*:\s*[\[{"]|\}\s*,\s*\{|\[\s*\{')


def english_in_chinese(text: str, allowed: set[str] = frozenset()) -> list[str]:
    """Words of English in a Chinese page's text: every ASCII word that is not a name, a unit
    or part of an id (`allowed`: more names, lower case, e.g. the walk's own model name)."""
    names = NAMES | {a.lower() for a in allowed}
    # a tool's name whole (get_current_time), before it is cut in words; the longest first, so
    # that a name inside another (time) does not cut it
    for name in sorted(allowed, key=len, reverse=True):
        text = text.replace(name, " ")
    stripped = _ID.sub(" ", text)
    # one letter alone is an initial (an avatar's) or a unit, not a word
    return [w for w in _WORD.findall(stripped) if len(w) > 1 and w.lower() not in names]


def chinese_in_english(text: str) -> list[str]:
    """Chinese characters (and full-width punctuation) in an English page's text."""
    return _CJK.findall(text)


def other_language(text: str, locale: str, allowed: set[str] = frozenset()) -> list[str]:
    if locale.startswith("zh"):
        return english_in_chinese(text, allowed)
    return chinese_in_english(text)


def internals(text: str, allowed: set[str] = frozenset()) -> list[str]:
    """Raw JSON and snake_case names (field names, status codes, tool names) in a text
    (`allowed`: names the page may show, e.g. the tools an Agent has)."""
    snake = [name for name in _SNAKE.findall(text) if name not in allowed]
    return [m.group(0) for m in _JSON.finditer(text)] + snake


@dataclass
class Sample:
    at: float  # seconds since the run started
    text: str  # what the page showed
    running: bool  # the stop button was there: the run was going on


@dataclass
class SilenceWatch:
    """Samples of a page while a run goes on; `longest_silence` is the longest time the page
    showed the same text while the run was going, so a wait with a visible, changing
    indicator (a counter of seconds, a retry line, streamed text) is no silence."""

    samples: list[Sample] = field(default_factory=list)

    def add(self, at: float, text: str, running: bool) -> None:
        self.samples.append(Sample(at, text, running))

    def longest_silence(self) -> tuple[float, str]:
        """(seconds, the text on screen then) of the longest unchanged stretch while running."""
        longest, shown = 0.0, ""
        since: Sample | None = None
        for sample in self.samples:
            if not sample.running:
                since = None
                continue
            if since is None or sample.text != since.text:
                since = sample
                continue
            if sample.at - since.at > longest:
                longest, shown = sample.at - since.at, sample.text
        return longest, shown


# The page's visible text, as text nodes with the kind of message they are in. The user's own
# messages are left out (what a user typed is theirs, in any language); hidden nodes (a folded
# step's content) are left out, as a user does not see them.
VISIBLE_TEXT_JS = """
() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const text = node.textContent.trim();
    const element = node.parentElement;
    if (!text || !element) continue;
    // the user's own messages, and the history's thread names made of them
    if (element.closest('script, style, noscript, [data-step-type=user_message], #thread-history')) continue;
    if (element.closest('.js-plotly-plot .modebar')) continue;
    if (!element.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) continue;
    const box = element.getBoundingClientRect();
    if (box.width <= 1 || box.height <= 1) continue;  // text for screen readers only
    const step = element.closest('[data-step-type]');
    out.push({text, kind: step ? step.getAttribute('data-step-type') : '',
              code: !!element.closest('pre, code'),
              frame: !!element.closest('th, button, [role=dialog], [id^="step-"] > button')});
  }
  const composer = document.querySelector('#chat-input');
  if (composer && composer.getAttribute('placeholder')) {
    out.push({text: composer.getAttribute('placeholder'), kind: '', code: false, frame: true});
  }
  return out;
}
"""


@dataclass
class TextNode:
    text: str
    kind: str  # the Chainlit step type it is in ('assistant_message', 'tool', 'run', '')
    code: bool  # in a code block
    frame: bool = False  # the app's frame: a column header, a button, a dialog, a step title


def visible_text(page) -> list[TextNode]:
    return [TextNode(**node) for node in page.evaluate(VISIBLE_TEXT_JS)]


def findings(
    nodes: list[TextNode],
    locale: str,
    allowed: set[str] = frozenset(),
    content: set[str] = (),
    code_is_content: bool = False,
    frame_only: bool = False,
) -> list[str]:
    """What a user of `locale` should not read in these nodes: other-language words and
    internals, each with the text it was found in. `allowed`: names the page may show as
    they are; `content`: texts that are others' own (a web page's title), not the app's
    words; `code_is_content`: code is a tool's call and result as the tool takes and gives it
    (Agent mode), not the app's words; `frame_only`: only the app's frame and its closing
    lines are the app's words (the offline model's answers are in any language)."""
    found: list[str] = []
    for node in nodes:
        if code_is_content and node.code:
            continue
        if frame_only and not (node.frame or node.text.startswith(MARKS)):
            continue
        text = node.text
        for piece in content:
            text = text.replace(piece, " ")
        text = _QUOTED.sub(" ", text)
        for word in other_language(text, locale, allowed):
            found.append(f"other language {word!r} in {node.text[:160]!r}")
        for internal in internals(text, allowed):
            found.append(f"internal {internal!r} in {node.text[:160]!r}")
    return found
