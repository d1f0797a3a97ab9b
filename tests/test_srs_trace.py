"""The traceability matrix: each requirement's origin (a request sentence, a
clarification round, a reference section), the matrix the SRS ends with, srs-trace.csv, and
the checker's finding for request sentences that no requirement traces to. The runs talk HTTP
to the scripted model server."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from reqstudio.check.engine import check_document
from reqstudio.check.trace import (
    match_sentences,
    read_matrix,
    request_sentences,
    split_matrix,
)
from reqstudio.modes.srs.engine import SrsRequest
from reqstudio.modes.srs.trace import trace_rows
from tests.cli_support import run_reqstudio
from tests.test_srs_support import (
    SRS_DATA,
    SRS_TEXT,
    clarify_reply,
    collect,
    doc_reply,
    explore_reply,
    finished,
    parse_reply,
)

DATA = SRS_DATA / "trace"
REQUEST_TEXT = (DATA / "request.md").read_text(encoding="utf-8")
REFERENCE_TEXT = (DATA / "reference.md").read_text(encoding="utf-8")
SENTENCES = [
    "Customers browse the product catalogue by category.",
    "Customers pay for orders by credit card.",
    "The shop e-mails an order confirmation to the customer.",
    "Administrators export monthly sales reports as CSV files.",
    "The shop also runs a loyalty programme with bonus points.",
]
BROWSE = "The system shall let customers browse the product catalogue by category."
PAY = "The system shall accept credit card payment for orders."
PAY_2 = "The system shall accept payment for orders by Visa or Mastercard credit card."
MAIL = "The system shall e-mail an order confirmation to the customer."
EXPORT = "The system shall let administrators export monthly sales reports as CSV files."
FAST = "Pages shall load within 2 seconds."
HTTPS = "The system shall serve every payment page over HTTPS."


def script_clarified_run(server) -> None:
    """Two rounds: round 1 rewrites FR-02, adds NFR-01, and its scores remove FR-04 (the only
    item from S4); round 2 adds CON-01, which matches the reference's section 3.4."""
    server.script(
        parse_reply(("FR-01", BROWSE), ("FR-02", PAY), ("FR-03", MAIL), ("FR-04", EXPORT)),
        explore_reply(
            ("FR-01", BROWSE), ("FR-02", PAY_2), ("FR-03", MAIL), ("FR-04", EXPORT),
            ("NFR-01", FAST),
        ),
        clarify_reply(FR_01=2, FR_02=1, FR_03=0, FR_04=-2, NFR_01=1),
        explore_reply(("FR-02", PAY_2), ("FR-03", MAIL), ("NFR-01", FAST), ("CON-01", HTTPS)),
        clarify_reply(FR_02=1, FR_03=1, NFR_01=0, CON_01=1),
        doc_reply(),
    )  # fmt: skip


EXPECTED_ORIGINS = {
    "FR-01": f"request S1: “{SENTENCES[0]}”",
    "FR-02": f"request S2: “{SENTENCES[1]}”; revised in round 1",
    "FR-03": f"request S3: “{SENTENCES[2]}”",
    "NFR-01": "clarification round 1",
    "CON-01": "clarification round 2 (reference § 3.4 Security)",
}


# --- the deterministic parts -------------------------------------------------------------------


def test_request_sentences_leave_out_headings_and_list_markers():
    assert request_sentences(REQUEST_TEXT) == SENTENCES
    zh = "# 网上商店\n\n顾客按类别浏览商品目录。顾客使用信用卡支付订单！\n1. 管理员每月导出销售报表"
    assert request_sentences(zh) == ["顾客按类别浏览商品目录。", "顾客使用信用卡支付订单！", "管理员每月导出销售报表"]  # fmt: skip
    # a short line is a title only when a paragraph or a list follows it
    assert request_sentences("Users log in with e-mail") == ["Users log in with e-mail"]
    assert request_sentences("Users log in\nUsers reset passwords") == [
        "Users log in",
        "Users reset passwords",
    ]
    assert request_sentences("**Goals**\n- Users log in\n- Users reset passwords") == [
        "Users log in",
        "Users reset passwords",
    ]


def test_a_requirement_matches_the_sentence_it_shares_words_with():
    assert match_sentences(PAY, SENTENCES) == [2]
    assert match_sentences("系统应允许顾客按类别浏览商品目录", ["顾客按类别浏览商品目录。", "顾客使用信用卡支付订单。"]) == [1]  # fmt: skip
    # nothing in common: no sentence, rather than a guess
    assert match_sentences(HTTPS, SENTENCES) == []


def test_a_requirement_without_a_recorded_origin_says_so():
    """A run resumed from a checkpoint saved before origins were kept: unknown, not a guess."""
    (row,) = trace_rows([{"id": "FR-01", "content": BROWSE}], {}, REQUEST_TEXT)
    assert (row.kind, row.origin) == ("unknown", "unknown (recorded before this run kept origins)")
    assert row.origin_zh == "未知（该运行开始时尚未记录来源）"


def test_the_checker_does_not_read_the_matrix_as_requirements():
    text = (DATA / "srs.md").read_text(encoding="utf-8")
    report = check_document(text)
    assert [r.id for r in report.requirements] == ["FR-01", "FR-02", "FR-03"]
    assert not [f for f in report.findings if f.rule == "SRS-duplicate-id"]
    assert [r.id for r in read_matrix(text) or []] == ["FR-01", "FR-02", "FR-03"]


def test_the_matrix_is_the_last_section_of_that_name():
    """DocGenerate may write a "Traceability Matrix" section of its own (IEEE 830 documents
    often have one): the matrix appended after the document is the one read."""
    text = (DATA / "srs.md").read_text(encoding="utf-8")
    own = "## Traceability Matrix\n\n| Req | Test |\n|---|---|\n| FR-01 | T-1 |\n\n"
    text = text.replace("## Traceability matrix", own + "## Traceability matrix")
    assert [r.id for r in read_matrix(text) or []] == ["FR-01", "FR-02", "FR-03"]
    body, matrix = split_matrix(text)
    assert own.strip() in body and "| T-1 |" not in matrix
    untraced = check_document(text, request=REQUEST_TEXT).summary()["trace"]["untraced"]
    assert untraced == ["S4", "S5"]


def test_the_checker_reports_untraced_sentences_by_the_matrix_or_by_words():
    text = (DATA / "srs.md").read_text(encoding="utf-8")
    report = check_document(text, request=REQUEST_TEXT)
    untraced = [f for f in report.findings if f.rule == "SRS-untraced-request"]
    assert [f.term for f in untraced] == [SENTENCES[3], SENTENCES[4]]
    assert (
        untraced[0].message == f"request sentence S4 is traced by no requirement: “{SENTENCES[3]}”"
    )
    assert report.summary()["trace"] == {"request_sentences": 5, "untraced": ["S4", "S5"]}
    # the matrix is the record: a matrix that names S4 traces it, whatever the words
    named = text.replace("request S3:", "request S3, S4:")
    assert check_document(named, request=REQUEST_TEXT).summary()["trace"]["untraced"] == ["S5"]
    # without a matrix the requirements' words decide: FR-01..03 trace S1..S3
    body, matrix = split_matrix(text)
    assert matrix.startswith("## Traceability matrix") and "Traceability" not in body
    assert check_document(body, request=REQUEST_TEXT).summary()["trace"]["untraced"] == ["S4", "S5"]
    # no request: no such finding and no trace summary
    assert "trace" not in check_document(text).summary()


# --- a scripted run ----------------------------------------------------------------------------


async def test_origins_of_a_clarified_run(llm_server, factory):
    script_clarified_run(llm_server)
    request = SrsRequest(user_input=REQUEST_TEXT, reference_srs=REFERENCE_TEXT, max_iterations=3)
    result = finished(await collect(request, factory))

    assert result.removed_ids == ["FR-04"]
    assert {row.id: row.origin for row in result.traceability} == EXPECTED_ORIGINS
    rows = {row.id: row for row in result.traceability}
    assert rows["FR-02"].kind == "request" and rows["FR-02"].sentences == [2]
    assert rows["FR-02"].revised == [1] and rows["FR-02"].requirement == PAY_2
    assert (rows["CON-01"].kind, rows["CON-01"].round) == ("round", 2)
    assert rows["CON-01"].reference_section == "3.4 Security"
    assert rows["NFR-01"].reference_section == ""  # round 1 was scored against nothing yet
    assert result.request_sentences == SENTENCES

    # the document as DocGenerate wrote it, then the matrix
    assert result.srs_markdown == SRS_TEXT
    body, matrix = split_matrix(result.final_markdown())
    assert body == SRS_TEXT
    assert "| CON-01 | The system shall serve every payment page over HTTPS. | clarification round 2 (reference § 3.4 Security) |" in matrix  # fmt: skip
    # the checker: S4 lost its only requirement (FR-04, removed), S5 never had one
    report = check_document(result.final_markdown(), request=REQUEST_TEXT)
    assert report.summary()["trace"]["untraced"] == ["S4", "S5"]
    # as the browser's check step calls it: with the run's sentences
    report = check_document(result.final_markdown(), request=result.request_sentences)
    assert [f.term for f in report.findings if f.rule == "SRS-untraced-request"] == SENTENCES[3:]


async def test_no_clarify_rounds_are_exploration_rounds_and_an_unmatched_item_says_so(
    llm_server, factory
):
    llm_server.script(
        parse_reply(("FR-01", BROWSE), ("NFR-01", "Pages shall use a clean visual style.")),
        explore_reply(("FR-01", BROWSE), ("CON-01", HTTPS)),
        doc_reply(),
    )
    result = finished(await collect(SrsRequest(user_input=REQUEST_TEXT), factory))
    assert {row.id: row.origin for row in result.traceability} == {
        "FR-01": f"request S1: “{SENTENCES[0]}”",
        "NFR-01": "request (no single sentence matches)",
        "CON-01": "exploration round 1",
    }
    assert {row.id: row.origin_zh for row in result.traceability}["CON-01"] == "探索第 1 轮"


async def test_a_chinese_document_gets_a_chinese_matrix(llm_server, factory):
    doc = "# 软件需求规格说明\n\n## 1. 引言\n\n本文档描述网上商店的全部需求，包括商品浏览与订单支付。\n"
    llm_server.script(
        parse_reply(("FR-01", "系统应允许顾客按类别浏览商品目录")),
        explore_reply(("FR-01", "系统应允许顾客按类别浏览商品目录")),
        doc_reply(doc),
    )
    request = SrsRequest(user_input="顾客按类别浏览商品目录。顾客使用信用卡支付订单。")
    result = finished(await collect(request, factory))
    body, matrix = split_matrix(result.final_markdown())
    assert body == doc
    assert matrix.startswith("## 追溯矩阵") and "| 编号 | 需求 | 来源 |" in matrix
    assert (
        "| FR-01 | 系统应允许顾客按类别浏览商品目录 | 需求描述 S1：“顾客按类别浏览商品目录。” |"
        in matrix
    )
    report = check_document(result.final_markdown(), request=request.user_input)
    assert report.summary()["trace"]["untraced"] == ["S2"]
    assert report.findings[-1].message_zh.startswith("需求描述第 2 句（S2）没有任何需求可追溯到")


# --- the CLI -----------------------------------------------------------------------------------


@pytest.fixture
def run_cli(llm_server, tmp_path):
    def run(*args: str) -> object:
        return run_reqstudio(llm_server.base_url, tmp_path, *args, OPENAI_TIMEOUT="10")

    return run


def test_generate_writes_the_matrix_into_srs_md_and_srs_trace_csv(run_cli, llm_server, tmp_path):
    script_clarified_run(llm_server)
    out, log = tmp_path / "srs.md", tmp_path / "log.json"
    done = run_cli(
        "srs", "generate",
        "--input", str(DATA / "request.md"),
        "--reference", str(DATA / "reference.md"),
        "--max-iterations", "3",
        "--out", str(out),
        "--log", str(log),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    body, matrix = split_matrix(out.read_text(encoding="utf-8"))
    assert body == SRS_TEXT
    assert [row.id for row in read_matrix(matrix) or []] == list(EXPECTED_ORIGINS)
    assert {row.id: row.origin for row in read_matrix(matrix) or []} == EXPECTED_ORIGINS

    trace = tmp_path / "srs-trace.csv"
    assert f"(traceability matrix: {trace})" in done.stderr
    rows = list(csv.DictReader(io.StringIO(trace.read_text(encoding="utf-8"))))
    assert {r["id"]: r["origin"] for r in rows} == EXPECTED_ORIGINS
    assert rows[1] == {
        "id": "FR-02",
        "requirement": PAY_2,
        "origin": EXPECTED_ORIGINS["FR-02"],
        "kind": "request",
        "request_sentences": "S2",
        "round": "",
        "reference_section": "",
        "revised_in_rounds": "1",
    }
    assert rows[4]["kind"] == "round" and rows[4]["round"] == "2"
    assert rows[4]["reference_section"] == "3.4 Security"

    # the log carries the matrix and the checker's view of the request
    data = json.loads(log.read_text(encoding="utf-8"))
    assert [row["id"] for row in data["traceability"]] == list(EXPECTED_ORIGINS)
    assert data["check"]["trace"] == {"request_sentences": 5, "untraced": ["S4", "S5"]}

    # and `reqstudio check --request` on what was written says the same
    checked = run_cli("check", str(out), "--request", str(DATA / "request.md"), "--json")
    assert checked.returncode == 0, checked.stderr
    found = json.loads(checked.stdout)
    untraced = [f for f in found["findings"] if f["rule"] == "SRS-untraced-request"]
    assert [(f["requirement_id"], f["term"]) for f in untraced] == [
        ("", SENTENCES[3]),
        ("", SENTENCES[4]),
    ]
    text = run_cli("check", str(out), "--request", str(DATA / "request.md"), "--lang", "en")
    assert "request sentence S5 is traced by no requirement" in text.stdout
    assert "request: 3/5 sentences traced" in text.stdout


def test_generate_to_stdout_ends_with_the_matrix_and_trace_goes_where_asked(
    run_cli, llm_server, tmp_path
):
    llm_server.script(parse_reply(("FR-01", BROWSE)), explore_reply(("FR-01", BROWSE)), doc_reply())
    trace = tmp_path / "matrix.csv"
    done = run_cli("srs", "generate", "--input", str(DATA / "request.md"), "--trace", str(trace))
    assert done.returncode == 0, done.stderr
    body, matrix = split_matrix(done.stdout)
    assert body == SRS_TEXT and f"| FR-01 | {BROWSE} | request S1:" in matrix
    assert trace.read_text(encoding="utf-8").splitlines()[1].startswith("FR-01,")


def test_check_request_must_exist(tmp_path: Path, llm_server):
    done = run_reqstudio(
        llm_server.base_url, tmp_path, "check", str(DATA / "srs.md"), "--request", "nope.txt"
    )
    assert done.returncode == 2
    assert "--request: no such file: nope.txt" in done.stderr
