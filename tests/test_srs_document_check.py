"""A DocGenerate answer that is no document (a title, then raw JSON) is written again, then
reported: never offered as the SRS."""

from __future__ import annotations

import json

import pytest

from reqstudio.failures import Failure, FailureCode
from reqstudio.modes.srs.document_check import document_problem
from reqstudio.modes.srs.engine import SrsRequest
from reqstudio.modes.srs.events import DocumentReset, RunFinished
from tests.pure_documents import DOCUMENTS as PURE_DOCUMENTS
from tests.scripted_server import Reply
from tests.test_srs_support import (
    EXPLORE,
    SRS_TEXT,
    collect,
    doc_reply,
    failed,
    fenced,
    finished,
    parse_reply,
)

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
    assert "not an SRS document" in failure.message and "srs.md" in failure.text("zh")
    assert not any(isinstance(e, RunFinished) for e in events)
    assert failure.partial is not None and not failure.partial.srs_markdown


# --- the prompt given back ----------------------------------------------

# What the offline model delivered as srs.md under "✅ 完成": its prompt's own words and the
# ids of the list it was given, as a bracketed list (in English the line twice).
ECHO_EN = (
    "# IEEE Std 830-1998\n\n"
    "IEEE Std 830-1998 [JSON] [FR-01, FR-02, FR-03]\n"
    "IEEE Std 830-1998 [JSON] [FR-01, FR-02, FR-03]\n"
)
ECHO_ZH = "# 软件需求规格说明\n\nIEEE Std 830-1998 [JSON] [FR-01, FR-02, FR-03]\n"
ECHO_EARS = (
    "# Software Requirements Specification\n\n"
    "The <system> shall <response>.\nWhen <trigger>, the <system> shall <response>.\n"
)


@pytest.mark.parametrize("text", [ECHO_EN, ECHO_ZH, ECHO_EARS], ids=["en", "zh", "ears"])
def test_the_prompt_given_back_is_not_a_document(text: str):
    assert document_problem(text).startswith("the answer is not a document")


async def test_the_prompt_given_back_twice_is_reported_not_offered(llm_server, factory):
    llm_server.script(parse_reply(("FR-01", "Readers borrow books.")), *[doc_reply(ECHO_EN)] * 2)
    events = await collect(REQUEST, factory)
    failure = failed(events)
    assert failure.error_type == "NotADocument" and failure.agent == "DocGenerate"
    assert "not an SRS document (the answer is not a document" in failure.message
    assert "[FR-01, FR-02, FR-03]" in failure.message
    assert "回答不是文档" in failure.text("zh") and "srs.md" in failure.text("zh")
    assert not any(isinstance(e, RunFinished) for e in events)
    assert sum(isinstance(e, DocumentReset) for e in events) == 1  # asked again once


async def test_the_failure_is_a_code_and_values_said_in_either_language(llm_server, factory):
    """The engine records why as a code and values (JSON data); the words in each language
    come from the catalogue and are what the run's messages say."""
    llm_server.script(parse_reply(("FR-01", "Readers borrow books.")), *[doc_reply(ECHO_ZH)] * 2)
    failure = failed(await collect(REQUEST, factory))
    assert failure.code == FailureCode.SRS_NOT_AN_SRS
    assert failure.values["reason"]["code"] == FailureCode.NOT_A_DOCUMENT
    said = Failure.from_dict(
        json.loads(json.dumps({"code": failure.code, "values": failure.values}))
    )
    assert said.text("zh-CN") == failure.text("zh") and "回答不是文档" in failure.text("zh")
    assert said.text("en") == failure.message and "not an SRS document" in failure.message


def test_the_cli_exits_1_and_writes_no_srs_for_the_prompt_given_back(llm_server, tmp_path):
    from tests.cli_support import run_reqstudio
    from tests.test_srs_support import E_STORE

    llm_server.script(
        parse_reply(("FR-01", "Place an order.")),
        Reply(content=fenced([{"id": "FR-01", "content": "Place an order."}]), match=EXPLORE),
        *[doc_reply(ECHO_EN)] * 2,
    )
    out = tmp_path / "srs.md"
    done = run_reqstudio(
        llm_server.base_url, tmp_path, "srs", "generate", "--input", E_STORE / "input.md",
        "--out", out, "--lang", "en", OPENAI_TIMEOUT="10",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "DocGenerate failed" in done.stderr and "the answer is not a document" in done.stderr
    assert not out.exists()
    [record] = (tmp_path / "data" / "failed-runs").glob("srs-*.json")
    data = json.loads(record.read_text(encoding="utf-8"))
    assert data["complete"] is False and data["error_type"] == "NotADocument"
