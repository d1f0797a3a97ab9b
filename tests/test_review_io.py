"""Review's inputs and outputs, as a user meets them: a document too
large for the model's context, a run that fails after a finished round, an author who repeats
the section's heading, a file that is not UTF-8, and the browser's final message."""

from __future__ import annotations

import json

from reqstudio.modes.review import ReviewRequest, run_review
from reqstudio.modes.review.events import RunFailed, RunFinished
from tests import test_review_cli
from tests.review_support import DOCUMENT, author_reply, improvement, panel
from tests.scripted_server import Reply

# The `reqstudio review` fixtures: a real process with its env, and the clinic document.
run, document = test_review_cli.run, test_review_cli.document

NEW_BOOKING = "Owners book a visit with a vet. Free slots are listed within 2 s.\n"
OLD_BOOKING = "Owners book a visit with a vet. The search for free slots is fast.\n"


# --- 11: a document too large for the model's context ------------------------------------

# About 7,000 tokens: over a context of 3,000, whole within the default 128,000.
LARGE = DOCUMENT + "".join(
    f"\n## {n}. Audit {n}\n\n" + "Every booking change is logged with its time and author. " * 25
    for n in range(4, 24)
)


def test_a_document_too_large_for_the_context_is_refused_before_any_call(run, llm_server, tmp_path):
    (tmp_path / ".env").write_text("OPENAI_CONTEXT_TOKENS=3000\n", encoding="utf-8")
    path = tmp_path / "large.md"
    path.write_text(LARGE, encoding="utf-8")
    done = run("--doc", path)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("reqstudio: --doc: large.md is too large to review with this model")
    assert "the model's context is 3,000 tokens (OPENAI_CONTEXT_TOKENS)" in line
    assert "the document alone about 7," in line
    assert done.stdout == ""
    assert llm_server.requests == []


async def test_the_engine_refuses_it_too_and_a_fitting_document_runs(factory, llm_server):
    small = factory.settings.model_copy(update={"context_tokens": 3000})
    tight = type(factory)(small, factory.endpoint)
    events = [e async for e in run_review(ReviewRequest(document=LARGE, title="large"), tight)]
    assert len(events) == 1 and isinstance(events[0], RunFailed)
    assert "3,000 tokens" in events[0].message and "3,000 tokens" in events[0].text("zh")
    assert llm_server.requests == []
    llm_server.script(*panel(improvement("sec-03", "low")))
    events = [e async for e in run_review(ReviewRequest(document=DOCUMENT), tight)]
    assert isinstance(events[-1], RunFinished), events[-1]


# --- 12: a failure after a finished round keeps that round's document ---------------------

FOREVER_500 = [Reply(fault="500") for _ in range(40)]
IMPROVED = DOCUMENT.replace(
    "Owners book a visit with a vet. The search for free slots is fast.\n",
    "Owners book a visit with a vet. Free slots are listed within 2 s.\n",
)


def round_one_then_500s(llm_server) -> None:
    llm_server.script(
        *panel(improvement("sec-03")),
        author_reply("sec-03", NEW_BOOKING),
        *FOREVER_500,
    )


def test_a_failure_in_round_2_writes_round_1s_document_and_reviews(
    run, llm_server, document, tmp_path
):
    round_one_then_500s(llm_server)
    out, reviews = tmp_path / "improved.md", tmp_path / "reviews.json"
    done = run("--doc", document, "--out", out, "--json", reviews)
    assert done.returncode == 3, done.stderr
    assert done.stdout == ""
    notice, blank, rest = out.read_text(encoding="utf-8").split("\n", 2)
    assert notice.startswith("> **INCOMPLETE**: the review stopped in round 2 (")
    assert notice.endswith("this is the document as revised through round 1.")
    assert (blank, rest) == ("", IMPROVED)
    data = json.loads(reviews.read_text(encoding="utf-8"))
    assert data["complete"] is False and data["stop_reason"] is None
    assert (data["failed_in_round"], data["revised_through_round"]) == (2, 1)
    assert [r["round"] for r in data["rounds"]] == [1]
    assert data["rounds"][0]["revisions"][0]["agent_id"] == "sec-03"
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ERROR: ")
    assert (
        f"(incomplete result kept: the document as revised through round 1 in {out}, "
        f"the reviews of 1 round(s) in {reviews})" in last
    )


def test_without_out_or_json_the_incomplete_result_goes_beside_the_document(
    run, llm_server, document
):
    round_one_then_500s(llm_server)
    done = run("--doc", document)
    assert done.returncode == 3, done.stderr
    assert done.stdout == "", "an incomplete document is never piped on as if whole"
    written = document.with_name("clinic.partial.md")
    reviews = document.with_name("clinic.partial.reviews.json")
    assert written.read_text(encoding="utf-8").split("\n", 2)[2] == IMPROVED
    assert json.loads(reviews.read_text(encoding="utf-8"))["complete"] is False
    assert f"in {written}, the reviews of 1 round(s) in {reviews})" in done.stderr
    assert document.read_text(encoding="utf-8") == DOCUMENT


def test_a_failure_before_any_finished_round_writes_nothing_and_exits_1(
    run, llm_server, document, tmp_path
):
    llm_server.script(*FOREVER_500)
    out = tmp_path / "improved.md"
    done = run("--doc", document, "--out", out)
    assert done.returncode == 1, done.stderr
    assert not out.exists() and not document.with_name("clinic.partial.md").exists()
    assert done.stderr.strip().splitlines()[-1].startswith("ERROR: ")


# --- 13: the section's heading repeated by its author -------------------------------------


async def test_an_author_answer_repeating_the_heading_gives_it_once(factory, llm_server):
    llm_server.script(
        *panel(improvement("sec-03")),
        author_reply("sec-03", "## 2. Booking\n\n" + NEW_BOOKING),
        *panel(improvement("sec-03", "low")),
    )
    events = [e async for e in run_review(ReviewRequest(document=DOCUMENT), factory)]
    assert isinstance(events[-1], RunFinished), events[-1]
    improved = events[-1].result.improved_markdown
    assert improved == DOCUMENT.replace(OLD_BOOKING, NEW_BOOKING)
    assert improved.count("## 2. Booking") == 1


# --- 13: files that are not UTF-8 ---------------------------------------------------------

LATIN_1 = "# Réservation\n\nLe système gère les réservations à l'hôtel.\n"


def test_a_short_latin_1_file_is_read_as_latin_1(run, llm_server, tmp_path):
    path = tmp_path / "hotel.md"
    path.write_bytes(LATIN_1.encode("latin-1"))
    llm_server.script(*panel(improvement("sec-01", "low")))
    done = run("--doc", path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == LATIN_1
    assert "Le système gère les réservations" in llm_server.requests[0]["messages"][0]["content"]


def test_a_file_whose_encoding_cannot_be_told_is_refused_with_one_line(run, llm_server, tmp_path):
    path = tmp_path / "odd.txt"
    path.write_bytes(bytes([0x41, 0x9D, 0x8F, 0x81, 0x42, 0xFE, 0x90, 0x0A]))
    done = run("--doc", path)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("reqstudio: --doc: odd.txt: its text encoding cannot be told for sure")
    assert "save it as UTF-8" in line
    assert llm_server.requests == []


def test_the_users_locale_encoding_comes_before_detection(monkeypatch, tmp_path):
    """A short Cyrillic text reads as cp1251 by default; with a KOI8-R locale, as KOI8-R when
    detection finds that reading as plausible."""
    import reqstudio.modes.srs.documents as documents

    path = tmp_path / "spec.txt"
    path.write_bytes("Система бронирования\n".encode("koi8_r"))
    monkeypatch.setattr(documents, "locale_encoding", lambda: "koi8_r")
    loaded = documents.load_reference(path)
    assert (loaded.text, loaded.encoding) == ("Система бронирования", "koi8_r")

    # A Western locale does not turn a GBK file into mojibake: that reading is all mess.
    monkeypatch.setattr(documents, "locale_encoding", lambda: "cp1252")
    path.write_bytes("中文需求文档：系统必须支持在线预约。\n".encode("gbk"))
    loaded = documents.load_reference(path)
    assert (loaded.text, loaded.encoding) == ("中文需求文档：系统必须支持在线预约。", "gb18030")


# --- 13 and 12 in the browser: the final message and the downloads of a failed run --------


async def test_the_browser_says_no_change_instead_of_pasting_an_unchanged_document(
    factory, llm_server
):
    from reqstudio.web.review import improved_document_text

    llm_server.script(*panel(improvement("sec-03", "medium")))
    events = [e async for e in run_review(ReviewRequest(document=DOCUMENT), factory)]
    unchanged = events[-1].result
    text = improved_document_text(unchanged)
    assert text.startswith("📄 No change: after 1 round of review no section was revised")
    assert "Owners book a visit" not in text

    llm_server.script(
        *panel(improvement("sec-03")),
        author_reply("sec-03", NEW_BOOKING),
        *panel(improvement("sec-03", "low")),
    )
    events = [e async for e in run_review(ReviewRequest(document=DOCUMENT), factory)]
    assert improved_document_text(events[-1].result).endswith("\n\n" + IMPROVED)


async def test_the_browsers_partial_downloads_are_marked_incomplete(factory, llm_server):
    from reqstudio.web.review import partial_download_contents, partial_text

    round_one_then_500s(llm_server)
    events = [e async for e in run_review(ReviewRequest(document=DOCUMENT), factory)]
    failed = events[-1]
    assert isinstance(failed, RunFailed), failed
    files = partial_download_contents(failed.partial, failed.message)
    assert sorted(files) == ["improved-partial-reviews.json", "improved-partial.md"]
    notice, blank, rest = files["improved-partial.md"].decode().split("\n", 2)
    assert notice.startswith("> **INCOMPLETE**: the review stopped in round 2")
    assert (blank, rest) == ("", IMPROVED)
    data = json.loads(files["improved-partial-reviews.json"])
    assert data["complete"] is False and len(data["rounds"]) == 1
    assert partial_text(failed.partial).startswith(
        "The document to download is the document as revised through round 1"
    )


async def test_the_browser_refuses_a_document_too_large_in_one_message(
    monkeypatch, factory, llm_server
):
    import reqstudio.web.review.flow

    sent: list[str] = []

    class Message:
        def __init__(self, content: str):
            self.content = content

        async def send(self) -> None:
            sent.append(self.content)

    tight = type(factory)(
        factory.settings.model_copy(update={"context_tokens": 3000}), factory.endpoint
    )

    class Runtime:  # the app's runtime, with a model of a 3,000-token context
        settings = tight.settings

        def factory(self):
            return tight

    monkeypatch.setattr(reqstudio.web.review.flow, "runtime", Runtime)
    monkeypatch.setattr(
        reqstudio.web.review.flow, "thread_factory", Runtime().factory
    )  # the thread's
    monkeypatch.setattr(reqstudio.web.review.flow, "top_level_message", Message)
    assert await reqstudio.web.review.flow.render_review(LARGE, "large.md") is None
    (line,) = sent
    assert line.startswith("⚠️ large.md is too large to review with this model")
    assert "3,000 tokens (OPENAI_CONTEXT_TOKENS)" in line and "\n" not in line
    assert llm_server.requests == []
