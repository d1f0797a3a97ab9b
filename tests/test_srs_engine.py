"""The SRS engine's rules (seed 000), through the real client and a scripted server over HTTP."""

from __future__ import annotations

import json

import pytest

from reqstudio.llm import Endpoint, ModelFactory
from reqstudio.modes.srs import asking
from reqstudio.modes.srs.engine import SrsRequest, run_srs
from reqstudio.modes.srs.events import (
    DocumentReset,
    DocumentToken,
    NodeFinished,
    NodeRestarted,
    NodeStarted,
    NodeToken,
    Notice,
    RunFinished,
    Trail,
)
from reqstudio.usage import UsageTracker
from tests import test_srs_support as srs
from tests.scripted_server import Reply

REFERENCE = "# Reference SRS\n\nFR: customers buy products online; orders are confirmed by e-mail."
REQUEST = SrsRequest(
    user_input="Customers buy products online and get an e-mail confirmation.",
    reference_srs=REFERENCE,
    max_iterations=3,  # the seed's count: ReqParse is iteration 1, then two rounds
)
UNFROZEN_HEADING = "Unfrozen & Non-removed List (JSON):"
SCORES_HEADING = "Scores (for unfrozen & non-removed items, JSON):"


def fenced_json(prompt: str, heading: str):
    """The JSON in the first ```json fence after `heading`."""
    return json.loads(prompt.split(heading, 1)[1].split("```json", 1)[1].split("```", 1)[0])


def script_two_rounds(server, document: Reply | None = None) -> None:
    """Round 1 freezes the tied top scores and removes FR-03; round 2's model output tries to
    change a frozen item and bring the removed one back; then `document` (the SRS, at once)."""
    server.script(
        srs.parse_reply(
            ("FR-01", "The system shall let a customer place an order."),
            ("FR-02", "The system shall e-mail an order confirmation."),
            ("NFR-01", "Pages shall load fast."),
        ),
        srs.explore_reply(
            ("FR-01", "The system shall let a signed-in customer place an order."),
            ("FR-02", "The system shall e-mail an order confirmation within 5 minutes."),
            ("NFR-01", "Pages shall load fast."),
            ("FR-03", "The system shall sell insurance products."),
        ),
        srs.clarify_reply(FR_01=2, FR_02=2, NFR_01=1, FR_03=-2),
        srs.explore_reply(
            ("FR-01", "REWRITTEN frozen item"),
            ("FR-03", "The system shall sell insurance products again."),
            ("NFR-01", "95% of pages shall load within 2 seconds."),
            ("CON-01", "The system shall use HTTPS only."),
        ),
        srs.clarify_reply(NFR_01=0, CON_01=-1, FR_01=-2, FR_03=2),
        document or srs.doc_reply(),
    )


async def test_two_rounds_apply_freeze_and_remove_rules(llm_server, factory):
    script_two_rounds(llm_server)
    result = srs.finished(await srs.collect(REQUEST, factory))

    assert [r.id for r in result.requirements] == ["FR-01", "FR-02", "NFR-01", "CON-01"]
    # every item tied at the highest score (+2) froze; +1 did not, as it was not the top
    assert result.frozen_ids == ["FR-01", "FR-02"]
    # FR-03 scored -2 and stays removed though ReqExplore and ReqClarify named it again
    assert result.removed_ids == ["FR-03"]
    contents = {r.id: r.content for r in result.requirements}
    # a frozen item keeps the text it froze with; the model's rewrite was discarded
    assert contents["FR-01"] == "The system shall let a signed-in customer place an order."
    assert contents["NFR-01"] == "95% of pages shall load within 2 seconds."
    assert result.rounds == 2
    assert result.srs_markdown == srs.SRS_TEXT
    # round 2's scores: the frozen FR-01's -2 and the removed FR-03's +2 were ignored
    assert result.scores == {"NFR-01": 0, "CON-01": -1}


async def test_explore_sees_only_unfrozen_items_and_docgenerate_no_removed(llm_server, factory):
    script_two_rounds(llm_server)
    srs.finished(await srs.collect(REQUEST, factory))

    first, second = srs.prompts_for(llm_server, srs.EXPLORE)
    assert [item["id"] for item in fenced_json(first, UNFROZEN_HEADING)] == [
        "FR-01",
        "FR-02",
        "NFR-01",
    ]
    assert fenced_json(first, SCORES_HEADING) == []
    assert [item["id"] for item in fenced_json(second, UNFROZEN_HEADING)] == ["NFR-01"]
    frozen_part = srs.section(second, "[(Read-only) Frozen List]:", "[(Read-only) Removed List")
    assert "FR-01" in frozen_part and "FR-02" in frozen_part
    removed_part = srs.section(second, "[(Read-only) Removed List", "Unfrozen & Non-removed")
    assert "FR-03" in removed_part and "insurance" in removed_part
    assert fenced_json(second, SCORES_HEADING) == [
        {"id": "NFR-01", "score": 1, "reason": "scored 1"}
    ]
    (clarify_2,) = srs.prompts_for(llm_server, srs.CLARIFY)[1:]
    scored_list = fenced_json(clarify_2, "Requirements to Score (unfrozen) List:")
    assert [item["id"] for item in scored_list] == ["NFR-01", "CON-01"]
    (doc_prompt,) = srs.prompts_for(llm_server, srs.DOC)
    assert [item["id"] for item in fenced_json(doc_prompt, "(JSON array):")] == [
        "FR-01",
        "FR-02",
        "NFR-01",
        "CON-01",
    ]
    assert "insurance" not in doc_prompt


async def test_new_ids_are_appended_in_the_models_order(llm_server, factory):
    llm_server.script(
        srs.parse_reply(("FR-01", "Place an order."), ("FR-02", "Cancel an order.")),
        srs.explore_reply(
            ("SUG-01", "Suggest related products."),
            ("FR-02", "Cancel an order before it ships."),
            ("NFR-01", "Log every order change."),
        ),
        srs.doc_reply(),
    )
    request = REQUEST.model_copy(update={"ablation": "no-clarify"})
    result = srs.finished(await srs.collect(request, factory))
    assert [(r.id, r.content) for r in result.requirements] == [
        ("FR-01", "Place an order."),
        ("FR-02", "Cancel an order before it ships."),
        ("SUG-01", "Suggest related products."),
        ("NFR-01", "Log every order change."),
    ]


async def test_top_score_below_plus_one_freezes_nothing_and_plus_one_ties_freeze(
    llm_server, factory
):
    llm_server.script(
        srs.parse_reply(("FR-01", "A."), ("FR-02", "B."), ("FR-03", "C.")),
        srs.explore_reply(("FR-01", "A."), ("FR-02", "B."), ("FR-03", "C.")),
        srs.clarify_reply(FR_01=0, FR_02=-1, FR_03=0),
        srs.explore_reply(("FR-01", "A."), ("FR-02", "B."), ("FR-03", "C.")),
        srs.clarify_reply(FR_01=1, FR_02=1, FR_03=-1),
        srs.doc_reply(),
    )
    events = await srs.collect(REQUEST, factory)
    clarify_rounds = [e for e in events if isinstance(e, NodeFinished) and e.agent == "ReqClarify"]
    assert clarify_rounds[0].frozen_now == []
    assert clarify_rounds[1].frozen_now == ["FR-01", "FR-02"]
    assert srs.finished(events).frozen_ids == ["FR-01", "FR-02"]


async def test_loop_ends_early_when_nothing_unfrozen_is_left(llm_server, factory):
    llm_server.script(
        srs.parse_reply(("FR-01", "A."), ("FR-02", "B.")),
        srs.explore_reply(("FR-01", "A."), ("FR-02", "B.")),
        srs.clarify_reply(FR_01=2, FR_02=2),
        srs.doc_reply(),
    )
    request = REQUEST.model_copy(update={"max_iterations": 5})
    events = await srs.collect(request, factory)
    assert srs.node_sequence(events) == ["ReqParse", "ReqExplore", "ReqClarify", "DocGenerate"]
    assert srs.finished(events).rounds == 1
    assert len(llm_server.requests) == 4


@pytest.mark.parametrize(("max_iterations", "rounds"), [(1, 1), (2, 1), (3, 2), (5, 4)])
async def test_loop_counts_iterations_as_the_seed_does(llm_server, factory, max_iterations, rounds):
    """Seed 000: ReqParse makes `iteration` 1 ("递增"), each ReqClarify adds 1, and the loop
    goes on while iteration < max_iterations: --max-iterations 3 is 6 model calls."""
    llm_server.script(srs.parse_reply(("FR-01", "A."), ("FR-02", "B.")))
    for _ in range(6):
        llm_server.script(
            srs.explore_reply(("FR-01", "A."), ("FR-02", "B.")), srs.clarify_reply(FR_01=0, FR_02=0)
        )
    llm_server.script(srs.doc_reply())
    request = REQUEST.model_copy(update={"max_iterations": max_iterations})
    events = await srs.collect(request, factory)
    assert srs.node_sequence(events) == [
        "ReqParse",
        *["ReqExplore", "ReqClarify"] * rounds,
        "DocGenerate",
    ]
    assert len(llm_server.requests) == 2 + 2 * rounds
    # the steps number the rounds 1.. as the seed's "第 X 轮" lines do
    assert [e.round for e in events if isinstance(e, NodeStarted)] == [
        0,
        *[n for n in range(1, rounds + 1) for _ in (0, 1)],
        rounds + 1,
    ]
    result = srs.finished(events)
    assert result.rounds == rounds
    assert result.iteration == max(max_iterations, 2)
    assert llm_server.pending == 2 * (6 - rounds)  # later rounds' answers were never asked for


@pytest.mark.parametrize(
    ("ablation", "sequence"),
    [
        ("no-clarify", ["ReqParse", "ReqExplore", "DocGenerate"]),
        ("no-explore-clarify", ["ReqParse", "DocGenerate"]),
    ],
)
async def test_ablation_node_sequences(llm_server, factory, ablation, sequence):
    llm_server.script(
        srs.parse_reply(("FR-01", "A.")),
        srs.explore_reply(("FR-01", "A, refined.")),
        srs.doc_reply(),
    )
    events = await srs.collect(REQUEST.model_copy(update={"ablation": ablation}), factory)
    assert srs.node_sequence(events) == sequence
    result = srs.finished(events)
    assert result.ablation == result.ablation_used == ablation
    # the summary counts what the steps showed: "ReqExplore · 第 1 轮" is one round, not 0
    explore_rounds = [e.round for e in events if isinstance(e, NodeStarted)][1:-1]
    assert explore_rounds == ([1] if ablation == "no-clarify" else [])
    assert result.rounds == len(explore_rounds)
    assert not any(isinstance(e, Notice) for e in events)
    assert not srs.prompts_for(llm_server, srs.CLARIFY)


async def test_without_reference_none_runs_as_no_clarify_and_says_so(llm_server, factory):
    llm_server.script(
        srs.parse_reply(("FR-01", "A.")),
        srs.explore_reply(("FR-01", "A, refined.")),
        srs.doc_reply(),
    )
    events = await srs.collect(REQUEST.model_copy(update={"reference_srs": "  \n"}), factory)
    assert isinstance(events[0], Notice) and "no-clarify" in events[0].message
    assert "no-clarify" in events[0].text("zh")
    assert srs.node_sequence(events) == ["ReqParse", "ReqExplore", "DocGenerate"]
    result = srs.finished(events)
    assert (result.ablation, result.ablation_used) == ("none", "no-clarify")


async def test_events_describe_each_node(llm_server, factory):
    # the document paced as a provider streams it (the app gives a piece per 50 ms at most)
    script_two_rounds(llm_server, srs.doc_reply(chunk_chars=10, chunk_delay=0.06))
    streamed = (Trail, NodeToken, NodeRestarted)  # a running step's stream: tests of its own
    events = [e for e in await srs.collect(REQUEST, factory) if not isinstance(e, streamed)]
    kinds = [type(e).__name__ for e in events]
    assert kinds[:2] == ["NodeStarted", "NodeFinished"]
    assert kinds[-1] == "RunFinished"
    clarify_1 = next(e for e in events if isinstance(e, NodeFinished) and e.agent == "ReqClarify")
    assert clarify_1.round == 1
    assert {(s.id, s.score) for s in clarify_1.scores} == {
        ("FR-01", 2),
        ("FR-02", 2),
        ("NFR-01", 1),
        ("FR-03", -2),
    }
    assert all(s.reason for s in clarify_1.scores)
    assert clarify_1.frozen_now == ["FR-01", "FR-02"]
    assert clarify_1.removed_now == ["FR-03"]
    assert clarify_1.counts == {"total": 3, "frozen": 2, "removed": 1, "unfrozen": 1}
    assert [r.id for r in clarify_1.requirements] == ["FR-01", "FR-02", "NFR-01"]
    assert clarify_1.input_tokens > 0 and clarify_1.output_tokens > 0
    assert clarify_1.llm_calls == 1
    tokens = "".join(e.text for e in events if isinstance(e, DocumentToken))
    assert tokens == srs.SRS_TEXT
    # the document streams in pieces, before DocGenerate finishes
    doc_finished = kinds.index("NodeFinished", kinds.index("DocumentToken"))
    assert kinds.count("DocumentToken") > 3
    assert events[doc_finished].agent == "DocGenerate"


async def test_log_records_every_llm_interaction(llm_server, factory):
    script_two_rounds(llm_server)
    tracker = UsageTracker()
    result = srs.finished(await srs.collect(REQUEST, factory, tracker=tracker))
    logs = result.logs
    assert [(e["agent"], e["iteration"]) for e in logs] == [
        ("ReqParse", 1),
        ("ReqExplore", 1),
        ("ReqClarify", 1),
        ("ReqExplore", 2),
        ("ReqClarify", 2),
        ("DocGenerate", 3),
    ]
    parse = logs[0]
    assert parse["input_messages"][0]["role"] == "user"
    assert REQUEST.user_input in parse["input_messages"][0]["content"]
    assert parse["raw_output"].startswith("```json")
    assert [item["id"] for item in parse["parsed_output"]] == ["FR-01", "FR-02", "NFR-01"]
    assert logs[2]["parsed_output"][3] == {"id": "FR-03", "score": -2, "reason": "scored -2"}
    assert logs[-1]["raw_output"] is None  # seed: the document was streamed
    for entry in logs:
        assert entry["input_tokens"] > 0 and entry["output_tokens"] > 0
        assert entry["seconds"] >= entry["model_seconds"] > 0
        assert entry["llm_calls"] == 1
    assert tracker.calls == 6
    assert set(tracker.roles) == {"ReqParse", "ReqExplore", "ReqClarify", "DocGenerate"}
    assert result.usage["calls"] == 6
    assert result.usage["total_tokens"] == sum(e["input_tokens"] + e["output_tokens"] for e in logs)


async def test_items_without_id_or_content_are_dropped_and_ids_kept_as_given(llm_server, factory):
    """Seed 000 keeps ids as the model wrote them (`str(it.get("id"))`): `fr-3` is not
    rewritten to `FR-03`. Repeated ids keep their first item (ids key freezing/removal)."""
    answer = [
        {"id": " fr-3 ", "content": "Place an order."},
        {"content": "No id here."},
        {"id": "FR-02", "content": "   "},
        {"id": None, "content": "Null id."},
        {"id": "NFR 2", "content": "Log every order."},
        {"id": "fr-3", "content": "A repeated id."},
        {"id": "FR-03", "content": "Another item."},
    ]
    llm_server.script(
        Reply(content="```json\n" + json.dumps(answer) + "\n```", match=srs.PARSE), srs.doc_reply()
    )
    result = srs.finished(
        await srs.collect(REQUEST.model_copy(update={"ablation": "no-explore-clarify"}), factory)
    )
    assert [(r.id, r.content) for r in result.requirements] == [
        ("fr-3", "Place an order."),
        ("NFR 2", "Log every order."),
        ("FR-03", "Another item."),
    ]


async def test_unusable_answer_is_repaired_by_asking_again(llm_server, factory):
    llm_server.script(
        Reply(content="I am sorry, I cannot list requirements right now.", match=srs.PARSE),
        srs.parse_reply(("FR-01", "Place an order.")),
        srs.doc_reply(),
    )
    request = REQUEST.model_copy(update={"ablation": "no-explore-clarify"})
    result = srs.finished(await srs.collect(request, factory))
    assert [r.id for r in result.requirements] == ["FR-01"]
    asks = [b for b in llm_server.requests if srs.PARSE in json.dumps(b["messages"])]
    assert len(asks) == 2
    retry_messages = asks[1]["messages"]
    assert retry_messages[1]["role"] == "assistant"
    assert "could not be used" in retry_messages[2]["content"]
    parse_log = result.logs[0]
    assert parse_log["attempts"] == 2 and len(parse_log["parse_errors"]) == 1
    assert parse_log["llm_calls"] == 2


async def test_answer_broken_every_time_fails_the_run_with_a_partial_result(llm_server, factory):
    llm_server.script(*[Reply(content="not json at all", match=srs.PARSE) for _ in range(3)])
    events = await srs.collect(REQUEST, factory)
    failure = srs.failed(events)
    assert failure.agent == "ReqParse"
    assert "JSON" in failure.message and failure.text("zh")
    assert failure.partial is not None and failure.partial.requirements == []
    assert len(llm_server.requests) == 3


async def test_rate_limit_then_success(llm_server, factory):
    llm_server.script(
        Reply(fault="429", match=srs.PARSE),
        srs.parse_reply(("FR-01", "Place an order.")),
        Reply(fault="500", match=srs.DOC),
        srs.doc_reply(),
    )
    request = REQUEST.model_copy(update={"ablation": "no-explore-clarify"})
    result = srs.finished(await srs.collect(request, factory))
    assert result.srs_markdown == srs.SRS_TEXT
    assert len(llm_server.requests) == 4


async def test_cut_document_stream_starts_again(llm_server, factory):
    llm_server.script(
        srs.parse_reply(("FR-01", "Place an order.")),
        srs.doc_reply("# Half of a document that will be cut off midway\n" * 4, fault="cut"),
        srs.doc_reply(),
    )
    request = REQUEST.model_copy(update={"ablation": "no-explore-clarify"})
    events = await srs.collect(request, factory)
    result = srs.finished(events)
    assert result.srs_markdown == srs.SRS_TEXT
    reset = next(i for i, e in enumerate(events) if isinstance(e, DocumentReset))
    after = "".join(e.text for e in events[reset:] if isinstance(e, DocumentToken))
    assert after == srs.SRS_TEXT
    assert result.logs[-1]["attempts"] == 2


async def test_empty_requirements_text_is_refused(factory):
    with pytest.raises(ValueError, match="empty"):
        await srs.collect(SrsRequest(user_input="  "), factory)


async def test_run_finished_is_last_and_only_once(llm_server, factory):
    script_two_rounds(llm_server)
    events = await srs.collect(REQUEST, factory)
    assert sum(isinstance(e, RunFinished) for e in events) == 1
    assert isinstance(events[-1], RunFinished)


async def test_embedded_model_is_asked_in_its_own_dialect(llm_server, settings):
    """The bundled llama.cpp server takes {"type": "json_object", "schema": ...} (not OpenAI's
    json_schema), bounded to fit its context; DocGenerate gets a Markdown grammar."""
    embedded = ModelFactory(
        settings, Endpoint(llm_server.base_url, "sk-no-key", "m", embedded=True)
    )
    llm_server.script(
        *srs.one_requirement_run("Place an order.", "Place an order online."),
    )
    result = srs.finished(
        await srs.collect(REQUEST.model_copy(update={"max_iterations": 1}), embedded)
    )
    assert result.frozen_ids == ["FR-01"]
    parse, explore, clarify, doc = llm_server.requests
    for body, list_field in (
        (parse, "requirements"),
        (explore, "requirements"),
        (clarify, "scores"),
    ):
        response_format = body["response_format"]
        assert response_format["type"] == "json_object"
        items = response_format["schema"]["properties"][list_field]
        assert items["maxItems"] == asking.EMBEDDED_MAX_ITEMS and items["minItems"] == 1
    assert clarify["response_format"]["schema"]["$defs"]["Score"]["properties"]["score"] == {
        "maximum": 2,
        "minimum": -2,
        "title": "Score",
        "type": "integer",
    }
    assert "response_format" not in doc
    assert doc["grammar"] == asking.EMBEDDED_DOCUMENT_GRAMMAR
    assert doc["max_tokens"] == asking.EMBEDDED_DOCUMENT_TOKENS


# --- ReqClarify reads scores as the seed does (int(), skip what it cannot read) ------------


async def test_one_unreadable_score_skips_that_item_not_the_round(llm_server, factory):
    answer = [
        {"id": "FR-01", "score": 1.5, "reason": "int() makes it 1"},
        {"id": "FR-02", "score": "abc", "reason": "unreadable: skipped"},
        {"score": 2, "reason": "no id: skipped"},
        {"id": "NFR-01", "score": "2", "reason": "a string int() reads"},
        {"id": "CON-01", "score": 3, "reason": "the seed keeps 3 as it is"},
    ]
    llm_server.script(
        srs.parse_reply(("FR-01", "A."), ("FR-02", "B."), ("NFR-01", "C."), ("CON-01", "D.")),
        srs.explore_reply(("FR-01", "A."), ("FR-02", "B."), ("NFR-01", "C."), ("CON-01", "D.")),
        Reply(content="```json\n" + json.dumps(answer) + "\n```", match=srs.CLARIFY),
        srs.doc_reply(),
    )
    request = REQUEST.model_copy(update={"max_iterations": 2})
    events = await srs.collect(request, factory)
    result = srs.finished(events)
    assert len(srs.prompts_for(llm_server, srs.CLARIFY)) == 1  # one answer, no re-ask, no failure
    assert result.scores == {"FR-01": 1, "NFR-01": 2, "CON-01": 3}
    assert result.frozen_ids == ["CON-01"]  # the top score, as the seed's max() sees it
    trail = [e.text("zh") for e in events if isinstance(e, Trail)]
    assert "[日志] ReqClarify：跳过 2 个无法读取的评分项：FR-02, (no id)" in trail
    clarify_log = result.logs[2]
    assert "skipped unreadable score item: FR-02" in clarify_log["parse_errors"]


@pytest.mark.parametrize("agent", ["ReqExplore", "ReqClarify"])
async def test_an_empty_list_is_accepted_where_the_seed_accepts_it(llm_server, factory, agent):
    empty = Reply(
        content="```json\n[]\n```", match=srs.EXPLORE if agent == "ReqExplore" else srs.CLARIFY
    )
    llm_server.script(
        srs.parse_reply(("FR-01", "Place an order."), ("FR-02", "Cancel an order.")),
        empty if agent == "ReqExplore" else srs.explore_reply(("FR-01", "Place an order online.")),
        empty if agent == "ReqClarify" else srs.clarify_reply(FR_01=0, FR_02=0),
        srs.doc_reply(),
    )
    result = srs.finished(
        await srs.collect(REQUEST.model_copy(update={"max_iterations": 2}), factory)
    )
    assert len(llm_server.requests) == 4  # nothing was asked twice
    if agent == "ReqExplore":  # the list stays as it was
        assert [r.content for r in result.requirements] == ["Place an order.", "Cancel an order."]
    else:  # nothing scored, nothing frozen, the round still counts
        assert result.scores == {} and result.frozen_ids == [] and result.iteration == 2


# --- the interaction log and the checkpoints stay small ------------------------------------


async def test_checkpoints_keep_one_state_per_running_run_and_none_once_it_finished(
    llm_server, factory, tmp_path
):
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    reference = "# Reference\n" + "The E-Store shall keep every order for ten years. " * 6000
    llm_server.script(srs.parse_reply(("FR-01", "A."), ("FR-02", "B.")))
    for _ in range(4):
        llm_server.script(
            srs.explore_reply(("FR-01", "A."), ("FR-02", "B.")), srs.clarify_reply(FR_01=0, FR_02=0)
        )
    llm_server.script(srs.doc_reply())
    request = REQUEST.model_copy(update={"reference_srs": reference, "max_iterations": 5})
    database, logs = tmp_path / "srs.sqlite", tmp_path / "logs"
    rows_seen: list[int] = []
    log_lines_seen: list[int] = []
    async with AsyncSqliteSaver.from_conn_string(str(database)) as saver:
        async for event in run_srs(
            request, factory, checkpointer=saver, thread_id="big", log_dir=logs
        ):
            if isinstance(event, NodeFinished):
                async with saver.conn.execute(
                    "SELECT COUNT(*) FROM checkpoints WHERE thread_id = 'big'"
                ) as cursor:
                    rows_seen.append((await cursor.fetchone())[0])
                log_lines_seen.append(len((logs / "big.jsonl").read_text().splitlines()))
            last = event
        assert isinstance(last, RunFinished) and len(last.result.logs) == 10
        async with saver.conn.execute("SELECT COUNT(*) FROM checkpoints") as cursor:
            assert (await cursor.fetchone())[0] == 0  # the finished run was pruned
    assert max(rows_seen) <= 2  # the latest checkpoint (and the one being written)
    assert log_lines_seen == list(range(1, 11))  # each interaction stored once
    assert not (logs / "big.jsonl").exists()
    # Before, each of the eleven checkpoints held the reference, and the log in the state
    # held it again for every ReqClarify prompt so far: many times the reference.
    assert database.stat().st_size < 4 * len(reference.encode())


async def test_a_reference_larger_than_the_models_context_is_warned_before_sending(
    llm_server, factory
):
    small = ModelFactory(
        factory.settings.model_copy(update={"context_tokens": 2000}), factory.endpoint
    )
    llm_server.script(
        srs.parse_reply(("FR-01", "A.")),
        srs.explore_reply(("FR-01", "A.")),
        srs.clarify_reply(FR_01=0),
        srs.doc_reply(),
    )
    reference = "# 参考 SRS\n" + "系统应当在两秒内返回搜索结果。" * 300
    request = REQUEST.model_copy(update={"reference_srs": reference, "max_iterations": 2})
    events = await srs.collect(request, small)
    assert isinstance(events[0], Notice)  # yielded before the graph makes its first call
    assert "2000 tokens" in events[0].message and "OPENAI_CONTEXT_TOKENS" in events[0].message
    assert "超过模型上下文" in events[0].text("zh")
    srs.finished(events)  # a warning, not a refusal: the provider decides
    quiet = await srs.collect(request, factory)  # the default context (128k) holds it
    assert not any(isinstance(e, Notice) for e in quiet)


async def test_a_run_hops_to_no_worker_thread_between_answers(llm_server, factory):
    """The routes between nodes run on the event loop (`reqstudio.edges`): LangGraph would
    run a plain function in the loop's worker pool, a hop between one answer and the next
    request, in a pool every user's run shares. A role's model is built once per run and the
    roles share one SDK client, so the SDK's platform probe goes to a thread once (not once per
    role, 4, or per call, 6)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    submitted: list[str] = []

    class Recording(ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):
            submitted.append(getattr(fn, "__qualname__", repr(fn)))
            return super().submit(fn, *args, **kwargs)

    loop = asyncio.get_running_loop()
    pool = Recording(max_workers=2)
    loop.set_default_executor(pool)
    script_two_rounds(llm_server)
    srs.finished(await srs.collect(REQUEST, factory))
    assert len(submitted) == 1 and "get_platform" in submitted[0], submitted
