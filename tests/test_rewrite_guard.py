"""Rewrite's outline, sections and patches through the shared guard.

An outline that is its prompt's example, or a section that is its prompt given back, is asked
for again once, then fails its stage clearly (the CLI exits 1 and writes nothing where the
document was asked for). A patch that drops requirements, merges them into prose, only
mentions their ids or gives back its prompt is asked for again, then refused: the section
stays as drafted and the result is incomplete (exit 3, `"complete": false`). Reordering and a
removal an issue asks for are patched. Over real HTTP to the scripted server."""

from __future__ import annotations

import json

import pytest

from reqstudio.modes.rewrite import (
    RewriteChain,
    RewriteRequest,
    RewriteStageError,
)
from tests import rewrite_support as rewrite
from tests.cli_support import QUICK, REQSTUDIO, cli_env, run_reqstudio
from tests.scripted_server import Reply

REQUEST = rewrite.english_request()
BOOKING = """- FR-01: The system shall let an owner book a visit with a vet of their choice.
- FR-02: The system shall let an owner cancel a visit up to 2 hours before it starts.
- FR-03: The system shall show the free slots of the next 14 days.
"""
BODIES = [rewrite.BODIES[0], BOOKING, rewrite.BODIES[2]]
REORDERED = """- FR-03: The system shall show the free slots of the next 14 days, by vet.
- FR-01: The system shall let an owner book a visit with a vet of their choice.
- FR-02: The system shall let an owner cancel a visit up to 2 hours before it starts.
"""
MENTIONED = (
    "FR-01, FR-02, FR-03 were dropped because they repeat the overview; this section now "
    "only says that owners book visits online with the vet of their choice.\n"
)
MERGED = (
    "The system shall let an owner book a visit with a vet of their choice (FR-01), cancel it "
    "up to 2 hours before it starts (FR-02) and see the free slots of 14 days (FR-03).\n"
)
# The fill prompt given back, in each language.
FILL_ECHO_EN = (
    "<section written so far>\n(this is the first section; nothing is written yet)\n"
    "Write only the body of the current section.\n"
)
PATCH_ECHO_EN = (
    "Output the whole corrected body of this section: English, Markdown; no heading for the "
    "section; keep what is right in the current body and change only what must change; output "
    "the body directly, with no explanation.\n"
)


def chain(factory) -> RewriteChain:
    return RewriteChain(factory)


def with_booking_patched(server, *patches: str, issue: str = "Free slots name no vet.") -> None:
    """A draft whose Booking section holds FR-01..FR-03, one issue on it, the patches given
    (the first answer, then the ask again), and a review that then finds nothing."""
    server.script(
        rewrite.outline_reply(),
        *rewrite.fill_replies(BODIES),
        rewrite.review_reply(("sec-02", issue)),
        *[rewrite.patch_reply(p) for p in patches],
        rewrite.review_reply(),
    )


# --- a patch keeps every requirement ----------------------------------------------------------


@pytest.mark.parametrize("answer", [MENTIONED, MERGED], ids=["mentioned", "merged-into-prose"])
async def test_a_patch_that_loses_requirements_is_refused_and_the_section_kept(
    factory, llm_server, answer
):
    with_booking_patched(llm_server, answer, answer)
    result = await chain(factory).ainvoke(REQUEST)
    assert not result.complete
    [failure] = result.failed_patches
    assert failure.reason.startswith(
        "revision of section sec-02 “Booking” refused: it dropped FR-01, FR-02, FR-03; the ids "
        "are only mentioned"
    )
    assert failure.reason.endswith("also when asked again")
    assert failure.reason_zh.startswith("章节 sec-02 “Booking” 的修订被拒绝：它删去了 FR-01")
    assert failure.finish_reason is None
    assert result.structured_document.section("sec-02").content == BOOKING
    assert len(rewrite.prompts_for(llm_server, rewrite.PATCH)) == 2  # asked again once


async def test_a_patch_dropping_a_requirement_is_asked_again(factory, llm_server):
    dropped = REORDERED.replace(
        "- FR-02: The system shall let an owner cancel a visit up to 2 hours before it starts.\n",
        "",
    )
    with_booking_patched(llm_server, dropped, REORDERED)
    result = await chain(factory).ainvoke(REQUEST)
    assert result.complete and not result.failed_patches
    assert result.structured_document.section("sec-02").content == REORDERED


async def test_a_reordered_patch_is_taken_at_once(factory, llm_server):
    with_booking_patched(llm_server, REORDERED)
    result = await chain(factory).ainvoke(REQUEST)
    assert result.complete
    assert result.structured_document.section("sec-02").content == REORDERED
    assert len(rewrite.prompts_for(llm_server, rewrite.PATCH)) == 1


async def test_a_removal_the_issue_asks_for_is_patched(factory, llm_server):
    without_fr3 = BOOKING.replace(
        "- FR-03: The system shall show the free slots of the next 14 days.\n", ""
    )
    with_booking_patched(
        llm_server, without_fr3, issue="FR-03 repeats the overview: remove FR-03 from Booking."
    )
    result = await chain(factory).ainvoke(REQUEST)
    assert result.complete
    assert result.structured_document.section("sec-02").content == without_fr3


async def test_a_patch_that_gives_back_its_prompt_is_refused(factory, llm_server):
    with_booking_patched(llm_server, PATCH_ECHO_EN, PATCH_ECHO_EN)
    result = await chain(factory).ainvoke(REQUEST)
    [failure] = result.failed_patches
    assert failure.reason.startswith("the answer is not a document")
    assert result.structured_document.section("sec-02").content == BOOKING


# --- a section or an outline that is its prompt given back -------------------------------------


async def test_a_section_that_gives_back_its_prompt_is_asked_again(factory, llm_server):
    llm_server.script(
        rewrite.outline_reply(),
        Reply(content=FILL_ECHO_EN, match=rewrite.FILL),
        *rewrite.fill_replies(),
        rewrite.review_reply(),
    )
    handler = rewrite.RecordingHandler()
    result = await chain(factory).ainvoke(REQUEST, handler)
    assert [s.content for s in result.structured_document.sections] == rewrite.BODIES
    assert handler.resets == ["sec-01"]  # the echo taken off the screen


async def test_a_section_that_is_its_prompt_twice_fails_the_stage(factory, llm_server):
    llm_server.script(
        rewrite.outline_reply(), *[Reply(content=FILL_ECHO_EN, match=rewrite.FILL)] * 2
    )
    handler = rewrite.RecordingHandler()
    with pytest.raises(RewriteStageError) as failure:
        await chain(factory).ainvoke(REQUEST, handler)
    error = failure.value
    assert (error.stage, error.section_id) == ("content_filling", "sec-01")
    assert error.reason.startswith("the answer is not a document")
    assert "<section written so far>" in error.reason
    assert error.text("zh").startswith("回答不是文档")
    assert handler.calls[-1][0] == "error"


async def test_an_outline_that_is_its_prompts_example_fails_after_asking_again(factory, llm_server):
    example = [("Section title", "What this section must make clear", 2)]
    llm_server.script(
        *[rewrite.outline_reply(example, title="Title of the new document") for _ in range(2)]
    )
    with pytest.raises(RewriteStageError) as failure:
        await chain(factory).ainvoke(REQUEST)
    assert failure.value.stage == "outline_generation"
    assert "“Title of the new document”" in failure.value.reason
    assert len(rewrite.prompts_for(llm_server, rewrite.OUTLINE)) == 2
    assert not rewrite.prompts_for(llm_server, rewrite.FILL)


async def test_a_chinese_outline_that_is_its_prompts_example_fails(factory, llm_server):
    request = RewriteRequest(original_content=rewrite.ORIGINAL_ZH)
    example = [("章节标题", "本章节的写作目标", 2)]
    llm_server.script(
        *[
            rewrite.outline_reply(example, title="新文档标题", match=rewrite.OUTLINE_ZH)
            for _ in range(2)
        ]
    )
    with pytest.raises(RewriteStageError) as failure:
        await chain(factory).ainvoke(request)
    assert failure.value.text("zh").startswith("回答不是文档")


# --- what the CLI does with it ---------------------------------------------------------------


@pytest.fixture
def run(llm_server, tmp_path):
    original = tmp_path / "original.md"
    original.write_text(rewrite.ORIGINAL_EN, encoding="utf-8")
    clarifications = tmp_path / "clarifications.json"
    clarifications.write_text(json.dumps(rewrite.CLARIFICATIONS), encoding="utf-8")
    env = cli_env(llm_server.base_url, tmp_path, **QUICK)
    for name in [k for k in env if k.startswith(("LC_", "LANG"))]:
        del env[name]

    def run_command(*args: object):
        return run_reqstudio(
            llm_server.base_url, tmp_path, "rewrite", "--original-doc", original,
            "--clarifications", clarifications, *args, env=env, command=REQSTUDIO,
        )  # fmt: skip

    return run_command


def test_the_cli_writes_no_document_when_a_section_is_its_prompt(run, llm_server, tmp_path):
    llm_server.script(
        rewrite.outline_reply(), *[Reply(content=FILL_ECHO_EN, match=rewrite.FILL)] * 2
    )
    out_md, out_json = tmp_path / "new.md", tmp_path / "new.json"
    done = run("--output-md", out_md, "--output-json", out_json)
    assert done.returncode == 1, done.stderr
    assert "ERROR: Stage failed: content_filling" in done.stderr
    assert "the answer is not a document" in done.stderr
    assert not out_md.exists() and not out_json.exists()


def test_the_cli_marks_a_refused_patch_incomplete(run, llm_server, tmp_path):
    with_booking_patched(llm_server, MENTIONED, MENTIONED)
    out_md, out_json = tmp_path / "new.md", tmp_path / "new.json"
    done = run("--output-md", out_md, "--output-json", out_json)
    assert done.returncode == 3, done.stderr
    assert not out_md.exists()  # never where a complete document is expected
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert data["complete"] is False
    assert data["failed_patches"][0]["reason"].startswith(
        "revision of section sec-02 “Booking” refused: it dropped FR-01"
    )
    assert "WARNING: section sec-02 “Booking” was not patched" in done.stderr
    assert BOOKING.strip() in data["rewritten_content"]


# --- questions that are the prompt's example -------------------------------------------------


async def test_questions_that_are_the_prompts_example_are_asked_again_then_fail(
    factory, llm_server
):
    from reqstudio.document_guard import NotADocumentError
    from reqstudio.errors import describe_failure
    from reqstudio.modes.rewrite.questions import propose_questions

    example = Reply(
        content=rewrite.fenced({"questions": ["First question", "Second question"]}),
        match=rewrite.QUESTIONS,
    )
    real = ["How do owners pay?", "When are reminders sent?"]
    llm_server.script(
        example, Reply(content=rewrite.fenced({"questions": real}), match=rewrite.QUESTIONS)
    )
    assert await propose_questions(rewrite.ORIGINAL_EN, factory, max_questions=3) == real

    llm_server.script(example, example)
    with pytest.raises(NotADocumentError) as failure:
        await propose_questions(rewrite.ORIGINAL_EN, factory, max_questions=3)
    # what the browser says ("could not draft questions: ..."), in either language
    assert "“First question”" in describe_failure(failure.value, "en")
    assert describe_failure(failure.value, "zh").startswith("回答不是文档")
