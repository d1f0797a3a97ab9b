"""Review's inputs and outputs (issue 16, items 11-13), as a user meets them: a document too
large for the model's context, a run that fails after a finished round, an author who repeats
the section's heading, a file that is not UTF-8, and the browser's final message."""

from __future__ import annotations

from agents.review import ReviewRequest, run_review
from agents.review.events import RunFinished
from tests import test_review_cli
from tests.review_support import DOCUMENT, author_reply, improvement, panel

run = test_review_cli.run  # the `reqstudio review` fixture: a real process, its env

NEW_BOOKING = "Owners book a visit with a vet. Free slots are listed within 2 s.\n"
OLD_BOOKING = "Owners book a visit with a vet. The search for free slots is fast.\n"


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
    import agents.srs.documents as documents

    path = tmp_path / "spec.txt"
    path.write_bytes("Система бронирования\n".encode("koi8_r"))
    monkeypatch.setattr(documents, "locale_encoding", lambda: "koi8_r")
    loaded = documents.load_reference(path)
    assert (loaded.text, loaded.encoding) == ("Система бронирования", "koi8_r")
