"""The SRS evaluation (seed 000): the four ways of reading the answer, the error object, the
composite scores, and a call through the scripted server."""

from __future__ import annotations

import json

import pytest

from reqstudio.llm import Endpoint, ModelFactory
from reqstudio.modes.srs.evaluation import (
    METRIC_WEIGHTS,
    NOT_JSON_ERROR,
    OUT_OF_RANGE_ERROR,
    calculate_comprehensive_score,
    evaluate_srs,
    parse_evaluation_output,
)
from reqstudio.settings import load_settings
from tests.scripted_server import Reply
from tests.test_srs_support import EVALUATE

METRICS = {
    "coverage": 0.8,
    "completeness": 0.6,
    "consistency": 0.9,
    "testability": 0.5,
    "clarity": 0.7,
    "traceability": 0.4,
    "scope_discipline": 1.0,
    "by_category": {"functional": 0.7, "non_functional": 0.5, "constraints": 0.6},
}
ANSWER = {"metrics": METRICS}
# simple: (0.8+0.6+0.9+0.5+0.7+0.4+1.0)/7 = 4.9/7 = 0.7
# weighted: 0.2*(0.8+0.6+0.5) + 0.15*0.4 + 0.1*(0.9+0.7) + 0.05*1.0 = 0.38+0.06+0.16+0.05 = 0.65
SIMPLE, WEIGHTED = 0.7, 0.65


@pytest.mark.parametrize(
    ("content", "method"),
    [
        (json.dumps(ANSWER), "direct"),
        (
            "Here is the score:\n```json\n" + json.dumps(ANSWER, indent=2) + "\n```\nDone.",
            "code_block",
        ),
        ("Scores follow. " + json.dumps(ANSWER) + " That is all.", "brace_span"),
        (
            'Draft: {"note": "first try"} and final: ' + json.dumps(ANSWER) + " (end)",
            "candidate_scan",
        ),
    ],
)
def test_each_of_the_four_reading_methods(content, method):
    result = parse_evaluation_output(content)
    assert result["parse_method"] == method
    assert result["metrics"] == METRICS


def test_earlier_method_wins_when_several_would_work():
    result = parse_evaluation_output("```json\n" + json.dumps(ANSWER) + "\n```")
    assert result["parse_method"] == "code_block"


def test_unreadable_answer_gives_the_seeds_error_object():
    content = "I think the document is quite good overall. " * 30
    result = parse_evaluation_output(content)
    assert result == {
        "error": NOT_JSON_ERROR,
        "raw_output": content.strip()[:500],
        "raw_output_length": len(content.strip()),
        "parse_method": None,
    }
    assert result["error"] == "模型输出的不是有效JSON"


def test_composites_arithmetic():
    scores = calculate_comprehensive_score(ANSWER)
    assert scores == {
        "Comprehensive_Score_Simple": SIMPLE,
        "Comprehensive_Score_Weighted": WEIGHTED,
    }
    assert sum(METRIC_WEIGHTS.values()) == pytest.approx(1.0)


def test_composites_renormalise_over_the_metrics_present():
    partial = {"metrics": {"coverage": 1.0, "scope_discipline": 0.0, "clarity": "n/a"}}
    scores = calculate_comprehensive_score(partial)
    assert scores["Comprehensive_Score_Simple"] == 0.5
    assert scores["Comprehensive_Score_Weighted"] == round(0.2 / 0.25, 4)
    assert calculate_comprehensive_score({"metrics": {}}) is None
    assert calculate_comprehensive_score({"note": 1}) is None


async def test_evaluate_srs_through_the_model(llm_server, factory):
    llm_server.script(Reply(content="```json\n" + json.dumps(ANSWER) + "\n```", match=EVALUATE))
    result = await evaluate_srs("# Reference\nFR-01 buy.", "# Candidate\nFR-01 buy.", factory)
    assert result["metrics"] == METRICS
    assert result["Comprehensive_Score_Simple"] == SIMPLE
    assert result["Comprehensive_Score_Weighted"] == WEIGHTED
    assert result["parse_method"] == "code_block"
    (request,) = llm_server.requests
    assert request["temperature"] == 0.2
    prompt = request["messages"][0]["content"]
    assert request["messages"][0]["role"] == "user"
    assert "[Reference Requirements]\n# Reference\nFR-01 buy." in prompt
    assert "[User Requirements]\n# Candidate\nFR-01 buy." in prompt
    assert '"metrics" : {\n  "coverage": <float>,' in prompt  # the seed's braces, unescaped


async def test_evaluation_model_setting_is_used(llm_server, tmp_path):
    settings = load_settings(
        OPENAI_BASE_URL=llm_server.base_url,
        OPENAI_API_KEY="sk-test",
        OPENAI_MODEL="generator-model",
        OPENAI_EVALUATION_MODEL="judge-model",
        REQSTUDIO_DATA_DIR=str(tmp_path),
    )
    factory = ModelFactory(settings, Endpoint(llm_server.base_url, "sk-test", "generator-model"))
    llm_server.script(*[Reply(content="no json", match=EVALUATE)] * 3)
    result = await evaluate_srs("ref", "cand", factory)
    assert result["error"] == NOT_JSON_ERROR and result["raw_output"] == "no json"
    # prose is asked again within the answer policy (three tries), every try to the judge
    assert [r["model"] for r in llm_server.requests] == ["judge-model"] * 3
    assert result["model"] == "judge-model"


OUT_OF_RANGE = {"metrics": {**METRICS, "coverage": 8, "by_category": {**METRICS["by_category"],
                                                                        "functional": 2}}}  # fmt: skip


async def test_scores_outside_0_1_are_asked_again_not_shown(llm_server, factory):
    llm_server.script(
        Reply(content=json.dumps(OUT_OF_RANGE), match=EVALUATE),
        Reply(content=json.dumps(ANSWER), match=EVALUATE),
    )
    result = await evaluate_srs("ref", "cand", factory)
    assert result["metrics"] == METRICS
    assert result["Comprehensive_Score_Weighted"] == WEIGHTED
    assert len(llm_server.requests) == 2


async def test_scores_that_stay_outside_0_1_give_the_seeds_error_object(llm_server, factory):
    llm_server.script(*[Reply(content=json.dumps(OUT_OF_RANGE), match=EVALUATE)] * 3)
    result = await evaluate_srs("ref", "cand", factory)
    assert result["error"] == OUT_OF_RANGE_ERROR
    assert "coverage=8" in result["problem"] and "by_category.functional=2" in result["problem"]
    assert result["raw_output"].startswith('{"metrics"')
    assert "metrics" not in result and "Comprehensive_Score_Weighted" not in result
    assert len(llm_server.requests) == 3


def test_experiment_means_are_plain_numbers():
    from reqstudio.modes.srs.experiment import MEAN_COLUMNS, means_table

    row = {name: 0.5 for name in MEAN_COLUMNS} | {"ablation": "none", "status": "ok"}
    tokens = next(name for name in MEAN_COLUMNS if "token" in name)
    table = means_table([row | {tokens: 35910}, row | {tokens: 35912}], ["none"])
    assert "35911" in table and "e+" not in table
    assert "| 0.5 |" in table


async def test_an_evaluation_that_would_not_fit_the_context_is_refused_in_the_users_words(
    llm_server, factory
):
    from reqstudio.errors import describe_failure
    from reqstudio.modes.srs.documents import ReferenceDocumentError

    small = ModelFactory(
        factory.settings.model_copy(update={"context_tokens": 2000}), factory.endpoint
    )
    reference = "# 参考 SRS\n" + "系统应当在两秒内返回搜索结果。" * 200
    with pytest.raises(ReferenceDocumentError) as refused:
        await evaluate_srs(reference, "# SRS\n", small)
    assert refused.value.code == "too_large_for_context"
    assert llm_server.requests == []
    # the UI and `srs experiment` show it through describe_failure, in the user's language
    assert "超过评估模型的上下文 2000 tokens" in describe_failure(refused.value, "zh")
    assert "context of 2000 tokens" in describe_failure(refused.value, "en")
    # one that fits is sent
    llm_server.script(Reply(content=json.dumps(ANSWER), match=EVALUATE))
    assert (await evaluate_srs("# 参考 SRS\n短。", "# SRS\n", small))["metrics"] == METRICS
