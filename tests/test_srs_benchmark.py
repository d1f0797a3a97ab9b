"""`reqstudio srs experiment` as the quality benchmark: a real process talking HTTP to scripted
servers. The judge on a provider of its own, `--resume`, failed rows, `--limit` / `--sample`
/ `--split`, tokens and cost on the progress bar, and the summary beside the CSV."""

from __future__ import annotations

import csv
import json
import random
import re
from pathlib import Path

import pytest

from reqstudio.llm import Endpoint, ModelFactory
from reqstudio.modes.srs.experiment import (
    CaseSelectionError,
    ExperimentCase,
    find_cases,
    select_cases,
)
from reqstudio.settings import SettingsError, load_settings
from tests.cli_support import QUICK, TEST_KEY, run_reqstudio
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.test_srs_cli import EVALUATION
from tests.test_srs_support import EVALUATE, PARSE, doc_reply, parse_reply

ABLATION = "no-explore-clarify"  # ReqParse then DocGenerate: two calls, then the judge's


def make_cases(folder: Path, *names: str) -> Path:
    """One case per name; its input carries `CASE-<name>`, so a request tells its case."""
    for name in names:
        (folder / name).mkdir(parents=True)
        (folder / name / "input.md").write_text(f"CASE-{name}: an online shop.", encoding="utf-8")
        (folder / name / "reference.md").write_text(
            f"# Reference {name}\n\nThe system shall sell products.\n", encoding="utf-8"
        )
    return folder


def judged() -> Reply:
    return Reply(content=json.dumps(EVALUATION), match=EVALUATE)


def script_runs(server: ScriptedLLMServer, count: int) -> None:
    for _ in range(count):
        server.script(parse_reply(("FR-01", "Sell products.")), doc_reply(), judged())


def cases_asked(server: ScriptedLLMServer) -> list[str]:
    """The case of each ReqParse request, in order."""
    found = []
    for body in server.requests:
        text = json.dumps(body.get("messages", []), ensure_ascii=False)
        if PARSE in text:
            found += sorted(set(re.findall(r"CASE-[a-z]", text)))
    return found


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def experiment(server: ScriptedLLMServer, tmp_path: Path, *args: object, **env: str):
    return run_reqstudio(
        server.base_url,
        tmp_path,
        "srs",
        "experiment",
        "--ablations",
        ABLATION,
        "--concurrency",
        "1",
        *args,
        **{**QUICK, **env},
    )


# --- failed rows and --resume -----------------------------------------------------------


def test_a_failed_row_is_recorded_left_out_and_resume_runs_only_it_again(llm_server, tmp_path):
    cases = make_cases(tmp_path / "cases", "a", "b", "c")
    out = tmp_path / "runs.csv"
    llm_server.script(Reply(fault="401", match="CASE-b"))  # 401 is not retried
    script_runs(llm_server, 2)
    first = experiment(llm_server, tmp_path, "--cases", cases, "--out", out)
    assert first.returncode == 1, first.stderr  # a row failed
    assert cases_asked(llm_server) == ["CASE-a", "CASE-b", "CASE-c"]
    rows = {r["case"]: r for r in rows_of(out)}
    assert [rows[c]["status"] for c in "abc"] == ["ok", "failed", "ok"]
    assert "401" in rows["b"]["error"] and rows["b"]["Comprehensive_Score_Simple"] == ""
    # left out of the means and the summary, which says how many
    assert "| no-explore-clarify | 3 | 2 |" in first.stdout
    summary = (tmp_path / "runs_summary.md").read_text(encoding="utf-8")
    assert "3 runs; 1 failed, left out of the means and differences" in summary
    assert summary.strip() in first.stdout
    data = json.loads((tmp_path / "runs_summary.json").read_text(encoding="utf-8"))
    [ablation] = data["ablations"]
    assert (ablation["runs"], ablation["ok"], ablation["failed"]) == (3, 2, 1)
    simple = ablation["metrics"]["Comprehensive_Score_Simple"]
    assert simple["n"] == 2 and simple["mean"] == pytest.approx(4.5 / 7, abs=1e-4)
    assert ablation["metrics"]["coverage"]["mean"] == 0.5  # every metric in the JSON
    assert data["failed"] == 1 and data["model"] == data["judge_model"] == "scripted-model"
    assert data["command"].startswith("reqstudio srs experiment --cases ")

    llm_server.reset()
    script_runs(llm_server, 1)
    again = experiment(llm_server, tmp_path, "--cases", cases, "--out", out, "--resume")
    assert again.returncode == 0, again.stderr
    assert cases_asked(llm_server) == ["CASE-b"]  # a and c were not run again
    assert "--resume: 2 of 3 runs already finished" in again.stderr
    assert "running 1 (1 of them failed before)" in again.stderr
    resumed = {r["case"]: r for r in rows_of(out)}
    assert [resumed[c]["status"] for c in "abc"] == ["ok", "ok", "ok"]
    assert resumed["a"] == rows["a"] and resumed["c"] == rows["c"]  # kept as they were
    assert resumed["b"]["error"] == ""
    assert "3 runs" in (tmp_path / "runs_summary.md").read_text(encoding="utf-8")
    assert llm_server.pending == 0


def test_resume_keeps_rows_outside_this_run_and_writes_each_row_as_it_ends(llm_server, tmp_path):
    """Rows of cases not selected this time stay in the CSV (outside the summary); a resume
    with every run finished calls no model."""
    cases = make_cases(tmp_path / "cases", "a", "b")
    out = tmp_path / "runs.csv"
    script_runs(llm_server, 2)
    assert experiment(llm_server, tmp_path, "--cases", cases, "--out", out).returncode == 0
    llm_server.reset()
    done = experiment(
        llm_server, tmp_path, "--cases", cases, "--out", out, "--resume", "--limit", "1"
    )
    assert done.returncode == 0, done.stderr
    assert llm_server.requests == []
    assert sorted(r["case"] for r in rows_of(out)) == ["a", "b"]
    assert "1 cases x 1 ablations, 1 runs" in done.stdout
    assert not list(tmp_path.glob(".runs.csv.partial"))


# --- the judge on its own provider --------------------------------------------------------


def test_the_judge_can_live_at_another_provider(llm_server, tmp_path):
    cases = make_cases(tmp_path / "cases", "a")
    out = tmp_path / "runs.csv"
    llm_server.script(parse_reply(("FR-01", "Sell products.")), doc_reply())
    with ScriptedLLMServer(model="judge-model") as judge:
        judge.script(judged())
        done = experiment(
            llm_server,
            tmp_path,
            "--cases",
            cases,
            "--out",
            out,
            OPENAI_EVALUATION_BASE_URL=judge.base_url,
            OPENAI_EVALUATION_API_KEY="sk-judge-key",
            OPENAI_EVALUATION_MODEL="judge-model",
            AGENT_PRICES=json.dumps({"scripted-model": [1.0, 2.0], "judge-model": [10.0, 20.0]}),
        )
        assert done.returncode == 0, done.stderr
        judge_bodies, judge_keys = list(judge.requests), list(judge.authorizations)
    # the generator's calls went to the first server with its key, the judge's to the second
    generator_texts = [json.dumps(b["messages"]) for b in llm_server.requests]
    assert len(generator_texts) == 2 and not any(EVALUATE in t for t in generator_texts)
    assert set(llm_server.authorizations) == {f"Bearer {TEST_KEY}"}
    assert [EVALUATE in json.dumps(b["messages"]) for b in judge_bodies] == [True]
    assert judge_bodies[0]["model"] == "judge-model"
    assert judge_keys == ["Bearer sk-judge-key"]
    [row] = rows_of(out)
    assert (row["status"], row["model"], row["judge_model"]) == (
        "ok",
        "scripted-model",
        "judge-model",
    )
    assert int(row["judge_tokens"]) > 0 and int(row["tokens"]) > 0
    # cost: every model has a price; the judge's tokens at the judge's price
    assert float(row["cost"]) > int(row["judge_tokens"]) / 1000 * 10.0
    assert f"cost {float(row['cost']):.4f}" in done.stderr  # on the bar and the last line
    assert "generator: scripted-model; judge: judge-model" in done.stdout


def test_without_prices_the_bar_shows_tokens_and_the_cost_stays_blank(llm_server, tmp_path):
    cases = make_cases(tmp_path / "cases", "a")
    out = tmp_path / "runs.csv"
    script_runs(llm_server, 1)
    done = experiment(llm_server, tmp_path, "--cases", cases, "--out", out)
    assert done.returncode == 0, done.stderr
    [row] = rows_of(out)
    total = int(row["tokens"]) + int(row["judge_tokens"])
    assert row["cost"] == "" and f"tokens {total:,}" in done.stderr and "cost" not in done.stderr
    assert "SRS runs" in done.stderr


def test_tokens_a_provider_did_not_report_are_blank_not_zero(llm_server, tmp_path):
    """llama.cpp's server (the offline model) streams without usage: the row must not say
    the run took 0 tokens."""
    cases = make_cases(tmp_path / "cases", "a")
    out = tmp_path / "runs.csv"
    llm_server.script(
        parse_reply(("FR-01", "Sell products."), sends_usage=False),
        doc_reply(sends_usage=False),
        judged(),  # the judge reports its usage
    )
    done = experiment(llm_server, tmp_path, "--cases", cases, "--out", out)
    assert done.returncode == 0, done.stderr
    [row] = rows_of(out)
    assert row["tokens"] == "" and int(row["judge_tokens"]) > 0
    assert "(not reported in 1 run)" in done.stderr


def test_an_evaluation_too_large_for_the_judge_is_an_evaluation_failure(llm_server, tmp_path):
    """The SRS was generated: a judge that cannot take the request is `eval_failed`, with the
    reason, and the generation's figures stay in the row."""
    cases = make_cases(tmp_path / "cases", "a")
    (cases / "a" / "reference.md").write_text(
        "# Reference\n\n" + "The system shall sell products to customers. " * 200,
        encoding="utf-8",
    )
    out = tmp_path / "runs.csv"
    llm_server.script(parse_reply(("FR-01", "Sell products.")), doc_reply())
    done = experiment(
        llm_server, tmp_path, "--cases", cases, "--out", out, OPENAI_CONTEXT_TOKENS="1000"
    )
    assert done.returncode == 1
    [row] = rows_of(out)
    assert row["status"] == "eval_failed" and row["llm_calls"] == "2"
    assert row["error"].startswith("evaluation: The evaluation request would be about")
    assert not llm_server.pending and len(llm_server.requests) == 2  # the judge was not asked


def test_the_judge_endpoint_falls_back_to_the_main_one():
    main = Endpoint("http://generator.example/v1", "sk-main", "gen-model")
    same = ModelFactory(load_settings(), main)
    assert same.endpoint_for("evaluation") == main
    url_only = ModelFactory(
        load_settings(OPENAI_EVALUATION_BASE_URL="http://judge.example/v1/"), main
    )
    assert url_only.endpoint_for("evaluation") == Endpoint(
        "http://judge.example/v1", "sk-main", "gen-model"
    )
    key_only = ModelFactory(load_settings(OPENAI_EVALUATION_API_KEY="sk-judge"), main)
    assert key_only.endpoint_for("evaluation").base_url == "http://generator.example/v1"
    assert key_only.endpoint_for("ReqParse") == main  # only the judge moves
    model = url_only.for_role("evaluation")
    assert str(model.openai_api_base) == "http://judge.example/v1"
    assert str(url_only.for_role("ReqParse").openai_api_base) == "http://generator.example/v1"


def test_a_bad_judge_setting_is_one_line_and_hides_the_key():
    with pytest.raises(SettingsError, match=r"OPENAI_EVALUATION_BASE_URL.*http://"):
        load_settings(OPENAI_EVALUATION_BASE_URL="judge.example")
    key = load_settings(OPENAI_EVALUATION_API_KEY="sk-secret").openai_evaluation_api_key
    assert "sk-secret" not in repr(key)


# --- which cases: --limit, --sample, --split ------------------------------------------------


def test_limit_and_sample_pick_the_cases(llm_server, tmp_path):
    cases = make_cases(tmp_path / "cases", "d", "a", "c", "b")
    script_runs(llm_server, 2)
    done = experiment(
        llm_server, tmp_path, "--cases", cases, "--out", tmp_path / "l.csv", "--limit", "2"
    )
    assert done.returncode == 0, done.stderr
    assert [r["case"] for r in rows_of(tmp_path / "l.csv")] == ["a", "b"]  # first by name

    llm_server.reset()
    script_runs(llm_server, 2)
    done = experiment(
        llm_server, tmp_path, "--cases", cases, "--out", tmp_path / "s.csv",
        "--sample", "2", "--seed", "7",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = sorted(random.Random(7).sample(["a", "b", "c", "d"], 2))
    assert [r["case"] for r in rows_of(tmp_path / "s.csv")] == expected
    assert cases_asked(llm_server) == [f"CASE-{name}" for name in expected]
    assert "--sample 2 --seed 7" in done.stdout  # the command in the summary


def test_select_cases():
    cases = [ExperimentCase(n, Path(n), Path(n)) for n in ("c", "a", "d", "b")]
    names = lambda chosen: [c.name for c in chosen]  # noqa: E731
    assert names(select_cases(cases)) == ["a", "b", "c", "d"]
    assert names(select_cases(cases, limit=3)) == ["a", "b", "c"]
    assert names(select_cases(cases, limit=9)) == ["a", "b", "c", "d"]
    one = select_cases(cases, sample=2, seed=1)
    assert one == select_cases(cases, sample=2, seed=1) and len(one) == 2
    assert {tuple(names(select_cases(cases, sample=2, seed=s))) for s in range(20)} != {
        tuple(names(one))
    }  # another seed, other cases
    splits = {"dev": ["a", "b"], "held-out": ["c", "d"]}
    assert names(select_cases(cases, split="held-out", splits=splits)) == ["c", "d"]
    assert names(select_cases(cases, split="dev", splits=splits, limit=1)) == ["a"]
    with pytest.raises(CaseSelectionError, match=r"no split 'test'.*dev, held-out"):
        select_cases(cases, split="test", splits=splits)
    with pytest.raises(CaseSelectionError, match="--limit must be at least 1"):
        select_cases(cases, limit=0)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--split", "held-out"], "no split 'held-out' (known: none: no split.json)"),
        (["--limit", "0"], "--limit must be at least 1"),
        (["--limit", "1", "--sample", "1"], "not allowed with argument"),
    ],
)
def test_bad_selections_exit_2_before_any_call(llm_server, tmp_path, extra, message):
    cases = make_cases(tmp_path / "cases", "a")
    done = experiment(llm_server, tmp_path, "--cases", cases, *extra)
    assert done.returncode == 2 and message in done.stderr
    assert llm_server.requests == []


def test_split_runs_only_its_cases(llm_server, tmp_path):
    cases = make_cases(tmp_path / "cases", "a", "b", "c")
    (cases / "split.json").write_text(
        json.dumps({"splits": {"dev": ["a"], "held-out": ["b", "c"]}}), encoding="utf-8"
    )
    assert [c.name for c in find_cases(cases)] == ["a", "b", "c"]
    script_runs(llm_server, 2)
    done = experiment(
        llm_server, tmp_path, "--cases", cases, "--out", tmp_path / "h.csv", "--split", "held-out"
    )
    assert done.returncode == 0, done.stderr
    assert [r["case"] for r in rows_of(tmp_path / "h.csv")] == ["b", "c"]


# --- the summary of a fixed CSV -----------------------------------------------------------


def test_the_summary_json_and_table_of_a_fixed_csv():
    from reqstudio.modes.srs.experiment_summary import (
        SUMMARY_METRICS,
        read_rows,
        summarize,
        summary_json,
        summary_table,
    )
    from tests.test_check_srs import FIXED_CSV

    rows = read_rows(FIXED_CSV)
    summaries = summarize(rows, ["no-clarify", "none"])
    data = summary_json(summaries, model="m", date="d", command="c")
    assert (data["model"], data["baseline"]) == ("m", "no-clarify")
    baseline, none = data["ablations"]
    # seconds: the failed run (5 s) is left out; paired with the baseline on a, b, c only
    seconds = none["metrics"]["seconds"]
    assert (seconds["n"], seconds["mean"]) == (3, pytest.approx(30.0))
    assert seconds["pairs"] == 3 and seconds["difference"] == pytest.approx(19.0)
    assert seconds["low"] <= 19.0 <= seconds["high"]
    assert none["failed"] == 1 and baseline["metrics"]["seconds"]["difference"] is None
    weighted = none["metrics"]["Comprehensive_Score_Weighted"]
    assert (weighted["difference"], weighted["low"], weighted["high"]) == pytest.approx(
        (0.10, 0.10, 0.10)
    )
    assert json.loads(json.dumps(data)) == data  # plain JSON
    table = summary_table(summaries, metrics=SUMMARY_METRICS)
    assert "| none | 4 | 3 | 1 | seconds | 30.000 ± 1.000 | +19.000 [" in table
    assert "| tokens | - | - | - |" in table  # no tokens column in this CSV: nothing invented
    assert "coverage" not in table


def test_the_summary_names_the_judges_seven_metrics():
    from reqstudio.modes.srs.evaluation import METRICS
    from reqstudio.modes.srs.experiment_summary import JUDGE_METRICS

    assert JUDGE_METRICS == METRICS


def test_the_bar_counts_unreported_tokens_only_for_runs_that_called_a_model():
    from reqstudio.modes.srs.experiment_cli import RunningTotals

    totals = RunningTotals()
    totals.add({"tokens": "", "llm_calls": "", "judge_tokens": 0, "cost": ""})  # unreadable case
    assert totals.describe() == "tokens 0"
    totals.add({"tokens": "", "llm_calls": 3, "judge_tokens": 120, "cost": ""})  # llama.cpp
    totals.add({"tokens": 900, "llm_calls": 3, "judge_tokens": "", "cost": ""})  # judge silent
    assert totals.describe() == "tokens 1,020 (not reported in 2 runs)"
