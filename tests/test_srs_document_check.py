"""A DocGenerate answer that is no document (a title, then raw JSON) is written again, then
reported: never offered as the SRS (issue 8, item 3)."""

from __future__ import annotations

import json

import pytest

from agents.srs.document_check import document_problem
from agents.srs.engine import SrsRequest
from agents.srs.events import DocumentReset, RunFinished
from tests.pure_documents import DOCUMENTS as PURE_DOCUMENTS
from tests.test_srs_support import SRS_TEXT, collect, doc_reply, failed, finished, parse_reply

REQUEST = SrsRequest(
    user_input="Readers borrow and return books.",
    reference_srs="",
    ablation="no-explore-clarify",
)
JSON_DOCUMENT = "# IEEE Std 830-1998\n" + json.dumps(
    [{"id": "FR-01", "content": "Readers borrow books."}], indent=2
)


@pytest.mark.parametrize(
    "text",
    [JSON_DOCUMENT, '# IEEE Std 830-1998\n[{"id": "FR-01"}]', "# SRS", "# SRS\n\n## 1\n"],
)
def test_what_is_not_a_document(text: str):
    assert document_problem(text)


def test_real_srs_documents_are_documents():
    for path in PURE_DOCUMENTS:
        assert document_problem(path.read_text(errors="replace")) is None, path
    assert document_problem(SRS_TEXT) is None


async def test_json_instead_of_a_document_is_written_again(llm_server, factory):
    llm_server.script(
        parse_reply(("FR-01", "Readers borrow books.")),
        doc_reply(JSON_DOCUMENT),
        doc_reply(),
    )
    events = await collect(REQUEST, factory)
    assert finished(events).srs_markdown == SRS_TEXT
    assert any(isinstance(e, DocumentReset) for e in events)  # the JSON is taken off the screen


async def test_json_every_time_is_reported_not_offered(llm_server, factory):
    llm_server.script(
        parse_reply(("FR-01", "Readers borrow books.")), *[doc_reply(JSON_DOCUMENT)] * 2
    )
    events = await collect(REQUEST, factory)
    failure = failed(events)
    assert failure.error_type == "NotADocument" and failure.agent == "DocGenerate"
    assert "not an SRS document" in failure.message and "srs.md" in failure.message_zh
    assert not any(isinstance(e, RunFinished) for e in events)
    assert failure.partial is not None and not failure.partial.srs_markdown
