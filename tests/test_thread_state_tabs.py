"""Two tabs (or two instances) on one thread, each taking a turn: the thread's memory keeps
both turns, so the next request the model receives holds both. The real app over its
Socket.IO endpoint, the scripted model server over HTTP; on one instance with SQLite and on
two instances sharing one PostgreSQL.

Each tab opens the thread at the same state version and both turns are in flight at once
(the model's answers are held back until both questions arrived): the tab that saves second
finds its version taken, reloads the thread's memory and makes its own turn again on it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tests.apps import AppProcess, shared_database_env, two_instances
from tests.browser_support import provider_env
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.socket_support import ChatSocket, sign_in_cookie


@pytest.fixture(params=["sqlite", "postgres"])
def places(
    request, llm_server: ScriptedLLMServer, tmp_path: Path
) -> Iterator[tuple[AppProcess, AppProcess]]:
    """Where the two tabs are: one instance on SQLite (both tabs on it), or two instances on
    one PostgreSQL (a tab on each)."""
    env = provider_env(llm_server)
    if request.param == "sqlite":
        app = AppProcess(tmp_path / "data", env).start()
        try:
            yield app, app
        finally:
            app.stop()
        return
    url = request.getfixturevalue("postgres_url")
    with two_instances(tmp_path, shared_database_env(env, url)) as pair:
        yield pair


async def until(condition: Callable[[], bool], timeout: float = 60) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.05)


def conversation(request: dict) -> list[str]:
    """What a request to the model holds besides its system prompt: the turns sent, in order."""
    return [m["content"] for m in request["messages"] if m["role"] != "system"]


def request_with(server: ScriptedLLMServer, text: str) -> dict:
    """The first request that held the turn `text` (an Agent turn's first call: the
    function-call model's)."""
    return next(r for r in server.requests if text in conversation(r))


async def tab_on(app: AppProcess, thread_id: str | None = None, mode: str = "Chat") -> ChatSocket:
    """A tab on `app` in `mode`: a new chat, or the thread `thread_id` opened from the history."""
    cookie = sign_in_cookie(app.url)
    tab = await ChatSocket(app.url, cookie, profile=mode, thread_id=thread_id).connect()
    if thread_id:  # Chainlit sends the thread once the session holds its state
        await tab.wait_for(lambda event, _: event == "resume_thread")
    else:  # the chat's start has ended (a message sent before it may end first)
        await tab.wait_for(
            lambda event, data: event == "update_message" and data.get("name") == "on_chat_start"
        )
    return tab


@asynccontextmanager
async def closing(*tabs: ChatSocket) -> AsyncIterator[None]:
    """The tabs, each closed in turn when the block ends, however it ends."""
    try:
        yield
    finally:
        for tab in tabs:
            await tab.close()


async def turn(tab: ChatSocket, text: str) -> str:
    message_id = await tab.send(text)
    await tab.wait_until_idle()
    return message_id


async def model_heard(
    server: ScriptedLLMServer, tab: ChatSocket, question: str, answer: str
) -> list[str]:
    """Take the turn `question` in `tab`, the model answering `answer`: the turns its request
    held."""
    server.script(Reply(content=answer, match=question))
    await turn(tab, question)
    return conversation(server.requests[-1])


async def thread_with_one_turn(app: AppProcess, server: ScriptedLLMServer) -> str:
    server.script(Reply(content="Answer 0: a library.", match="Question 0"))
    first = await tab_on(app)
    async with closing(first):
        await turn(first, "Question 0: what is the system?")
    assert first.thread_id
    return first.thread_id


def test_two_tabs_at_the_same_version_each_take_a_turn_and_the_model_gets_both(
    places: tuple[AppProcess, AppProcess], llm_server: ScriptedLLMServer
):
    here, there = places
    q0, a0 = "Question 0: what is the system?", "Answer 0: a library."
    qa, aa = "Question A: who borrows?", "Answer A: readers."
    qb, ab = "Question B: who lends?", "Answer B: librarians."

    async def scenario() -> None:
        thread_id = await thread_with_one_turn(here, llm_server)
        tab_a, tab_b = await tab_on(here, thread_id), await tab_on(there, thread_id)
        async with closing(tab_a, tab_b):
            llm_server.script(
                Reply(content=aa, match="Question A", hold="a"),
                Reply(content=ab, match="Question B", hold="b"),
            )
            await tab_a.send(qa)
            await tab_b.send(qb)
            # both turns are under way, each from the state both tabs opened
            await until(lambda: len(llm_server.requests) == 3)
            assert conversation(request_with(llm_server, qa)) == [q0, a0, qa]
            assert conversation(request_with(llm_server, qb)) == [q0, a0, qb]
            llm_server.open_gate("a")
            await tab_a.wait_until_idle()
            llm_server.open_gate("b")  # B saves second, over the version A just wrote
            await tab_b.wait_until_idle()

            heard = await model_heard(llm_server, tab_a, "Question 3: how?", "Answer 3: by card.")
            assert heard == [q0, a0, qa, aa, qb, ab, "Question 3: how?"]
            heard = await model_heard(llm_server, tab_b, "Question 4: where?", "Answer 4: online.")
            assert heard == [
                q0, a0, qa, aa, qb, ab, "Question 3: how?", "Answer 3: by card.",
                "Question 4: where?",
            ]  # fmt: skip

        # a tab opened afterwards (the history, or a reload) finds both tabs' turns too
        llm_server.script(Reply(content="Answer 5.", match="Question 5"))
        reopened = await tab_on(there, thread_id)
        async with closing(reopened):
            await turn(reopened, "Question 5: and then?")
        assert conversation(llm_server.requests[-1])[:6] == [q0, a0, qa, aa, qb, ab]
        assert len(conversation(llm_server.requests[-1])) == 11

    asyncio.run(scenario())


def test_an_edit_in_one_tab_rewinds_the_memory_another_tab_sends(
    places: tuple[AppProcess, AppProcess], llm_server: ScriptedLLMServer
):
    """Tab B takes a turn after tab A's; A then edits its first question: what followed goes
    from the memory (B's turn included) and B's next request holds only what is left."""
    here, there = places

    async def scenario() -> None:
        llm_server.script(Reply(content="Answer 1: e-Store.", match="Question 1"))
        tab_a = await tab_on(here)
        first = await turn(tab_a, "Question 1: the system is e-Store")
        tab_b = await tab_on(there, tab_a.thread_id)
        async with closing(tab_a, tab_b):
            heard = await model_heard(
                llm_server, tab_b, "Question 2: which roles?", "Answer 2: three roles."
            )
            assert heard == [
                "Question 1: the system is e-Store", "Answer 1: e-Store.",
                "Question 2: which roles?",
            ]  # fmt: skip

            llm_server.script(Reply(content="Answer 1': Library.", match="Library"))
            tab_a._sent_at = len(tab_a.events)
            await tab_a.client.emit(
                "edit_message",
                {"message": {"id": first, "output": "Question 1: the system is Library",
                             "type": "user_message", "name": "user", "threadId": ""}},
            )  # fmt: skip
            await tab_a.wait_until_idle()
            assert conversation(llm_server.requests[-1]) == ["Question 1: the system is Library"]

            heard = await model_heard(llm_server, tab_b, "Question 3: and now?", "Answer 3.")
            assert heard == [
                "Question 1: the system is Library", "Answer 1': Library.",
                "Question 3: and now?",
            ]  # fmt: skip

    asyncio.run(scenario())


ANSWER_PROMPT_MARK = "Write the final answer now"  # in reqstudio/prompts/agent/answer_context.md


def agent_answer(text: str) -> Reply:
    """The answer model's reply (the function-call model decided no tool was needed)."""
    return Reply(content=text, match=ANSWER_PROMPT_MARK)


def test_two_agent_tabs_at_the_same_version_each_take_a_turn_and_the_model_gets_both(
    places: tuple[AppProcess, AppProcess], llm_server: ScriptedLLMServer
):
    """The same in Agent mode, whose memory keeps each turn's question and answer (and its
    tool calls): the next request of the function-call model holds both tabs' turns."""
    here, there = places

    def thinking(marker: str, **kwargs) -> Reply:
        return Reply(content="No tool is needed for this.", match=marker, **kwargs)

    async def scenario() -> None:
        llm_server.script(thinking("Question 0"), agent_answer("Answer 0: a library."))
        opener = await tab_on(here, mode="Agent")
        async with closing(opener):
            await turn(opener, "Question 0: what is the system?")
        tab_a = await tab_on(here, opener.thread_id, mode="Agent")
        tab_b = await tab_on(there, opener.thread_id, mode="Agent")
        async with closing(tab_a, tab_b):
            llm_server.script(thinking("Question A", hold="a"), thinking("Question B", hold="b"))
            await tab_a.send("Question A: who borrows?")
            await tab_b.send("Question B: who lends?")
            await until(lambda: len(llm_server.requests) == 4)  # both tabs' first calls
            llm_server.script(agent_answer("Answer A: readers."))
            llm_server.open_gate("a")
            await tab_a.wait_until_idle()
            llm_server.script(agent_answer("Answer B: librarians."))
            llm_server.open_gate("b")
            await tab_b.wait_until_idle()

            llm_server.script(thinking("Question 3"), agent_answer("Answer 3."))
            await turn(tab_a, "Question 3: how?")
            assert conversation(request_with(llm_server, "Question 3: how?")) == [
                "Question 0: what is the system?", "Answer 0: a library.",
                "Question A: who borrows?", "Answer A: readers.",
                "Question B: who lends?", "Answer B: librarians.",
                "Question 3: how?",
            ]  # fmt: skip

    asyncio.run(scenario())
