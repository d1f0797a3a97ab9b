"""Rewrites that keep the meaning: the guard on pairs of original and rewrite (no model), and
`reqstudio check --suggest` against the scripted provider over HTTP, including answers that
are garbage, cut at the length limit or stopped by the content filter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reqstudio.calls import policy_for
from reqstudio.check.parse import Requirement
from reqstudio.check.rewrite_guard import guard_rewrite
from tests.cli_support import QUICK, run_reqstudio
from tests.scripted_server import Reply


def _requirement(text: str) -> Requirement:
    zh = any("\u4e00" <= ch <= "\u9fff" for ch in text)
    return Requirement(id="R-1", text=text, line=3, language="zh" if zh else "en")


# (original, rewrite that keeps the meaning, rewrite that breaks it, the kind it breaks)
PAIRS = [
    (
        "The system shall respond quickly to a search request.",
        "The system shall respond to a search request within TBD seconds.",
        "The system should respond to a search request.",
        "modal",
    ),
    (
        "The system may offer several export formats.",
        "The system may offer TBD export formats.",
        "The system shall offer several export formats.",
        "modal",
    ),
    (
        "The system shall respond within 2 s to a search request in most cases.",
        "The system shall respond within 2 s to a search request.",
        "The system shall respond within 5 s to a search request.",
        "quantity",
    ),
    (
        "The pump shall deliver 20 l/min of water as appropriate.",
        "The pump shall deliver 20 l/min of water.",
        "The pump shall deliver 20 ml/min of water.",
        "quantity",
    ),
    (
        "The system shall not store passwords in clear text, as far as possible.",
        "The system shall not store passwords in clear text.",
        "The system shall store passwords in clear text.",
        "negation",
    ),
    (
        "If the sensor fails, the controller shall stop the pump quickly.",
        "If the sensor fails, the controller shall stop the pump within TBD seconds.",
        "The controller shall stop the pump within TBD seconds.",
        "condition",
    ),
    (
        "The operator shall approve each order quickly.",
        "The operator shall approve each order within TBD minutes.",
        "The manager shall approve each order within TBD minutes.",
        "actor",
    ),
    (
        "The system shall export reports to SAP in a user-friendly format.",
        "The system shall export reports to SAP in a TBD format.",
        "The system shall export reports to the ERP in a TBD format.",
        "entity",
    ),
    (
        "系统应快速响应查询请求。",
        "系统应在待定秒内响应查询请求。",
        "系统可以快速响应查询请求。",
        "modal",
    ),
    (
        "系统必须在2秒内快速响应。",
        "系统必须在2秒内响应。",
        "系统必须在5秒内响应。",
        "quantity",
    ),
    (
        "系统不得快速删除用户数据。",
        "系统不得在待定秒内删除用户数据。",
        "系统在待定秒内删除用户数据。",
        "negation",
    ),
    (
        "如果传感器故障，控制器应快速停止水泵。",
        "如果传感器故障，控制器应在待定秒内停止水泵。",
        "控制器应在待定秒内停止水泵。",
        "condition",
    ),
    (
        "操作员应及时审批每个订单。",
        "操作员应在待定分钟内审批每个订单。",
        "管理员应在待定分钟内审批每个订单。",
        "actor",
    ),
]


@pytest.mark.parametrize(("original", "kept", "broken", "kind"), PAIRS)
def test_the_guard_accepts_a_rewording_and_refuses_a_change_of_meaning(
    original, kept, broken, kind
):
    good = guard_rewrite(_requirement(original), kept)
    assert good.accepted, good.reasons()
    bad = guard_rewrite(_requirement(original), broken)
    assert not bad.accepted
    assert kind in {c.kind for c in bad.changes}, bad.reasons()
    assert bad.reasons("en") and bad.reasons("zh")
    assert bad.findings_after == []  # a refused rewrite is not offered as checked


def test_an_accepted_rewrite_is_re_checked_and_shown_as_a_word_diff():
    judged = guard_rewrite(
        _requirement("The system shall respond quickly to a search request."),
        "The system shall respond to a search request within TBD seconds.",
    )
    assert judged.accepted and judged.fewer_findings
    assert {f.rule for f in judged.findings_before} >= {"ISO29148-ambiguous"}
    assert "ISO29148-ambiguous" not in {f.rule for f in judged.findings_after}
    assert judged.diff == (
        "The system shall respond [-quickly-] to a search request {+within TBD seconds+}."
    )


@pytest.mark.parametrize(
    ("rewrite", "problem"),
    [("", "empty"), ("The system shall respond quickly  to a search request.", "same")],
)
def test_no_rewrite_is_refused(rewrite, problem):
    judged = guard_rewrite(
        _requirement("The system shall respond quickly to a search request."), rewrite
    )
    assert not judged.accepted and judged.problem == problem


def test_the_reasons_name_the_words_in_both_languages():
    judged = guard_rewrite(_requirement("系统必须在2秒内响应。"), "系统可以在2秒内响应。")
    assert judged.reasons("zh") == ["情态动词被减弱：“必须”→“可以”"]
    assert judged.reasons("en") == ["modal verb weakened: '必须' -> '可以'"]


# --- the CLI against the scripted provider ---------------------------------------------------

DOCUMENT = """# Requirements

- FR-1: The system shall respond quickly to a search request.
- FR-2: The operator shall approve each order quickly.
- FR-3: The system shall write the user name of a sign-in to the audit log within 2 s.
"""
FR1 = "respond quickly to a search request"
FR2 = "approve each order quickly"
TRIES = policy_for("CheckSuggest").attempts


FR1_KEPT = "The system shall respond to a search request within TBD seconds."  # a rewording


def rewritten(rewrite: str, match: str) -> Reply:
    """The model's answer giving `rewrite` (in fenced JSON, as the prompt asks) to the request
    that holds `match`."""
    return Reply(content="```json\n" + json.dumps({"rewrite": rewrite}) + "\n```", match=match)


@pytest.fixture
def document(tmp_path: Path) -> Path:
    path = tmp_path / "srs.md"
    path.write_text(DOCUMENT, encoding="utf-8")
    return path


def suggest(llm_server, tmp_path: Path, document: Path, *args: str):
    return run_reqstudio(
        llm_server.base_url, tmp_path, "check", document, "--suggest", *args, **QUICK
    )


def test_suggest_accepts_a_rewording_and_refuses_a_change(llm_server, tmp_path, document):
    llm_server.script(
        rewritten(FR1_KEPT, FR1),
        rewritten("The manager shall approve each order within TBD minutes.", FR2),
    )
    done = suggest(llm_server, tmp_path, document, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {"summary", "findings", "requirements", "suppressed"} <= set(data)  # the check's keys
    s = data["suggestions"]["summary"]
    assert (s["asked"], s["accepted"], s["refused"], s["failed"], s["fewer_findings"]) == (
        2,
        1,
        1,
        0,
        1,
    )
    assert s["complete"] is True and s["model"] == "scripted-model"
    one, two = data["suggestions"]["items"]
    assert one["requirement_id"] == "FR-1" and one["accepted"]
    assert (
        one["diff"]
        == "The system shall respond [-quickly-] to a search request {+within TBD seconds+}."
    )
    assert one["findings_after"] < one["findings_before"]
    assert two["requirement_id"] == "FR-2" and not two["accepted"]
    assert two["refused_because"] == ["actor changed: 'operator' -> 'manager'"]
    assert two["findings_after"] is None
    # FR-3 has no findings: no model call about it
    assert not llm_server.texts_with("user name of a sign-in")


def test_suggest_text_in_chinese(llm_server, tmp_path, document):
    llm_server.script(
        rewritten(FR1_KEPT, FR1),
        rewritten("The operator should approve each order within TBD minutes.", FR2),
    )
    done = suggest(llm_server, tmp_path, document, "--lang", "zh")
    assert done.returncode == 0, done.stderr
    assert "## 改写建议（模型：scripted-model）" in done.stdout
    assert "FR-1（第 3 行）：通过，问题 2 → 1" in done.stdout
    assert "FR-2（第 4 行）：拒绝：情态动词被减弱：“shall”→“should”" in done.stdout
    assert "[-quickly-]" in done.stdout
    assert (
        "改写建议：请求 2 条，通过 1 条（其中 1 条问题减少），拒绝 1 条，失败 0 条" in done.stdout
    )


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (Reply(content="Sure! Here is a better requirement, no JSON."), "not valid JSON"),
        (Reply(content='```json\n{"verdict": "fine"}\n```'), "rewrite: Field required"),
        (Reply(content='{"rewrite": "The system shall', finish_reason="length"), "length"),
        (Reply(content="", finish_reason="content_filter"), "content filter"),
    ],
    ids=["garbage", "no-field", "length", "content_filter"],
)
def test_a_suggestion_without_an_answer_is_a_failure_and_the_run_is_partial(
    llm_server, tmp_path, document, bad, said
):
    failing = [Reply(**{**bad.__dict__, "match": FR1}) for _ in range(TRIES)]
    llm_server.script(
        *failing,
        rewritten("The operator shall approve each order within TBD minutes.", FR2),
    )
    done = suggest(llm_server, tmp_path, document, "--json")
    assert done.returncode == 3, done.stderr  # incomplete, not complete
    assert len(llm_server.texts_with(FR1)) == TRIES  # re-asked within the policy, then given up
    data = json.loads(done.stdout)
    s = data["suggestions"]["summary"]
    assert (s["failed"], s["accepted"], s["complete"]) == (1, 1, False)
    first = data["suggestions"]["items"][0]
    assert first["rewrite"] is None and not first["accepted"] and said in first["error"]
    assert "INCOMPLETE: 1 of 2 suggestions failed" in done.stderr


def test_garbage_once_then_a_good_answer_counts(llm_server, tmp_path, document):
    llm_server.script(
        Reply(content="not json at all", match=FR1),
        rewritten(FR1_KEPT, FR1),
    )
    done = suggest(llm_server, tmp_path, document, "--json", "--suggest-max", "1")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)["suggestions"]
    assert data["summary"]["not_asked"] == 1 and data["summary"]["asked"] == 1
    assert data["items"][0]["accepted"] and data["items"][0]["attempts"] == 2


def test_every_suggestion_failing_fails_the_run(llm_server, tmp_path, document):
    llm_server.script(*[Reply(content="", finish_reason="content_filter")] * (2 * TRIES))
    done = suggest(llm_server, tmp_path, document)
    assert done.returncode == 1, done.stderr
    assert "no suggestion" in done.stdout and "suggestions: 2 asked, 0 accepted" in done.stdout


def test_a_rewrite_that_keeps_few_of_the_words_is_refused():
    # the original carries no modal, number, negation, condition, actor or name to lose
    judged = guard_rewrite(
        _requirement("Some general requirements are transformed into software constraints."),
        "The new approach of this document.",
    )
    assert not judged.accepted and judged.problem == "unrelated"
    assert judged.reasons("zh") == ["改写保留的原文词语太少，不像是对原需求的改写"]


def test_the_prompts_example_given_back_is_re_asked(llm_server, tmp_path, document):
    llm_server.script(
        rewritten("The display shall refresh within TBD milliseconds.", FR1),
        rewritten(FR1_KEPT, FR1),
    )
    done = suggest(llm_server, tmp_path, document, "--json", "--suggest-max", "1")
    assert done.returncode == 0, done.stderr
    item = json.loads(done.stdout)["suggestions"]["items"][0]
    assert item["accepted"] and item["attempts"] == 2
    assert "prompt's example" in llm_server.texts_with(FR1)[-1]


@pytest.mark.parametrize(
    ("original", "rewrite", "words"),
    [
        (  # an alternative dropped: no modal, number, negation, condition, actor or name lost
            "The unit shall be turned on or off when the temperature passes the trigger value.",
            "The unit shall be turned on when the temperature passes the trigger value.",
            ["or", "off"],
        ),
        ("系统应提供友好的图书和期刊搜索界面。", "系统应提供图书搜索界面。", ["和", "期", "刊"]),
    ],
)
def test_a_rewrite_may_drop_only_the_flagged_words(original, rewrite, words):
    judged = guard_rewrite(_requirement(original), rewrite)
    assert not judged.accepted and judged.problem == "unflagged"
    assert judged.unflagged == words
    assert judged.reasons("en")[0].startswith("the rewrite removes words the checker did not flag")


def test_every_reason_a_rewrite_is_refused_is_said_in_both_languages():
    from reqstudio import messages
    from reqstudio.check.rewrite_guard import NOT_A_REWRITE

    for problem in NOT_A_REWRITE:
        en = messages.text(f"rewrite_guard.{problem}", "en", words="'x'")
        zh = messages.text(f"rewrite_guard.{problem}", "zh", words="“x”")
        assert en and zh and en != zh, problem
