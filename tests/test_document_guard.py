"""The shared document guard (`reqstudio.document_guard`): an answer that is its prompt given
back (instructions, placeholders) or serialized data where prose belongs is no document, in
every mode that writes one; real documents never trip it. The junk is what the offline model
delivered as documents and answers made from the prompt files themselves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reqstudio.document_guard import (
    ECHO_LIMIT,
    document_problem,
    fields_problem,
    fixed_text,
    measure_echo,
)
from reqstudio.document_model import parse_markdown
from tests import review_support, rewrite_support
from tests.test_srs_support import SRS_TEXT

ROOT = Path(__file__).resolve().parent.parent
SRS = ["srs/doc_generate.md"]
FILL_EN, FILL_ZH = ["rewrite/en/fill.md"], ["rewrite/zh/fill.md"]
PATCH_EN, PATCH_ZH = ["rewrite/en/patch.md"], ["rewrite/zh/patch.md"]
AUTHOR = ["review/author.md", "review/author_reask.md"]
SECTION_WRITERS = [*FILL_EN, *FILL_ZH, *PATCH_EN, *PATCH_ZH, *AUTHOR]

# What the offline model delivered, as the UI showed it.
SRS_JUNK_EN = (
    "# IEEE Std 830-1998\n\n"
    "IEEE Std 830-1998 [JSON] [FR-01, FR-02, FR-03]\n"
    "IEEE Std 830-1998 [JSON] [FR-01, FR-02, FR-03]\n"
)
SRS_JUNK_ZH = "# 软件需求规格说明\n\nIEEE Std 830-1998 [JSON] [FR-01, FR-02, FR-03, NFR-01]\n"
SRS_JUNK_JSON = (
    "# Document Generation Agent (DocGenerate)\n\n"
    '[JSON] [{\n    "id": 2,\n    "content": {\n        "description": "Orders are confirmed.",\n'
    '        "type": "SRS"\n    }\n}]\n'
)
FILL_JUNK_ZH = (
    "你是一位资深的技术文档作者，正在按照既定大纲逐节撰写一份重写后的文档《新文档标题》。\n\n"
    "<已完成的章节>\n（这是第一节，前面还没有章节）\n</已完成的章节>\n"
)
FILL_JUNK_EN = "<section written so far>\n(this is the first section; nothing is written yet)\n"


@pytest.mark.parametrize(
    ("answer", "templates"),
    [
        (SRS_JUNK_EN, SRS),
        (SRS_JUNK_ZH, SRS),
        (SRS_JUNK_JSON, SRS),
        (FILL_JUNK_ZH, FILL_ZH),
        (FILL_JUNK_EN, FILL_EN),
        ("The <system> shall <response>.\nWhen <trigger>, the <system> shall <response>.\n", SRS),
        ('{"improvements": []}', AUTHOR),
        ("- id: FR-01\n  content: Readers borrow books.\n- id: FR-02\n  content: Return.\n", SRS),
        ("[{'id': 'FR-01', 'content': 'Readers borrow books.'}]\n", SRS),
    ],
    ids=[
        "srs-en",
        "srs-zh",
        "srs-json",
        "fill-zh",
        "fill-en",
        "ears-slots",
        "json",
        "yaml",
        "repr",
    ],
)
def test_the_offline_models_junk_is_no_document(answer: str, templates: list[str]):
    problem = document_problem(answer, templates, whole_document=templates == SRS)
    assert problem is not None, measure_echo(answer, templates)


def test_the_outline_example_given_back_is_no_outline():
    english = ["Title of the new document", "Section title", "What this section must make clear"]
    chinese = ["新文档标题", "章节标题", "本章节的写作目标"]
    assert fields_problem(english, ["rewrite/en/outline.md"]) is not None
    assert fields_problem(chinese, ["rewrite/zh/outline.md"]) is not None
    real = ["Pet Clinic Booking System"] + [
        f for t, g, _ in rewrite_support.SECTIONS for f in (t, g)
    ]
    assert fields_problem(real, ["rewrite/en/outline.md"]) is None
    real_zh = [rewrite_support.TITLE_ZH] + [
        f for t, g, _ in rewrite_support.SECTIONS_ZH for f in (t, g)
    ]
    assert fields_problem(real_zh, ["rewrite/zh/outline.md"]) is None


WRITERS = [
    "srs/doc_generate.md",
    "rewrite/en/fill.md",
    "rewrite/zh/fill.md",
    "rewrite/en/patch.md",
    "rewrite/zh/patch.md",
    "rewrite/en/outline.md",
    "rewrite/zh/outline.md",
    "review/author.md",
    "review/author_reask.md",
]


def instruction_lines(template: str) -> list[str]:
    """The template's own lines of three words (or six CJK characters) and more."""
    lines = [line.strip(" -•\t") for piece in fixed_text(template) for line in piece.splitlines()]
    return [
        line
        for line in lines
        if len(re.findall(r"[A-Za-z]+", line)) >= 3
        or len(re.findall(r"[\u4e00-\u9fff]", line)) >= 6
    ]


@pytest.mark.parametrize("template", WRITERS)
def test_a_prompt_given_back_is_no_document_whatever_the_prompt(template: str):
    """Made from each prompt file: its instructions as the answer; and with a third of the
    answer the model's own words, still mostly the prompt."""
    lines = instruction_lines(template)
    assert len(lines) >= 3, lines
    answer = "\n".join(lines[:8]) + "\n"
    assert document_problem(answer, [template]) is not None, measure_echo(answer, [template])
    own = "Owners book visits online and vets see their day; reminders go out by SMS.\n"
    mixed = "\n".join(lines[:6]) + "\n" + own
    measure = measure_echo(mixed, [template])
    assert measure.share >= ECHO_LIMIT, measure


def test_the_check_is_derived_from_the_prompt_given_not_a_phrase_list():
    """The same text is echo for the prompt it comes from, and a document for another."""
    answer = "Write only the body of the current section.\nKeep the terms and logic of the sections written so far.\n"
    assert document_problem(answer, FILL_EN) is not None
    assert document_problem(answer, SRS) is None


# --- calibration: real documents never trip it ----------------------------------------------


def real_documents() -> list[Path]:
    found = sorted((ROOT / "tests" / "data").rglob("*.md")) + sorted(
        (ROOT / "cases" / "pure").glob("*/*.md")
    )
    assert len(found) > 150  # the 74 PURE cases (input and reference) and the test data
    return found


def test_real_documents_and_their_sections_stay_far_below_the_limit():
    """Measured: whole documents against DocGenerate's prompt at most 0.05; their sections
    against every section writer's prompts at most 0.19 (a form's `<project name>` fields);
    the limit is 0.5."""
    whole, sections = 0.0, 0.0
    for path in real_documents():
        text = path.read_text(encoding="utf-8", errors="replace")
        if not text.strip():  # an upload test's empty file
            continue
        whole = max(whole, measure_echo(text, SRS).share)
        assert document_problem(text, SRS, whole_document=True) is None, path
        for section in parse_markdown(text).sections:
            if section.content.strip():
                share = measure_echo(section.content, SECTION_WRITERS).share
                sections = max(sections, share)
                assert share < ECHO_LIMIT, (path, section.id)
    assert whole <= 0.1 and sections <= 0.25, (whole, sections)


def test_the_documents_of_the_existing_tests_are_documents():
    assert document_problem(SRS_TEXT, SRS, whole_document=True) is None
    bodies = [*rewrite_support.BODIES, *rewrite_support.BODIES_ZH]
    for body in bodies:
        assert document_problem(body, SECTION_WRITERS) is None, body
    for document in (review_support.DOCUMENT, review_support.DOCUMENT_ZH):
        for section in parse_markdown(document).sections:
            assert document_problem(section.content, AUTHOR) is None, section.content


def test_what_the_document_itself_holds_may_be_repeated():
    """A form with `<e.g. ...>` fields in the original is the document's own text, not the
    prompt's placeholders: a section copying it from its material is a document."""
    form = "<e.g. Acme Ltd>\n<e.g. John Doe>\n<e.g. +44 700 465 789>\n"
    assert document_problem(form, FILL_EN) is not None
    assert document_problem(form, FILL_EN, material="## Contact\n\n" + form) is None
