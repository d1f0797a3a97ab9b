"""A fresh `srs generate` run sends ReqParse's request before LangGraph is imported, and that
early call is the node's own: the same events in the same order, the same retries and the
same ending when the provider misbehaves (`reqstudio.modes.srs.first_call`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reqstudio.modes.srs.engine import SrsRequest, run_srs
from reqstudio.modes.srs.events import (
    DocumentToken,
    NodeFinished,
    NodeToken,
    RunFailed,
    RunFinished,
)
from reqstudio.waits import TryFailed, watching
from tests import test_srs_support as srs
from tests.cli_support import QUICK, REQSTUDIO, run_reqstudio
from tests.scripted_server import Reply

# `reqstudio` with a probe: whether LangGraph was imported when the process first connected
# to the scripted server, and when (monotonic, as the server's timeline) it was imported.
PROBED = """
import json, os, sys, time
port, notes = os.environ["PROBE_PORT"], {}
def note(key, value):
    notes[key] = value
    with open(os.environ["PROBE_FILE"], "w") as file:
        file.write(json.dumps(notes))
def probe(event, args):
    if event == "socket.connect" and "connected" not in notes:
        address = args[1]
        if isinstance(address, tuple) and str(address[1]) == port:
            note("connected", sorted(m for m in sys.modules if m.split(".")[0] == "langgraph"))
    elif event == "import" and args[0] == "langgraph" and "langgraph" not in notes:
        note("langgraph", time.monotonic())
sys.addaudithook(probe)
from reqstudio.entry import run
run()
"""


def test_the_first_request_reaches_the_server_before_langgraph_is_imported(llm_server, tmp_path):
    srs_run = [
        srs.parse_reply(("FR-01", "Place an order.")),
        srs.explore_reply(("FR-01", "Place an order.")),
        srs.doc_reply(),
    ]
    llm_server.script(*srs_run)
    notes = tmp_path / "probe.json"
    done = run_reqstudio(
        llm_server.base_url, tmp_path, "srs", "generate", "--input", srs.E_STORE / "input.md",
        "--out", tmp_path / "srs.md",
        command=[REQSTUDIO[0], "-c", PROBED],
        PROBE_PORT=llm_server.base_url.split(":")[2].split("/")[0], PROBE_FILE=str(notes),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    probe = json.loads(notes.read_text(encoding="utf-8"))
    assert probe["connected"] == []  # nothing of LangGraph when the first request left
    assert len(llm_server.timeline) == 3
    # the graph ran (it took ReqParse's answer), LangGraph imported once the request was in
    assert probe["langgraph"] > llm_server.timeline[0]["received"]
    assert srs.prompts_for(llm_server.requests[:1], srs.PARSE)  # the first was ReqParse's


def shape(event: Any) -> tuple:
    """What an event says, without its timings (tokens are joined: how many chunks carry an
    answer's text depends on the timing, `reqstudio.coalesce`)."""
    if isinstance(event, NodeToken):
        return ("NodeToken", event.reasoning, event.text)
    if isinstance(event, DocumentToken):
        return ("DocumentToken", False, event.text)
    if isinstance(event, NodeFinished):
        return ("NodeFinished", event.agent, event.round, tuple(map(str, event.requirements)))
    if isinstance(event, RunFailed):
        partial = event.partial
        logged = [entry["agent"] for entry in partial.logs] if partial else None
        return ("RunFailed", event.code, event.message, event.agent, event.error_type, logged)
    if isinstance(event, RunFinished):
        return ("RunFinished", event.result.srs_markdown, len(event.result.logs))
    return (type(event).__name__, event.model_dump_json())


async def events_and_retries(factory, early: bool) -> tuple[list[tuple], list[tuple]]:
    """The run's events, and the retries its wait observers saw, each list in its order."""
    seen: list[tuple] = []
    retries: list[tuple] = []

    def observe(event: Any) -> None:
        if isinstance(event, TryFailed):
            retries.append((event.label, event.attempt, event.cause.code, len(seen)))

    request = SrsRequest(user_input="A shop.", ablation="no-explore-clarify")
    with watching(observe):
        async for event in run_srs(request, factory, early_first_call=early):
            said = shape(event)
            if said[0].endswith("Token") and seen and seen[-1][:2] == said[:2]:
                said = (*said[:2], seen.pop()[2] + said[2])
            seen.append(said)
    return seen, retries


CUT = '```json\n[{"id": "FR-01", "con'
FIRST_CALL_FAULTS = {
    "length every time": [Reply(content=CUT, finish_reason="length", match=srs.PARSE)] * 3,
    "garbage JSON every time": [Reply(content="no list, sorry", match=srs.PARSE)] * 3,
    "refused (content filter)": [Reply(content="", finish_reason="content_filter")] * 3,
    "cut stream every time": [srs.parse_reply(("FR-01", "Buy."), fault="truncated")] * 3,
    "401": [Reply(fault="401", match=srs.PARSE)],
    "length, then a whole answer": [
        Reply(content=CUT, finish_reason="length", match=srs.PARSE),
        srs.parse_reply(("FR-01", "Place an order.")),
        srs.doc_reply(),
    ],
    "500, then a whole answer": [
        Reply(fault="500", match=srs.PARSE),
        srs.parse_reply(("FR-01", "Place an order.")),
        srs.doc_reply(),
    ],
}


@pytest.mark.parametrize("replies", FIRST_CALL_FAULTS.values(), ids=FIRST_CALL_FAULTS.keys())
async def test_the_early_call_ends_as_the_nodes_own_call(llm_server, factory, replies):
    llm_server.script(*replies)
    expected, expected_retries = await events_and_retries(factory, early=False)
    asked = [body["messages"] for body in llm_server.requests]
    llm_server.reset()
    llm_server.script(*replies)
    seen, retries = await events_and_retries(factory, early=True)
    assert seen == expected
    assert [retry[:3] for retry in retries] == [retry[:3] for retry in expected_retries]
    assert [body["messages"] for body in llm_server.requests] == asked  # the same asks
    # each retry is said within ReqParse's step: after it started, before it ended
    ended = next(i for i, e in enumerate(seen) if e[0] in ("NodeFinished", "RunFailed"))
    assert all(0 < events_before <= ended for *_, events_before in retries)


@pytest.mark.parametrize(
    "replies, said",
    [
        (FIRST_CALL_FAULTS["length every time"][:2], "finish_reason: length"),
        (FIRST_CALL_FAULTS["garbage JSON every time"][:2], "ReqParse failed"),
        (FIRST_CALL_FAULTS["refused (content filter)"][:2], "ReqParse failed"),
    ],
    ids=["length", "garbage JSON", "refused"],
)
def test_a_misbehaving_first_call_fails_the_command_as_before(llm_server, tmp_path, replies, said):
    llm_server.script(*replies)
    done = run_reqstudio(
        llm_server.base_url, tmp_path, "srs", "generate", "--input", srs.E_STORE / "input.md",
        "--lang", "en", OPENAI_MAX_RETRIES="1", **QUICK,
    )  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.splitlines()
    failed = [line for line in lines if line.startswith("reqstudio: ReqParse failed: ")]
    assert len(failed) == 1 and said in done.stderr, done.stderr
    started = lines.index("[ReqParse] ...")
    retried = [i for i, line in enumerate(lines) if line.startswith("ReqParse: try 1 of 2")]
    assert retried and all(started < i < lines.index(failed[0]) for i in retried)
    assert len(llm_server.requests) == 2
