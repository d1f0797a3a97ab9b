"""The load benchmark's simulated users (benchmarks/load_benchmark.py): what each one sends and
the scripted provider answers (Chat, Agent, SRS with a reference and all its rounds, the
sidebar and a reopen), over the app's own HTTP routes and Socket.IO, timed turn by turn."""

from __future__ import annotations

import asyncio
import json
import math
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import httpx
import socketio

ROOT = Path(__file__).resolve().parent.parent

PASSWORD = "load-pass"
FAILED = "SRS generation failed"  # the SRS run's failure message (reqstudio/locales/en-US.toml)
NOT_SAVED = "so the turn was not saved then"  # history_unavailable, likewise
SKIPPED = 3  # exit code when the run cannot be made here (no nginx, no PostgreSQL)

REFERENCE = (ROOT / "tests" / "data" / "srs" / "e-store" / "reference.md").read_bytes()

PROSE = (
    "A good requirement states one need, says who needs it and why, and can be checked by a "
    "test that either passes or fails. It avoids words such as fast, easy or flexible unless "
    "a number says what they mean, names the conditions under which it holds, and does not "
    "prescribe a design where any design that meets it would do. "
)


def fenced(value: object) -> str:
    return "```json\n" + json.dumps(value, ensure_ascii=False) + "\n```"


def prose(chars: int) -> str:
    return (PROSE * (chars // len(PROSE) + 1))[:chars].rstrip() + "."


@dataclass
class Shape:
    """What each user does and how the model streams."""

    chunk_chars: int = 4
    chunk_rate: float = 40.0  # chunks a second, per stream
    latency: float = 0.5  # before the first byte
    answer_chars: int = 1200  # Chat and Agent answers
    document_chars: int = 4000  # the SRS document
    items: int = 8  # requirements ReqParse finds
    chat_turns: int = 2
    srs_rounds: int = 4  # ReqExplore/ReqClarify rounds (the app's default SRS_MAX_ITERATIONS 5)
    modes: tuple[str, ...] = ("Chat", "Agent", "SRS")

    def stream(self) -> dict:
        return {"delay": self.latency, "chunk_chars": self.chunk_chars,
                "chunk_delay": 1 / self.chunk_rate}  # fmt: skip

    def small(self) -> Shape:
        """The warm-up: the same steps with short answers."""
        return Shape(self.chunk_chars, 1000.0, 0.05, 80, 200, 3, 1, self.srs_rounds, self.modes)


def tag(name: str) -> str:
    """In every request of one user (their question, their items): each reply is matched to
    the user whose request it answers, and a user's requests come one after another."""
    return f"[{name}]"


def items_for(name: str, count: int, round_number: int) -> list[dict[str, str]]:
    items = [
        {"id": f"FR-{n:02d}", "content": f"{tag(name)} The library shall support capability {n}."}
        for n in range(1, count + 1)
    ]
    return items + [
        {"id": f"NFR-{r}{k}", "content": f"{tag(name)} Round {r} quality rule {k}."}
        for r in range(1, round_number + 1)
        for k in (1, 2)
    ]


def replies_for(name: str, shape: Shape) -> list[dict]:
    """One user's replies in the order the user's requests come."""
    stream, match = shape.stream(), tag(name)
    replies: list[dict] = []
    if "Chat" in shape.modes:
        replies += [{"content": prose(shape.answer_chars), "match": match, **stream}] * (
            shape.chat_turns
        )
    if "Agent" in shape.modes:
        replies += [
            {"content": "The question needs no search; I can answer from what I know.",
             "match": match, **stream},
            {"content": prose(shape.answer_chars), "match": match, **stream},
        ]  # fmt: skip
    if "SRS" in shape.modes:
        replies.append({"content": fenced(items_for(name, shape.items, 0)), "match": match,
                        **stream})  # fmt: skip
        frozen: set[str] = set()
        for round_number in range(1, shape.srs_rounds + 1):
            found = items_for(name, shape.items, round_number)
            open_items = [item for item in found if item["id"] not in frozen]
            replies.append({"content": fenced(open_items), "match": match, **stream})
            scores = [
                {"id": item["id"], "score": 2 if i == 0 else 0, "reason": "load"}
                for i, item in enumerate(open_items)
            ]  # each round freezes one item, so every round runs
            frozen.add(open_items[0]["id"])
            replies.append({"content": fenced(scores), "match": match, **stream})
        lines = [f"- FR-{n:02d} The system shall support capability {n}." for n in range(200)]
        document = "# Software Requirements Specification\n\n## 3. Specific requirements\n\n"
        for line in lines:
            if len(document) >= shape.document_chars:
                break
            document += line + "\n"
        replies.append({"content": document, "match": match, **stream})
    return replies


def streamed_tokens(replies: list[dict]) -> int:
    """Chunks the model streams for these replies: each is about one token."""
    return sum(math.ceil(len(r["content"]) / r["chunk_chars"]) for r in replies)


@dataclass
class UserResult:
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)


class User:
    """One person in a browser, as the web app talks to the server. `source` is the local
    address the user's connections come from (127.0.<n>.1: a machine of its own to nginx)."""

    def __init__(self, base_url: str, name: str, source: str | None = None):
        self.base_url = base_url
        self.name = name
        self.source = source
        self.cookies: dict[str, str] = {}
        self.http: httpx.AsyncClient | None = None
        self.sessions: list[Session] = []

    async def __aenter__(self) -> User:
        transport = httpx.AsyncHTTPTransport(local_address=self.source) if self.source else None
        self.http = httpx.AsyncClient(base_url=self.base_url, timeout=120, transport=transport)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.http is not None
        await self.http.aclose()
        for session in self.sessions:  # those an error left open
            if session.http_session is not None and not session.http_session.closed:
                await session.http_session.close()

    async def login(self) -> None:
        assert self.http is not None
        response = await self.http.post(
            "/login", data={"username": self.name, "password": PASSWORD}
        )
        response.raise_for_status()
        self.cookies = dict(response.cookies)

    async def list_threads(self) -> list[dict]:
        """The history sidebar's request."""
        assert self.http is not None
        response = await self.http.post(
            "/project/threads",
            json={"pagination": {"first": 20, "cursor": None}, "filter": {}},
            cookies=self.cookies,
        )
        response.raise_for_status()
        return response.json()["data"]

    async def open_thread(self, thread_id: str) -> Session:
        """Clicking a thread in the sidebar: the page fetches it and a socket resumes it."""
        assert self.http is not None
        response = await self.http.get(f"/project/thread/{thread_id}", cookies=self.cookies)
        response.raise_for_status()
        session = Session(self, "Chat", thread_id)
        await session.connect()
        return session

    async def session(self, mode: str) -> Session:
        session = Session(self, mode)
        await session.connect()
        return session


class Session:
    """One browser tab: a Socket.IO connection and the events it receives."""

    def __init__(self, user: User, mode: str, thread_id: str = ""):
        self.user = user
        self.mode = mode
        self.id = str(uuid.uuid4())
        self.resuming = thread_id
        self.thread_id = thread_id
        self.http_session: aiohttp.ClientSession | None = None
        if user.source:
            connector = aiohttp.TCPConnector(local_addr=(user.source, 0))
            self.http_session = aiohttp.ClientSession(connector=connector)
        self.sio = socketio.AsyncClient(reconnection=False, http_session=self.http_session)
        user.sessions.append(self)
        self.changed = asyncio.Event()  # set on every message event (no polling)
        self.messages: dict[str, str] = {}
        self.resumed = False
        self.unsaved: set[str] = set()
        self.tasks: list[str] = []  # task_start / task_end, as they come
        self.errors: list[str] = []
        self.sio.on("new_message", self._message)
        self.sio.on("update_message", self._message)
        self.sio.on("ask", self._ask)
        self.sio.on("first_interaction", self._first)
        self.sio.on("resume_thread", self._resumed)
        self.sio.on("resume_thread_error", self._not_resumed)
        self.sio.on("task_start", self._task_start)
        self.sio.on("task_end", self._task_end)

    async def _message(self, step: dict) -> None:
        self.messages[step["id"]] = step.get("output") or ""
        if NOT_SAVED in (step.get("output") or "") and step["id"] not in self.unsaved:
            self.unsaved.add(step["id"])  # the app's notice that a turn missed the history
            self.errors.append(f"{self.mode}: a turn was not saved to the history")
        self.changed.set()
        if step.get("isError") and step.get("type") == "assistant_message":
            self.errors.append(step.get("output", "")[-300:])

    async def _first(self, data: dict) -> None:
        self.thread_id = data.get("thread_id") or self.thread_id

    async def _resumed(self, thread: dict) -> None:
        self.resumed = True
        self.changed.set()

    async def _not_resumed(self, error: object = None) -> None:
        self.errors.append(f"resume refused: {error}")
        self.resumed = True  # nothing more will come
        self.changed.set()

    async def _task_start(self, data: object = None) -> None:
        self.tasks.append("start")
        self.changed.set()

    async def _task_end(self, data: object = None) -> None:
        self.tasks.append("end")
        self.changed.set()

    def idle_since(self, mark: int) -> bool:
        """A task started after `mark` and the last one started has ended (the browser's
        spinner appeared and went away)."""
        seen = self.tasks[mark:]
        return "start" in seen and seen[-1] == "end"

    async def upload(self, name: str, content: bytes, mime: str = "text/markdown") -> str:
        """Attach a file in the composer, as the web app does before sending."""
        assert self.user.http is not None
        response = await self.user.http.post(
            "/project/file",
            params={"session_id": self.id},
            files={"file": (name, content, mime)},
            cookies=self.user.cookies,
        )
        response.raise_for_status()
        return response.json()["id"]

    async def _ask(self, data: dict) -> dict:
        # SRS asks whether to upload a reference: continue without one
        return {"name": "skip", "payload": {"choice": "skip"}, "label": "skip"}

    async def connect(self) -> None:
        cookie = "; ".join(f"{k}={v}" for k, v in self.user.cookies.items())
        await self.sio.connect(
            self.user.base_url,
            socketio_path="/ws/socket.io",
            transports=["websocket"],
            headers={"Cookie": cookie, "Accept-Language": "en-US"},
            auth={
                "clientType": "webapp",
                "sessionId": self.id,
                "threadId": self.resuming,
                "userEnv": "{}",
                "chatProfile": self.mode,
            },
            wait_timeout=60,
        )
        await self.sio.emit("connection_successful")
        if self.resuming:
            await self.until(lambda: self.resumed)
        else:
            # the chat's start is over (its task ended), as a person reads the greeting before
            # typing: a message sent earlier would count the start's end as its own
            await self.until(
                lambda: (
                    self.idle_since(0) and any("mode is on" in t for t in self.messages.values())
                )
            )

    async def until(self, condition, timeout: float = 300.0) -> None:
        async def wait() -> None:
            while not condition():
                self.changed.clear()
                await self.changed.wait()

        try:
            await asyncio.wait_for(wait(), timeout)
        except TimeoutError:
            raise TimeoutError(f"{self.user.name}/{self.mode}: condition not reached") from None

    async def send(
        self, text: str, done=None, files: list[str] = (), timeout: float = 300.0
    ) -> None:
        """Send a message as the composer does and wait until the app has handled it (and
        `done(messages)` holds, when given)."""
        mark = len(self.tasks)
        step = {
            "id": str(uuid.uuid4()), "threadId": "", "name": self.user.name,
            "type": "user_message", "output": text, "createdAt": "", "streaming": False,
            "metadata": {}, "modes": {},
        }  # fmt: skip
        references = [{"id": f} for f in files] or None
        await self.sio.emit("client_message", {"message": step, "fileReferences": references})
        await self.until(
            lambda: self.idle_since(mark) and (done is None or done(list(self.messages.values()))),
            timeout,
        )

    async def close(self) -> None:
        await self.sio.disconnect()
        if self.http_session is not None:
            await self.http_session.close()


def answered(count: int):
    """The stats footer ("… tokens (…)") ends every finished Chat answer."""
    return lambda texts: sum("tokens (" in t for t in texts) >= count


async def one_user(user: User, shape: Shape, start: asyncio.Event) -> UserResult:
    result = UserResult()
    name = user.name
    stage = "login"
    await start.wait()
    began = time.perf_counter()
    try:
        async with user:
            await user.login()
            await user.list_threads()
            chat_thread = ""
            stage = "Chat"
            if "Chat" in shape.modes:
                chat = await user.session("Chat")
                for turn in range(1, shape.chat_turns + 1):
                    await chat.send(
                        f"{tag(name)} turn {turn}: what makes a good requirement?",
                        answered(turn),
                    )
                result.errors += chat.errors
                chat_thread = chat.thread_id
                await chat.close()
            if "Agent" in shape.modes:
                stage = "Agent"
                agent = await user.session("Agent")
                await agent.send(  # its statistics close every Agent run
                    f"{tag(name)} What makes a requirement testable?",
                    lambda texts: any("**Statistics**" in t for t in texts),
                )
                result.errors += agent.errors
                await agent.close()
            if "SRS" in shape.modes:
                stage = "SRS"
                srs = await user.session("SRS")
                reference = await srs.upload("reference.md", REFERENCE)
                await srs.send(  # with a reference: ReqClarify scores and the rounds go on
                    f"{tag(name)} a university library lending system; readers search, "
                    "reserve and borrow books.",
                    files=[reference],
                )  # the run ends with its message handling, however it ends
                result.errors += srs.errors
                texts = list(srs.messages.values())
                if not any("Done:" in t for t in texts):  # failed, or stopped by the database
                    ending = [t for t in texts if FAILED in t] or texts[-1:]
                    result.errors.append(f"{name}: the SRS run did not finish: {ending[-1][-300:]}")
                await srs.close()
            stage = "sidebar"
            threads = await user.list_threads()
            if chat_thread:
                stage = "reopen"
                if chat_thread not in {t["id"] for t in threads}:
                    result.errors.append(f"{name}: the Chat thread is not in the sidebar")
                reopened = await user.open_thread(chat_thread)
                result.errors += reopened.errors
                await reopened.close()
    except Exception as exc:
        result.errors.append(f"{name} at {stage}: {type(exc).__name__}: {exc}")
    result.seconds = time.perf_counter() - began
    return result
