"""A running SRS step shows its model's answer as it streams (the README says the running step's
reasoning streams in view; ReqParse, ReqExplore and ReqClarify showed nothing until they were
done): the engine yields the answer's pieces between the node's start and its end, a reasoning
model's thinking marked as such, and starts again with a new try."""

from __future__ import annotations

from langchain_core.messages import AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk

from reqstudio.modes.srs.engine import SrsRequest
from reqstudio.modes.srs.events import NodeFinished, NodeRestarted, NodeStarted, NodeToken
from reqstudio.modes.srs.streaming import NodeStream
from tests import test_srs_support as srs
from tests.scripted_server import Reply

REQUEST = SrsRequest(
    user_input="Customers buy products online.",
    reference_srs="# Reference\n\n- FR-1 Customers buy products.\n",
    max_iterations=1,  # ReqParse, then the document
)


def between_start_and_end(events: list, agent: str) -> list:
    start = next(i for i, e in enumerate(events) if isinstance(e, NodeStarted) and e.agent == agent)
    end = next(i for i, e in enumerate(events) if isinstance(e, NodeFinished) and e.agent == agent)
    return events[start + 1 : end]


async def test_req_parse_s_answer_streams_inside_its_step(llm_server, factory):
    # paced as a provider streams (the app joins what comes within 50 ms into one piece)
    parsed = srs.parse_reply(
        ("FR-01", "Customers buy products online."), chunk_chars=7, chunk_delay=0.06
    )
    llm_server.script(parsed, srs.doc_reply())
    events = await srs.collect(REQUEST, factory)

    inside = between_start_and_end(events, "ReqParse")
    tokens = [e for e in inside if isinstance(e, NodeToken)]
    assert len(tokens) > 3  # in pieces, as it came
    assert "".join(t.text for t in tokens) == parsed.content
    streamed = [e for e in inside if isinstance(e, NodeToken | NodeRestarted)]
    assert isinstance(streamed[0], NodeRestarted)  # a try's start clears what the step showed
    # every piece belongs to a running step, and none to DocGenerate (it streams the document)
    running = None
    for event in events:
        if isinstance(event, NodeStarted):
            running = event.agent
        elif isinstance(event, NodeFinished):
            running = None
        elif isinstance(event, NodeToken):
            assert running not in (None, "DocGenerate"), event


async def test_a_new_try_starts_the_shown_answer_over(llm_server, factory):
    answer = srs.parse_reply(("FR-01", "Customers buy products online."))
    llm_server.script(
        Reply(content="not json at all", match=srs.PARSE),  # a try that cannot be read
        answer,
        srs.doc_reply(),
    )
    events = await srs.collect(REQUEST, factory)

    inside = between_start_and_end(events, "ReqParse")
    restarts = [i for i, e in enumerate(inside) if isinstance(e, NodeRestarted)]
    assert len(restarts) == 2
    first_try = "".join(e.text for e in inside[: restarts[1]] if isinstance(e, NodeToken))
    last_try = "".join(e.text for e in inside[restarts[1] :] if isinstance(e, NodeToken))
    assert first_try == "not json at all" and last_try == answer.content


def test_a_reasoning_model_s_thinking_is_relayed_before_its_answer():
    written: list[NodeToken] = []
    relay = NodeStream(written.append)
    thinking = AIMessageChunk(content="", additional_kwargs={"reasoning_content": "Split it."})
    relay.on_llm_new_token("", chunk=ChatGenerationChunk(message=thinking))
    relay.on_llm_new_token(
        '{"items"', chunk=ChatGenerationChunk(message=AIMessageChunk(content='{"items"'))
    )
    assert written == [
        NodeToken(text="Split it.", reasoning=True),
        NodeToken(text='{"items"', reasoning=False),
    ]
