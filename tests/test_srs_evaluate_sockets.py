"""SRS mode's Evaluate button over the app's real socket: the scores, or why there are none,
are said once. The step's title says how the evaluation ended and the message under it shows
the table or the failure; the step no longer repeats it.

Seen in CI: the step, still folding away, and the message both read "❌ Evaluation failed: …";
the browser test took two of them for no effect of its click and clicked again, so a second
evaluation ran."""

from __future__ import annotations

import json
from pathlib import Path

from tests.apps import AppProcess
from tests.browser_support import provider_env
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.socket_support import ChatSocket, sign_in_cookie
from tests.test_srs_support import E_STORE, EVALUATE, one_requirement_run

SRS = "# Software Requirements Specification\n\n## 1. Introduction\n\nReaders borrow books.\n"
SCORES = {
    "coverage": 0.8, "completeness": 0.6, "consistency": 0.9, "testability": 0.7,
    "clarity": 0.8, "traceability": 0.4, "scope_discipline": 0.9,
    "by_category": {"functional": 0.6, "non_functional": 0.5, "constraints": 0.3},
}  # fmt: skip
OUT_OF_RANGE = {"metrics": {**SCORES, "coverage": 8, "traceability": 4}}


def evaluate_button(chat: ChatSocket) -> dict:
    return [d for e, d in chat.events if e == "action" and d["name"] == "srs_evaluate"][-1]


async def evaluate(chat: ChatSocket, said: str) -> None:
    """Click Evaluate and wait until its run has ended with a message saying `said`."""
    await chat.click(evaluate_button(chat))
    await chat.wait_for(lambda e, d: e == "new_message" and said in str(d.get("output")))
    await chat.wait_until_idle()  # the message came from the evaluation's run: it has started


def saying(chat: ChatSocket, text: str) -> list[str]:
    """The kinds of what the page shows with `text` in it (a step's type or a message's)."""
    return [item["type"] for item in chat.shown() if text in str(item.get("output"))]


async def test_an_evaluation_s_failure_and_its_scores_are_each_said_once(tmp_path: Path):
    with ScriptedLLMServer() as server:
        env = provider_env(server) | {"OPENAI_MAX_RETRIES": "1"}
        app = AppProcess(tmp_path / "data", env).start()
        chat = ChatSocket(app.url, sign_in_cookie(app.url), profile="SRS")
        try:
            await chat.connect()
            await chat.wait_for(lambda event, _: event == "chat_settings")
            server.script(
                *one_requirement_run(
                    "Readers borrow books", "Readers borrow up to five books", SRS
                ),
                # out of range, and again when asked once more: refused
                Reply(match=EVALUATE, content=json.dumps(OUT_OF_RANGE)),
                Reply(match=EVALUATE, content=json.dumps(OUT_OF_RANGE)),
            )
            reference = await chat.upload("reference.md", (E_STORE / "reference.md").read_bytes())
            await chat.send(
                "A library lending system: readers borrow and return books.", [reference]
            )
            await chat.wait_until_idle()
            await chat.wait_for(lambda e, d: e == "action" and d["name"] == "srs_evaluate")

            await evaluate(chat, "Evaluation failed")
            assert saying(chat, "Evaluation failed") == ["assistant_message"]
            assert saying(chat, "scores outside 0-1") == ["assistant_message"]
            evaluation = [m for m in chat.shown() if str(m.get("name")).startswith("Evaluation")]
            assert [m["name"] for m in evaluation] == ["Evaluation · failed"]
            assert evaluation[0]["isError"] is True
            assert server.pending == 0

            server.script(Reply(match=EVALUATE, content=json.dumps({"metrics": SCORES})))
            await evaluate(chat, "Overall score")
            assert saying(chat, "Overall score") == ["assistant_message"]
            assert saying(chat, "| Coverage | 0.80 |") == ["assistant_message"]
            names = [m["name"] for m in chat.shown() if str(m["name"]).startswith("Evaluation")]
            assert names == ["Evaluation · failed", "Evaluation · done"]
        finally:
            await chat.close()
            app.stop()
