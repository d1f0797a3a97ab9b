"""`reqstudio srs generate` sends its first model request before the work it needs only later.

The checker's warm-up (its imports and word lists) and the reference's sections are needed once
the second answer is in. Started before a request left, they held the interpreter while that
request was being built and sent; during the first answer LangGraph is imported and the graph
built (`reqstudio.modes.srs.first_call`); they start once the second answer streams."""

from __future__ import annotations

import threading
import time

from tests import test_srs_support as srs

REFERENCE = "# Reference SRS\n\n## 1 Scope\n\nThe shop shall sell books.\n"


async def test_the_warm_up_starts_after_the_second_request_has_left(
    llm_server, factory, tmp_path, monkeypatch
):
    from reqstudio.modes.srs.cli import _generate
    from reqstudio.modes.srs.engine import SrsRequest

    warm_up_started: list[float] = []

    class NotedThread(threading.Thread):
        def start(self) -> None:
            if self.name == "srs-warm-up":
                warm_up_started.append(time.monotonic())
            super().start()

    monkeypatch.setattr(threading, "Thread", NotedThread)
    llm_server.script(
        srs.parse_reply(("FR-01", "Place an order.")),
        srs.doc_reply(delay=0.1, chunk_chars=4, chunk_delay=0.02),
    )
    request = SrsRequest(
        user_input="A shop.", reference_srs=REFERENCE, ablation="no-explore-clarify"
    )
    code = await _generate(
        factory,
        request,
        tmp_path / "srs.md",
        tmp_path / "log.json",
        quiet=True,
        fallback_dir=tmp_path / "data",
    )
    assert code == 0
    second_request = llm_server.timeline[1]["received"]
    assert len(warm_up_started) == 1
    assert warm_up_started[0] > second_request
    assert warm_up_started[0] < llm_server.timeline[1]["answered"]  # while the answer streams
