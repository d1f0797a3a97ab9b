"""SRS mode's pause after each ReqClarify round: the user's decision (accept,
edit, remove, add, score override) shapes the next round, is checked as a whole, is recorded
in the interaction log, and a pause saved in SQLite is resumed by another process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from reqstudio.modes.srs import decisions
from reqstudio.modes.srs.engine import SrsRequest, paused_run, pending_resume
from reqstudio.modes.srs.events import DecisionApplied, NodeFinished, Paused
from tests import test_srs_support as srs

ROOT = Path(__file__).resolve().parent.parent

REQUEST = SrsRequest(
    user_input="Customers buy products online.",
    reference_srs="# Reference\nCustomers buy products online.",
    max_iterations=3,  # two ReqExplore/ReqClarify rounds
    pause_after_round=True,
)


def first_round() -> list:
    return [
        srs.parse_reply(("FR-01", "Place an order."), ("FR-02", "Cancel an order.")),
        srs.explore_reply(
            ("FR-01", "Place an order."),
            ("FR-02", "Cancel an order."),
            ("FR-03", "Rate a product."),
        ),
        srs.clarify_reply(FR_01=1, FR_02=0, FR_03=-1),
    ]


def listed(prompt: str, heading: str) -> dict[str, str]:
    """The JSON list a prompt shows under `heading`, as {id: content}."""
    text = srs.section(prompt, heading, "]").split("[", 1)[1]
    return {it["id"]: it["content"] for it in json.loads("[" + text + "]")}


async def test_the_run_pauses_after_clarify_with_the_scored_list(llm_server, factory, tmp_path):
    llm_server.script(*first_round())
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "srs.sqlite")) as saver:
        events = await srs.collect(REQUEST, factory, checkpointer=saver, thread_id="p1")
        paused = events[-1]
        assert isinstance(paused, Paused), paused
        assert srs.node_sequence(events) == ["ReqParse", "ReqExplore", "ReqClarify"]
        assert paused.round == 1 and not paused.last_round
        rows = {r.id: (r.score, r.status) for r in paused.requirements}
        assert rows == {"FR-01": (1, "frozen"), "FR-02": (0, "open"), "FR-03": (-1, "open")}
        assert len(llm_server.requests) == 3, "nothing after ReqClarify ran"
        # the pause is saved: the thread is unfinished, and says where it waits
        assert await pending_resume(saver, "p1") == "ReqClarify"
        assert (await paused_run(saver, "p1")).requirements == paused.requirements


async def test_the_decision_shapes_the_next_round_and_is_logged(llm_server, factory, tmp_path):
    llm_server.script(
        *first_round(),
        srs.explore_reply(("FR-02", "Cancel an order before it ships.")),
        srs.clarify_reply(FR_02=1, FR_04=0),
        srs.doc_reply(),
    )
    logs = tmp_path / "logs"
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "srs.sqlite")) as saver:

        async def resume(decision: decisions.HumanDecision) -> list:
            return await srs.collect(
                REQUEST,
                factory,
                checkpointer=saver,
                thread_id="p2",
                resume=True,
                log_dir=logs,
                decision=decision,
            )

        first = await srs.collect(
            REQUEST, factory, checkpointer=saver, thread_id="p2", log_dir=logs
        )
        assert isinstance(first[-1], Paused)
        decision = decisions.HumanDecision(
            actions=[
                decisions.EditRequirement(id="FR-02", content="Cancel an order within 24 hours."),
                decisions.RemoveRequirement(id="FR-03"),
                decisions.AddRequirement(content="Pay by card."),
                decisions.OverrideScore(id="FR-01", score=-2),  # the user disagrees with ReqClarify
            ],
            text="(typed)",
        )
        second = await resume(decision)
        applied = next(e for e in second if isinstance(e, DecisionApplied))
        assert applied.changes["added"] == ["FR-04"]
        assert applied.changes["removed"] == ["FR-03"] and applied.changes["scores"] == {
            "FR-01": -2
        }
        paused = second[-1]
        assert isinstance(paused, Paused) and paused.round == 2 and paused.last_round
        accepted = await resume(decisions.HumanDecision())
    result = srs.finished(accepted)
    # Round 2's ReqExplore worked on the user's list: the edit, the new item, not FR-03, and
    # FR-01 (-2 by the user) among the removed, no longer frozen.
    explore = srs.prompts_for(llm_server, srs.EXPLORE)[1]
    assert listed(explore, "Unfrozen & Non-removed List (JSON):") == {
        "FR-02": "Cancel an order within 24 hours.",
        "FR-04": "Pay by card.",
    }
    assert set(listed(explore, "Removed List (MUST NOT be mentioned/reintroduced)]:")) == {
        "FR-01",
        "FR-03",
    }
    assert listed(explore, "[(Read-only) Frozen List]:") == {}
    clarify = srs.prompts_for(llm_server, srs.CLARIFY)[1]
    assert set(listed(clarify, "Requirements to Score (unfrozen) List:")) == {"FR-02", "FR-04"}
    assert [r.id for r in result.requirements] == ["FR-02", "FR-04"]
    assert set(result.removed_ids) == {"FR-01", "FR-03"}
    assert "Pay by card." in srs.prompts_for(llm_server, srs.DOC)[0]
    # The log holds both decisions, as agent "User", between the rounds.
    agents = [entry["agent"] for entry in result.logs]
    assert agents == [
        "ReqParse", "ReqExplore", "ReqClarify", "User", "ReqExplore", "ReqClarify", "User",
        "DocGenerate",
    ]  # fmt: skip
    user = result.logs[3]
    assert user["iteration"] == 1 and user["raw_output"] == "(typed)"
    actions = user["parsed_output"]["decision"]["actions"]
    assert {a["action"] for a in actions} == {"edit", "remove", "add", "score"}
    assert result.logs[6]["parsed_output"]["applied"]["accepted_as_is"] is True
    # The traceability matrix names the user as the origin of what the user added or edited.
    origins = {row.id: row.origin for row in result.traceability}
    assert origins["FR-04"] == "added by the user after round 1"
    assert origins["FR-02"].endswith("; edited by the user after round 1")


async def test_an_unknown_id_refuses_the_whole_decision(llm_server, factory, tmp_path):
    llm_server.script(*first_round())
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "srs.sqlite")) as saver:
        await srs.collect(REQUEST, factory, checkpointer=saver, thread_id="p3")
        decision = decisions.HumanDecision(
            actions=[
                decisions.RemoveRequirement(id="FR-02"),
                decisions.EditRequirement(id="FR-09", content="x"),
            ]
        )
        with pytest.raises(decisions.DecisionError) as refused:
            await srs.collect(
                REQUEST, factory, checkpointer=saver, thread_id="p3", resume=True, decision=decision
            )
        assert str(refused.value) == "not in the requirement list: FR-09; nothing was applied"
        assert "\n" not in refused.value.message("zh")
        # nothing applied: the same pause, FR-02 still there
        again = await paused_run(saver, "p3")
        assert "FR-02" in [r.id for r in again.requirements]
    assert len(llm_server.requests) == 3


async def test_a_score_override_brings_back_an_item_the_round_removed(
    llm_server, factory, tmp_path
):
    llm_server.script(
        srs.parse_reply(("FR-01", "Place an order."), ("FR-02", "Cancel an order.")),
        srs.explore_reply(("FR-01", "Place an order."), ("FR-02", "Cancel an order.")),
        srs.clarify_reply(FR_01=0, FR_02=-2),
        srs.doc_reply(),
    )
    request = REQUEST.model_copy(update={"max_iterations": 2})
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "srs.sqlite")) as saver:
        paused = (await srs.collect(request, factory, checkpointer=saver, thread_id="p4"))[-1]
        assert {r.id: r.status for r in paused.requirements} == {
            "FR-01": "open",
            "FR-02": "removed",
        }
        events = await srs.collect(
            request,
            factory,
            checkpointer=saver,
            thread_id="p4",
            resume=True,
            decision=decisions.parse_commands("score fr-02 2"),
        )
    result = srs.finished(events)
    assert [r.id for r in result.requirements] == ["FR-01", "FR-02"]
    assert result.frozen_ids == ["FR-02"] and result.removed_ids == []


def test_the_command_language():
    parse = decisions.parse_commands
    decision = parse(
        "edit FR-02 Cancel within 24 h\n\nremove FR-03\nadd Pay by card.\n"
        "add NFR-05 Pages load in 2 s.\nscore FR-01 +2\naccept\n删除 FR-04\n"
    )
    assert [a.model_dump() for a in decision.actions] == [
        {"action": "edit", "id": "FR-02", "content": "Cancel within 24 h"},
        {"action": "remove", "id": "FR-03"},
        {"action": "add", "content": "Pay by card.", "id": ""},
        {"action": "add", "content": "Pages load in 2 s.", "id": "NFR-05"},
        {"action": "score", "id": "FR-01", "score": 2},
        {"action": "remove", "id": "FR-04"},
    ]
    assert parse("").accepted_as_is and parse("accept\n").accepted_as_is
    for bad in ("score FR-01 5", "edit FR-01", "frobnicate", "remove FR-01 and more"):
        with pytest.raises(decisions.DecisionError, match="is not a command"):
            parse(bad)


RESUME_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from reqstudio.modes.srs.decisions import parse_commands
    from reqstudio.modes.srs.engine import SrsRequest, run_srs
    from reqstudio.llm import Endpoint, ModelFactory
    from reqstudio.settings import load_settings

    base_url, db, logs = sys.argv[1:4]

    async def main():
        settings = load_settings(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-test",
                                 OPENAI_MODEL="scripted-model", OPENAI_TIMEOUT=10)
        factory = ModelFactory(settings, Endpoint(base_url, "sk-test", "scripted-model"))
        async with AsyncSqliteSaver.from_conn_string(db) as saver:
            events = [e async for e in run_srs(
                SrsRequest(user_input="(resumed)"), factory, checkpointer=saver,
                thread_id="restart", resume=True, log_dir=__import__("pathlib").Path(logs),
                decision=parse_commands(sys.stdin.read()))]
        print(json.dumps([e.model_dump(mode="json") for e in events]))

    asyncio.run(main())
    """
)


async def test_a_pause_is_resumed_by_another_process(llm_server, factory, tmp_path):
    request = REQUEST.model_copy(update={"max_iterations": 2})
    llm_server.script(*first_round())
    db, logs = tmp_path / "srs.sqlite", tmp_path / "logs"
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        paused = (
            await srs.collect(
                request, factory, checkpointer=saver, thread_id="restart", log_dir=logs
            )
        )[-1]
    assert isinstance(paused, Paused) and paused.last_round
    llm_server.script(srs.doc_reply())
    # A new process (as after an app restart) resumes from the SQLite file with the decision.
    done = subprocess.run(
        [sys.executable, "-c", RESUME_SCRIPT, llm_server.base_url, str(db), str(logs)],
        input="edit FR-02 Cancel an order within 24 hours.\nremove FR-03\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    events = json.loads(done.stdout)
    assert [e["name"] for e in events][:1] == ["decision_applied"]
    assert not any(e["name"] == "node_finished" and e["agent"] == "ReqClarify" for e in events)
    result = events[-1]["result"]
    assert [r["id"] for r in result["requirements"]] == ["FR-01", "FR-02"]
    assert "Cancel an order within 24 hours." in srs.prompts_for(llm_server, srs.DOC)[0]
    # the resumed process's result carries the whole log, the first process's part included
    assert [e["agent"] for e in result["logs"]] == [
        "ReqParse", "ReqExplore", "ReqClarify", "User", "DocGenerate",
    ]  # fmt: skip
    assert result["logs"][3]["raw_output"].startswith("edit FR-02")


async def test_pausing_is_off_by_default(llm_server, factory):
    llm_server.script(*first_round(), srs.doc_reply())
    request = REQUEST.model_copy(update={"pause_after_round": False, "max_iterations": 2})
    events = await srs.collect(request, factory)
    assert not any(isinstance(e, Paused | DecisionApplied) for e in events)
    assert srs.finished(events).completed
    assert [e.agent for e in events if isinstance(e, NodeFinished)][-1] == "DocGenerate"


# --- reqstudio srs generate --interactive -------------------------------------------------


def run_interactive(llm_server, tmp_path: Path, stdin: str, *args: str):
    from tests.cli_support import REQSTUDIO, cli_env

    (tmp_path / "input.md").write_text("Customers buy products online.\n", encoding="utf-8")
    (tmp_path / "reference.md").write_text("# Reference\nCustomers buy.\n", encoding="utf-8")
    command = [
        *REQSTUDIO, "srs", "generate", "--input", "input.md", "--reference", "reference.md",
        "--max-iterations", "3", "--interactive", "--log", "log.json", *args,
    ]  # fmt: skip
    return subprocess.run(
        command,
        cwd=tmp_path,
        env=cli_env(llm_server.base_url, tmp_path, OPENAI_TIMEOUT="10"),
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )


def test_cli_interactive_reads_the_decision_from_piped_stdin(llm_server, tmp_path):
    llm_server.script(
        *first_round(),
        srs.explore_reply(("FR-02", "Cancel an order before it ships.")),
        srs.clarify_reply(FR_02=1, FR_04=0),
        srs.doc_reply(),
    )
    # Round 1: a line naming an unknown id refuses that block (nothing applied), the next
    # block is applied; round 2: the end of the input accepts.
    stdin = "remove FR-09\n\nedit FR-02 Cancel an order within 24 hours.\nremove FR-03\n"
    stdin += "add Pay by card.\nscore FR-01 0\n\n"
    done = run_interactive(llm_server, tmp_path, stdin)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# Software Requirements Specification")
    err = done.stderr
    assert "[User] round 1: the list after ReqClarify (score, status):" in err
    assert re.search(r"FR-01\s+\+1\s+frozen\s+Place an order\.", err)
    assert re.search(r"FR-03\s+-1\s+open\s+Rate a product\.", err)
    assert "reqstudio: not in the requirement list: FR-09; nothing was applied" in err
    assert "[User] round 1: edited FR-02; removed FR-03; added FR-04; score FR-01 +0" in err
    assert "[User] round 2: list accepted as it is" in err
    explore = srs.prompts_for(llm_server, srs.EXPLORE)[1]
    assert listed(explore, "Unfrozen & Non-removed List (JSON):") == {
        "FR-01": "Place an order.",  # unfrozen by the user's score 0
        "FR-02": "Cancel an order within 24 hours.",
        "FR-04": "Pay by card.",
    }
    log = json.loads((tmp_path / "log.json").read_text(encoding="utf-8"))
    users = [entry for entry in log["logs"] if entry["agent"] == "User"]
    assert [u["iteration"] for u in users] == [1, 2]
    assert users[0]["raw_output"].startswith("edit FR-02 Cancel an order within 24 hours.")
    assert users[1]["parsed_output"]["applied"]["accepted_as_is"] is True


def test_cli_interactive_with_no_input_accepts_every_round(llm_server, tmp_path):
    llm_server.script(
        *first_round(),
        srs.explore_reply(("FR-02", "Cancel an order before it ships.")),
        srs.clarify_reply(FR_02=1),
        srs.doc_reply(),
    )
    done = run_interactive(llm_server, tmp_path, "")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("list accepted as it is") == 2
    assert "Rate a product." in srs.prompts_for(llm_server, srs.EXPLORE)[1]
