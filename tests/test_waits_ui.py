"""Every wait is visible in every mode, as the browser receives it.

A real app over its Socket.IO socket, in zh-CN and en-US at once; in each mode the first model
call's first try gets no answer within OPENAI_TIMEOUT (8 s here), and its second try answers
4 s later. The tab must be shown, in its language, a waiting line with the seconds counted
(past 10 s), in the mode's current step (Chat: in the answer's message), and the retry line
("第 2/3 次尝试：上一次 8 秒没有回答"); the waiting line goes, and the stored thread (what a
reopened thread shows) keeps the retry line and never the waiting line."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import review_support as review
from tests import rewrite_support as rewrite
from tests.apps import AppProcess, running_app
from tests.browser_support import provider_env
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.socket_tabs import Tab
from tests.test_srs_support import UPLOADS, one_requirement_run
from tests.test_team_run import answer

TIMEOUT = 8  # OPENAI_TIMEOUT: the hanging first try fails after it
HANG = 10.0  # the first try's answer would come after this: never, for the client
LATE = 4.0  # the second try's answer comes after this: 12 s after the call began

WAITING = {
    "zh-CN": re.compile(r"⏳ (等待模型回答|模型正在回答)[^…]*… (\d+) 秒"),
    "en-US": re.compile(r"⏳ (Waiting for the model|The model is answering)[^…]*… (\d+) s"),
}
RETRY = {
    "zh-CN": re.compile(r"⟳ (.+：)?第 2/3 次尝试：上一次 \d+ 秒没有回答"),
    "en-US": re.compile(r"⟳ (.+: )?try 2 of 3 after \d+ s without an answer"),
}
LANGUAGES = ("zh-CN", "en-US")
# What each mode's stored thread holds once the run went on to its end after the retry.
CHAT_END = "A good requirement is testable."
SRS_END = "The E-Store sells online."
REWRITE_END = rewrite.BODIES[-1].strip()
# the review's closing line: why it stopped (reqstudio/locales, review's quality_sufficient)
REVIEW_END = {"zh-CN": "没有高优先级问题", "en-US": "no high-priority issue left"}
AGENT_END = "No tools are needed for this."
TEAM_END = "需求：读者可以借书。"


class WatchedTab(Tab):
    """A tab that also keeps every streamed text and every removal, in order."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.shown: list[tuple[str, str, str | None]] = []  # (id, text, parent id)
        self.client.on("stream_token", self._on_token)
        self.client.on("delete_message", self._on_delete)
        self.client.on("task_start", self._on_task("start"))
        self.client.on("task_end", self._on_task("end"))
        self.deleted: list[str] = []
        self.tasks: list[str] = []  # "sent", "start", "end" in the order they came

    async def _on_message(self, data: dict) -> None:
        self.shown.append((data["id"], data.get("output") or "", data.get("parentId")))
        await super()._on_message(data)

    async def _on_token(self, data: dict) -> None:
        if data.get("isSequence"):
            known = self.messages.get(data["id"], {})
            self.shown.append((data["id"], data["token"], known.get("parentId")))
        self._changed.set()

    def _on_task(self, what: str) -> Any:
        async def record(data: Any = None) -> None:
            self.tasks.append(what)
            self._changed.set()

        return record

    def run_ended(self) -> bool:
        """A run started after the message was sent, and ended."""
        after = self.tasks[self.tasks.index("sent") :] if "sent" in self.tasks else []
        return "start" in after and "end" in after[after.index("start") :]

    async def send(self, text: str, attach: Path | None = None) -> None:
        self.tasks.append("sent")
        await super().send(text, attach)

    async def _on_delete(self, data: dict) -> None:
        self.deleted.append(data["id"])
        self._changed.set()

    def first_waiting_line(self) -> tuple[str, str, str | None] | None:
        """The first waiting line that counted seconds: (its id, its text, where it was)."""
        pattern = WAITING[self.language]
        return next((shown for shown in self.shown if pattern.search(shown[1])), None)


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as scripted:
        yield scripted


@pytest.fixture(scope="module")
def app(server: ScriptedLLMServer, tmp_path_factory) -> Iterator[AppProcess]:
    env = provider_env(server) | {
        "OPENAI_TIMEOUT": str(TIMEOUT),
        "REQSTUDIO_RETRY_BACKOFF_SCALE": "0.01",
        "REVIEW_MAX_ROUNDS": "1",
        "REWRITE_MAX_REVIEW_ROUNDS": "0",
        "SRS_MAX_ITERATIONS": "1",
    }
    del env["OPENAI_MAX_RETRIES"]  # each role's own tries: three
    with running_app(tmp_path_factory.mktemp("waits") / "data", env) as process:
        yield process


def scoped(replies: list[Reply], token: str) -> list[Reply]:
    """The replies, for the requests that carry `token` only (each tab's own)."""
    return [
        dataclasses.replace(r, match=(r.match, token) if isinstance(r.match, str) else token)
        for r in replies
    ]


def hanging_first(replies: list[Reply]) -> list[Reply]:
    """`replies`, their first answer given twice: first never in time, then late."""
    first = replies[0]
    return [
        dataclasses.replace(first, delay=HANG),
        dataclasses.replace(first, delay=LATE),
        *replies[1:],
    ]


async def stored_steps(app: AppProcess, tab: Tab, done: str) -> list[dict[str, Any]]:
    """The thread's steps as the history stores them (what a reopened thread shows), once they
    hold `done`, the run's last words; the test fails if they never do."""
    async with httpx.AsyncClient(base_url=app.url, headers={"Cookie": tab.cookie}) as http:
        for _ in range(100):  # the last writes land a moment after the run ends
            reply = await http.get(f"/project/thread/{tab.thread_id}")
            if reply.status_code == 200 and done in outputs(reply.json()["steps"]):
                return reply.json()["steps"]
            await asyncio.sleep(0.2)
    stored = outputs(reply.json()["steps"]) if reply.status_code == 200 else reply.text
    pytest.fail(f"the stored thread never held {done!r}:\n{stored[-2000:]}")


async def run_in_both_languages(
    app: AppProcess,
    server: ScriptedLLMServer,
    mode: str,
    script: Any,
    send: Any,
    done: str | dict[str, str],
) -> list[tuple[WatchedTab, list[dict[str, Any]]]]:
    """Open a tab per language in `mode`, script each tab's replies (`script(token, language)`),
    send its message (`send(tab, token)`), wait for the run's end; each tab and its stored
    thread (holding `done`, or its language's `done[language]`: the run went on to its end)."""
    tabs = []
    for language in LANGUAGES:
        token = f"WAIT-{mode}-{language}"
        server.script(*script(token, language))
        tab = await WatchedTab(app, mode=mode, language=language).open()
        await tab.until(lambda tab=tab: bool(tab.messages), timeout=60)  # the mode's greeting
        tabs.append((tab, token))
    try:
        await asyncio.gather(*(send(tab, token) for tab, token in tabs))
        await asyncio.gather(
            *(tab.until(lambda tab=tab: bool(tab.first_waiting_line()), 60) for tab, _ in tabs)
        )
        await asyncio.gather(*(tab.until(tab.run_ended, 90) for tab, _ in tabs))
        ends = {
            tab.language: done if isinstance(done, str) else done[tab.language] for tab, _ in tabs
        }
        return [(tab, await stored_steps(app, tab, ends[tab.language])) for tab, _ in tabs]
    finally:
        for tab, _ in tabs:
            await tab.close()


def outputs(steps: list[dict[str, Any]]) -> str:
    return "\n".join(s.get("output") or "" for s in steps)


def check_waits(tab: WatchedTab, steps: list[dict[str, Any]], host_type: str | None) -> None:
    waiting_id, waiting_text, where = tab.first_waiting_line()
    seconds = int(WAITING[tab.language].search(waiting_text).group(2))
    assert seconds >= 10, waiting_text
    retry = RETRY[tab.language]
    assert any(retry.search(text) for _, text, _ in tab.shown), tab.shown
    stored = [s for s in steps if retry.search(s.get("output") or "")]
    assert stored, [s.get("output") for s in steps]  # the thread keeps the retry line
    assert not any("⏳" in (s.get("output") or "") for s in steps)  # never the waiting line
    if host_type is not None or tab.mode == "Team":  # a line of its own: it went
        assert waiting_id in tab.deleted
    if host_type is not None:  # both in the mode's current step
        hosts = {s["id"]: s for s in steps}
        assert hosts[stored[0]["parentId"]]["type"] == host_type
        assert where == stored[0]["parentId"]


def hanging_then(end: str) -> Callable[[str, str], list[Reply]]:
    """A script for a one-answer mode: the tab's first call hangs, its retry answers `end`."""

    def script(token: str, language: str) -> list[Reply]:
        return hanging_first([Reply(match=token, content=end)])

    return script


def asking(question: str) -> Callable[[Tab, str], Awaitable[None]]:
    """Each tab sends `question` after its token."""

    async def send(tab: Tab, token: str) -> None:
        await tab.send(f"{token}{question}")

    return send


async def test_chat_shows_the_wait_and_the_retry_in_its_answer(app, server):
    script, send = hanging_then(CHAT_END), asking(" 什么是好的需求？")
    for tab, steps in await run_in_both_languages(app, server, "Chat", script, send, CHAT_END):
        check_waits(tab, steps, None)
        reply = next(s for s in steps if CHAT_END in (s.get("output") or ""))
        # in the answer's own message, above the answer
        assert RETRY[tab.language].match(reply["output"]), reply["output"]
        first = tab.first_waiting_line()
        assert first[0] == reply["id"]  # the waiting line was in that message too


async def test_srs_shows_the_wait_and_the_retry_in_the_agents_step(app, server):
    reference = UPLOADS / "reference-utf8.md"

    def script(token: str, language: str) -> list[Reply]:
        # every agent's prompt carries the requirement's text, so each tab's token is in it
        run = one_requirement_run(f"{token} 用户可以借书", f"{token} 用户可以续借")
        return scoped(hanging_first(run), token)

    async def send(tab: Tab, token: str) -> None:
        await tab.send(f"{token} 图书馆借阅系统：读者借书、还书。", attach=reference)

    for tab, steps in await run_in_both_languages(app, server, "SRS", script, send, SRS_END):
        check_waits(tab, steps, "llm")


async def test_review_shows_the_wait_and_the_retry_in_the_reviewers_step(app, server, tmp_path):
    def script(token: str, language: str) -> list[Reply]:
        return scoped(hanging_first(review.panel(review.improvement("sec-02", "low"))), token)

    async def send(tab: Tab, token: str) -> None:
        document = tmp_path / f"{token}.md"
        document.write_text(review.DOCUMENT.replace("Pet Clinic", token), encoding="utf-8")
        await tab.send("review this", attach=document)

    for tab, steps in await run_in_both_languages(app, server, "Review", script, send, REVIEW_END):
        # the red team's call hung: its lines are in the red team's own step, under the round's
        check_waits(tab, steps, "tool")
        hosts = {s["id"]: s for s in steps}
        retry = next(s for s in steps if RETRY[tab.language].search(s.get("output") or ""))
        red_team = hosts[retry["parentId"]]
        assert red_team["name"].startswith({"zh-CN": "红队", "en-US": "Red team"}[tab.language])
        assert hosts[red_team["parentId"]]["type"] == "run"  # the round's step
        assert red_team["start"]  # shown as working while it ran


async def test_rewrite_shows_the_wait_and_the_retry_in_the_stages_step(app, server, tmp_path):
    outline = {
        "title": "Pet Clinic Booking",
        "sections": [
            {"title": title, "goal": goal, "level": level}
            for title, goal, level in rewrite.SECTIONS
        ],
    }

    def script(token: str, language: str) -> list[Reply]:
        replies = [Reply(match=rewrite.OUTLINE, content=json.dumps(outline))]
        replies += [Reply(match=rewrite.FILL, content=body) for body in rewrite.BODIES]
        return scoped(hanging_first(replies), token)

    async def send(tab: Tab, token: str) -> None:
        notes = tmp_path / f"{token}.json"
        notes.write_text(json.dumps(rewrite.CLARIFICATIONS), encoding="utf-8")
        await tab.send(rewrite.ORIGINAL_EN.replace("Pet Clinic", token), attach=notes)

    for tab, steps in await run_in_both_languages(
        app, server, "Rewrite", script, send, REWRITE_END
    ):
        check_waits(tab, steps, "llm")


async def test_agent_shows_the_wait_and_the_retry_in_its_rounds_step(app, server):
    script, send = hanging_then(AGENT_END), asking(": what does a good requirement look like?")
    for tab, steps in await run_in_both_languages(app, server, "Agent", script, send, AGENT_END):
        check_waits(tab, steps, "llm")


async def test_team_shows_the_wait_and_the_retry_between_its_messages(app, server):
    def script(token: str, language: str) -> list[Reply]:
        return hanging_first([answer(TEAM_END, match=token)])

    async def send(tab: Tab, token: str) -> None:
        await tab.send(f"{token} 为图书馆写一条需求")

    for tab, steps in await run_in_both_languages(app, server, "Team", script, send, TEAM_END):
        check_waits(tab, steps, None)
        # the line names whose call it was
        assert any("root" in (s.get("output") or "") and "⟳" in s["output"] for s in steps)


STALL = 13.0  # the answer's first piece comes at once, the rest after this: past QUIET_AFTER


@pytest.fixture(scope="module")
def patient_app(server: ScriptedLLMServer, tmp_path_factory) -> Iterator[AppProcess]:
    """An app whose OPENAI_TIMEOUT (30 s) outlasts the stall: the try goes on after it."""
    env = provider_env(server) | {"OPENAI_TIMEOUT": "30"}
    with running_app(tmp_path_factory.mktemp("quiet") / "data", env) as process:
        yield process


QUIET_CHAT = "好的需求是可测试的，也是可以追溯到来源的。"
QUIET_AGENT = "A good requirement is testable and can be traced to its source."


async def test_an_answer_that_goes_quiet_midway_shows_the_wait_again_below_its_text(
    patient_app, server
):
    # The offline walk's Agent: its answer began, then nothing came for 31 s, with nothing
    # on screen that said the model was still being waited for. Chat (zh-CN; the line in the
    # answer's message, below its text so far) and Agent (en-US; a line of its own below the
    # answer) at once: the waiting line with its seconds comes back during the silence, goes
    # when the answer goes on, and neither the shown answer nor the stored thread keeps it.
    app = patient_app
    chat = await WatchedTab(app, mode="Chat", language="zh-CN").open()
    agent = await WatchedTab(app, mode="Agent", language="en-US").open()
    try:
        server.script(
            Reply(match="QUIET-chat", content=QUIET_CHAT, chunk_chars=6, stall=STALL),
            Reply(match="QUIET-agent", content="No tools are needed."),
            Reply(match="QUIET-agent", content=QUIET_AGENT, chunk_chars=12, stall=STALL),
        )
        for tab in (chat, agent):
            await tab.until(lambda tab=tab: bool(tab.messages), timeout=60)
        await asyncio.gather(
            chat.send("QUIET-chat 什么是好的需求？"), agent.send("QUIET-agent what is good?")
        )
        await asyncio.gather(*(tab.until(tab.run_ended, 90) for tab in (chat, agent)))
        steps = {
            tab.language: await stored_steps(app, tab, done)
            for tab, done in ((chat, QUIET_CHAT), (agent, QUIET_AGENT))
        }
    finally:
        for tab in (chat, agent):
            await tab.close()

    waiting_id, text, _ = chat.first_waiting_line()
    reply = next(s for s in steps["zh-CN"] if QUIET_CHAT in (s.get("output") or ""))
    assert waiting_id == reply["id"]  # in the answer's own message ...
    assert text.startswith(QUIET_CHAT[:6] + "\n\n⏳ 模型正在回答"), text  # ... below its text
    assert int(WAITING["zh-CN"].search(text).group(2)) >= 10
    # then the answer went on after its text so far, without the line
    assert chat.messages[reply["id"]]["output"].startswith(QUIET_CHAT)

    waiting_id, text, _ = agent.first_waiting_line()
    answer = next(s for s in steps["en-US"] if QUIET_AGENT in (s.get("output") or ""))
    assert text.startswith("⏳ The model is answering") and waiting_id != answer["id"]
    assert waiting_id in agent.deleted  # a line of its own, gone when the answer went on
    for language, stored in steps.items():
        assert not any("⏳" in (s.get("output") or "") for s in stored), language
