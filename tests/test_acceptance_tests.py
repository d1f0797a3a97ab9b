"""`reqstudio tests`: the acceptance-test writer (a declared model role answering
`AcceptanceScenarios`) over real HTTP against the scripted provider, its misbehaving answers
(garbage JSON, a scenario for a requirement that does not exist, a requirement left out,
`length` and `content_filter` finishes: re-asked within the role's three tries, then a clear
failure; a failed batch makes the run partial, exit 3), and what it writes: Gherkin read back,
CSV columns, ReqIF valid against the OMG schema with `verifies` SPEC-RELATIONs, read back by
`reqstudio import`. The project side (matrix, suspect marks, confirm) is in
tests/test_acceptance_project.py."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from lxml import etree

from reqstudio import model_roles
from reqstudio.answers import answer_entry
from reqstudio.workspace.acceptance import AcceptanceScenarios
from reqstudio.workspace.acceptance_out import CSV_COLUMNS
from tests.cli_support import QUICK, run_reqstudio
from tests.reqif_support import schema_errors
from tests.scripted_server import Reply

NS = {"r": "http://www.omg.org/spec/ReqIF/20110401/reqif.xsd"}
SRS = """# Shop SRS

## 3 Functional requirements

- FR-01 The system shall send a receipt within 2 s of a payment.
- FR-02 The operator shall approve each refund.

## 4 Non-functional requirements

- NFR-01 The system shall answer a search within 1 s for 95 % of queries.
"""


def scenario(rid: str, title: str, given="a paying customer", when="the payment succeeds",
             then="a receipt arrives within 2 s") -> dict[str, object]:  # fmt: skip
    return {"requirement_id": rid, "title": title, "given": given, "when": when, "then": then}


def answer(*scenarios: dict[str, object]) -> str:
    return "```json\n" + json.dumps({"scenarios": list(scenarios)}, ensure_ascii=False) + "\n```"


EVERY = answer(
    scenario("FR-01", "Receipt after payment", then=["a receipt is sent", "within 2 s"]),
    scenario("FR-01", "No receipt for a failed payment", when="the payment fails",
             then="no receipt is sent"),
    scenario("FR-02", "Refund waits for approval", given="a refund request",
             when="the operator approves it", then="the refund is paid"),
    scenario("NFR-01", "Search answers quickly", given="10 000 products",
             when="a customer searches", then="95 % of answers arrive within 1 s"),
)  # fmt: skip


def generate(llm_server, tmp_path: Path, *args: object):
    (tmp_path / "srs.md").write_text(SRS, encoding="utf-8")
    return run_reqstudio(
        llm_server.base_url, tmp_path, "tests", "generate", "srs.md", *args, LANG="C", **QUICK
    )


def read_feature(text: str) -> list[dict[str, object]]:
    """A simple Gherkin reader: the feature's scenarios with their tags and steps."""
    scenarios: list[dict[str, object]] = []
    tags: list[str] = []
    keyword = ""
    for line in (raw.strip() for raw in text.splitlines()):
        if line.startswith("@"):
            tags = line.split()
        elif line.startswith("Scenario:"):
            scenarios.append({"title": line.removeprefix("Scenario:").strip(), "tags": tags,
                              "Given": [], "When": [], "Then": []})  # fmt: skip
        elif scenarios and line.split(" ", 1)[0] in ("Given", "When", "Then", "And"):
            word, rest = line.split(" ", 1)
            keyword = keyword if word == "And" else word
            scenarios[-1][keyword].append(rest)
    return scenarios


def test_the_writer_is_a_declared_role_with_a_registered_answer_model():
    role = model_roles.role("AcceptanceWriter")
    assert role.answers == ("AcceptanceScenarios",) and role.policy.attempts == 3
    assert role.temperatures[0].variable == "OPENAI_TEMP_ACCEPTANCE"
    entry = answer_entry(AcceptanceScenarios)
    assert entry.users == ("AcceptanceWriter",) and entry.required == ("scenarios",)
    required = AcceptanceScenarios.model_json_schema()["$defs"]["Scenario"]["required"]
    assert set(required) == {"requirement_id", "title", "given", "when", "then"}


def test_feature_files_per_requirement_read_back(llm_server, tmp_path):
    llm_server.script(Reply(content=EVERY))
    done = generate(llm_server, tmp_path, "--out", "out")
    assert done.returncode == 0, done.stderr
    assert "4 acceptance tests for 3 of 3 requirements" in done.stderr
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == ["FR-01.feature", "FR-02.feature", "NFR-01.feature"]
    text = (tmp_path / "out" / "FR-01.feature").read_text(encoding="utf-8")
    assert text.startswith("Feature: FR-01 The system shall send a receipt within 2 s")
    first, second = read_feature(text)
    assert first["title"] == "Receipt after payment"
    assert first["tags"] == ["@AT-FR-01-1", "@verifies:FR-01"]
    assert first["Given"] == ["a paying customer"] and first["When"] == ["the payment succeeds"]
    assert first["Then"] == ["a receipt is sent", "within 2 s"]  # a list of conditions: And
    assert second["tags"][0] == "@AT-FR-01-2" and second["Then"] == ["no receipt is sent"]
    # one call, asking for the JSON with every requirement's id and text
    (request,) = llm_server.requests
    prompt = request["messages"][0]["content"]
    assert '{"scenarios": [{"requirement_id": "FR-01"' in prompt
    assert "FR-01" in prompt and "NFR-01" in prompt and "95 % of queries" in prompt


def test_feature_files_per_section(llm_server, tmp_path):
    llm_server.script(Reply(content=EVERY))
    done = generate(llm_server, tmp_path, "--out", "out", "--per", "section")
    assert done.returncode == 0, done.stderr
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == ["3_Functional_requirements.feature", "4_Non-functional_requirements.feature"]
    text = (tmp_path / "out" / "3_Functional_requirements.feature").read_text(encoding="utf-8")
    assert [s["tags"][1] for s in read_feature(text)] == ["@verifies:FR-01"] * 2 + [
        "@verifies:FR-02"
    ]


def test_csv_has_its_columns_and_one_row_per_test(llm_server, tmp_path):
    llm_server.script(
        Reply(content=answer(scenario("FR-01", "收据", given="已付款的顾客", when="付款成功",
                                      then="2 秒内收到收据"),
                             scenario("FR-02", "Refund"), scenario("NFR-01", "Search")))
    )  # fmt: skip
    done = generate(llm_server, tmp_path, "--format", "csv", "--out", "out")
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "out" / "acceptance-tests.csv", encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [(r["test_id"], r["requirement_id"]) for r in rows] == [
        ("AT-FR-01-1", "FR-01"), ("AT-FR-02-1", "FR-02"), ("AT-NFR-01-1", "NFR-01")
    ]  # fmt: skip
    assert rows[0]["title"] == "收据" and rows[0]["then"] == "2 秒内收到收据"
    assert {r["suspect"] for r in rows} == {"no"}


def test_reqif_holds_the_tests_and_verifies_relations_valid_and_read_back(llm_server, tmp_path):
    llm_server.script(Reply(content=EVERY))
    done = generate(llm_server, tmp_path, "--format", "reqif", "--out", "out")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out" / "acceptance-tests.reqif"
    assert schema_errors(out) == []
    tree = etree.parse(str(out))
    types = {
        t.get("IDENTIFIER"): t.get("LONG-NAME") for t in tree.iterfind(".//r:SPEC-TYPES/*", NS)
    }
    assert "Test Case" in types.values()
    relations = tree.findall(".//r:SPEC-RELATION", NS)
    verifies = [r for r in relations if types[r.find("r:TYPE/*", NS).text] == "verifies"]
    assert len(verifies) == 4
    # read back: the tests are items of kind test, each linked to the requirement it verifies
    back = run_reqstudio(llm_server.base_url, tmp_path, "import", out, "--json")
    assert back.returncode == 0, back.stderr
    items = json.loads(back.stdout)["items"]
    tests = [i for i in items if i["kind"] == "test"]
    assert [t["id"] for t in tests] == ["AT-FR-01-1", "AT-FR-01-2", "AT-FR-02-1", "AT-NFR-01-1"]
    assert [link["target_id"] for t in tests for link in t["links"]] == [
        "FR-01", "FR-01", "FR-02", "NFR-01"
    ]  # fmt: skip
    assert {link["type"] for t in tests for link in t["links"]} == {"verifies"}
    assert tests[0]["text"].splitlines()[0] == "Given a paying customer"


def test_garbage_json_is_asked_again(llm_server, tmp_path):
    llm_server.script(
        Reply(content="Sure! Here are your tests: {scenarios: [oops"), Reply(content=EVERY)
    )
    done = generate(llm_server, tmp_path, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert len(llm_server.requests) == 2
    assert "could not be used" in llm_server.requests[1]["messages"][-1]["content"]
    data = json.loads(done.stdout)
    assert data["complete"] is True and len(data["tests"]) == 4


def test_an_unknown_requirement_id_is_asked_again_then_fails_clearly(llm_server, tmp_path):
    made_up = answer(scenario("FR-01", "a"), scenario("FR-02", "b"), scenario("NFR-01", "c"),
                     scenario("FR-99", "invented"))  # fmt: skip
    llm_server.script(Reply(content=made_up), Reply(content=EVERY))
    done = generate(llm_server, tmp_path, "--format", "json")
    assert done.returncode == 0, done.stderr
    reask = llm_server.requests[1]["messages"][-1]["content"]
    assert "'FR-99'" in reask and "not one of the requirements given" in reask
    assert "FR-99" not in done.stdout

    llm_server.reset()
    llm_server.script(*[Reply(content=made_up)] * 3)
    done = generate(llm_server, tmp_path, "--format", "json", "--out", "failed")
    assert done.returncode == 1
    assert len(llm_server.requests) == 3  # the role's three tries, no more
    assert "no tests for FR-01, FR-02, NFR-01" in done.stderr
    assert "could not be used after 3 attempts" in done.stderr and "'FR-99'" in done.stderr
    assert "no acceptance test was written" in done.stderr
    assert list((tmp_path / "failed").iterdir()) == []  # nothing written, nothing partial


def test_a_requirement_left_without_a_scenario_is_asked_for(llm_server, tmp_path):
    llm_server.script(
        Reply(content=answer(scenario("FR-01", "a"), scenario("FR-02", "b"))), Reply(content=EVERY)
    )
    done = generate(llm_server, tmp_path, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert (
        "no scenario for the requirement(s) NFR-01"
        in llm_server.requests[1]["messages"][-1]["content"]
    )


def test_length_and_content_filter_finishes_are_not_answers(llm_server, tmp_path):
    llm_server.script(
        Reply(content=EVERY[:60], finish_reason="length"),
        Reply(content=EVERY, finish_reason="content_filter"),
        Reply(content=EVERY),
    )
    done = generate(llm_server, tmp_path, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert len(llm_server.requests) == 3
    assert len(json.loads(done.stdout)["tests"]) == 4

    llm_server.reset()
    llm_server.script(*[Reply(content=EVERY, finish_reason="content_filter")] * 3)
    done = generate(llm_server, tmp_path, "--format", "json")
    assert done.returncode == 1 and done.stdout == ""
    assert "content_filter" in done.stderr and len(llm_server.requests) == 3


def test_a_failed_batch_makes_the_run_partial(llm_server, tmp_path):
    lines = "\n".join(f"- FR-{n:02d} The system shall do thing {n}." for n in range(1, 10))
    (tmp_path / "big.md").write_text(f"# Big\n\n## Features\n\n{lines}\n", encoding="utf-8")
    first_eight = answer(*(scenario(f"FR-{n:02d}", f"thing {n}") for n in range(1, 9)))
    llm_server.script(
        Reply(content=first_eight, match="do thing 1."),
        *[Reply(content="no JSON here", match="do thing 9.")] * 3,
    )
    done = run_reqstudio(llm_server.base_url, tmp_path, "tests", "generate", "big.md",
                         "--format", "json", "--out", "out", **QUICK)  # fmt: skip
    assert done.returncode == 3, done.stderr
    data = json.loads((tmp_path / "out" / "acceptance-tests.json").read_text(encoding="utf-8"))
    assert data["complete"] is False and data["requirements"] == 9
    assert [f["requirements"] for f in data["failed"]] == [["FR-09"]]
    assert len(data["tests"]) == 8 and all(t["verifies"] != "FR-09" for t in data["tests"])
    assert "no tests for FR-09" in done.stderr
    assert "8 acceptance tests for 8 of 9 requirements" in done.stderr


def test_bad_input_is_refused_before_any_model_call(llm_server, tmp_path):
    done = generate(llm_server, tmp_path, "--requirement", "FR-77")
    assert done.returncode == 2 and "no requirement FR-77" in done.stderr
    done = run_reqstudio(llm_server.base_url, tmp_path, "tests", "generate")
    assert done.returncode == 2 and "give a FILE or --project" in done.stderr
    assert llm_server.requests == []


def test_chinese_prompt_for_chinese_scenarios(llm_server, tmp_path):
    llm_server.script(Reply(content=EVERY))
    done = generate(llm_server, tmp_path, "--lang", "zh", "--requirement", "FR-02",
                    "--format", "json")  # fmt: skip
    # the answer names requirements it was not asked about: re-asked, then refused
    assert done.returncode == 1
    prompt = llm_server.requests[0]["messages"][0]["content"]
    assert "验收场景" in prompt and "FR-02" in prompt and "FR-01" not in prompt
