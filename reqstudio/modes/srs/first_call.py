"""ReqParse's model call, the run's first, and starting it before the graph is built.

For the user, the first request leaves sooner: a fresh run starts ReqParse's call at once
(`FirstCall.start`), and imports LangGraph and builds its graph while that request is in
flight (once its request has surely left: its answer began, a try failed or the call
ended); the graph's ReqParse node then takes the call's answer (`FirstCall.relay`) instead
of asking again. It is the node's own call (`ask_parse`): the same prompt, retry policy,
validation and events, in the same order. What the call writes until its request has left
is read from `FirstCall.before_sent` by whoever started it; the rest goes to the node's
stream; its retries reach the run's wait observers as they happen, as a node's do. Nothing
here imports LangGraph.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage, HumanMessage

from reqstudio.events import BaseEvent
from reqstudio.llm import ModelFactory
from reqstudio.modes.srs.asking import NodeClock, ask_for
from reqstudio.modes.srs.events import NodeStarted
from reqstudio.modes.srs.state import RequirementList
from reqstudio.modes.srs.streaming import NodeStream
from reqstudio.modes.srs.trail import say_to
from reqstudio.prompts import render_prompt
from reqstudio.structured import StructuredResult
from reqstudio.usage import UsageTracker
from reqstudio.waits import AnswerArrived, CallEnded, CallEvent, TryFailed, watching

Writer = Callable[[BaseEvent], None]


@dataclass
class ParseAnswer:
    """ReqParse's call as its node records it: what was sent, the answer, and its clock."""

    messages: Sequence[BaseMessage]
    answer: StructuredResult[RequirementList]
    clock: NodeClock


async def ask_parse(
    write: Writer, factory: ModelFactory, tracker: UsageTracker, user_input: str
) -> ParseAnswer:
    """ReqParse's step up to its validated answer: the step's start and trail line, then the
    call, its answer shown to `write` as it streams."""
    write(NodeStarted(agent="ReqParse", round=0))
    say_to(write, "parse_start")
    clock = NodeClock.start()
    messages = [HumanMessage(render_prompt("srs/req_parse.md", user_input=user_input))]
    answer = await ask_for(
        factory,
        "ReqParse",
        messages,
        RequirementList,
        [tracker, clock.usage],
        relay=[NodeStream(write)],
    )
    return ParseAnswer(messages, answer, clock)


class FirstCall:
    """ReqParse's call, started before the graph that will use its answer."""

    _task: asyncio.Task[ParseAnswer]

    def __init__(self) -> None:
        self._pending: list[BaseEvent] = []
        self._sent = False
        self._changed = asyncio.Event()

    @classmethod
    def start(cls, factory: ModelFactory, tracker: UsageTracker, user_input: str) -> FirstCall:
        """Start the call as a task of the running loop (it runs once the caller awaits)."""
        first = cls()
        first._task = asyncio.create_task(first._call(factory, tracker, user_input))
        first._task.add_done_callback(lambda _: first._changed.set())
        return first

    async def _call(
        self, factory: ModelFactory, tracker: UsageTracker, user_input: str
    ) -> ParseAnswer:
        with watching(self._notice):
            return await ask_parse(self._put, factory, tracker, user_input)

    def _notice(self, event: CallEvent) -> None:
        """Its request has left once its answer begins, a try fails or the call ends."""
        if isinstance(event, AnswerArrived | TryFailed | CallEnded):
            self._sent = True
            self._changed.set()

    def _put(self, event: BaseEvent) -> None:
        self._pending.append(event)
        self._changed.set()

    async def _events(self, until_sent: bool) -> AsyncIterator[BaseEvent]:
        while True:
            while self._pending:
                yield self._pending.pop(0)
            if self._task.done() or (until_sent and self._sent):
                return
            self._changed.clear()
            await self._changed.wait()

    def before_sent(self) -> AsyncIterator[BaseEvent]:
        """The call's events, in order, until its request has left (or the call is over);
        the rest are the node's (`relay`)."""
        return self._events(until_sent=True)

    async def relay(self, write: Writer) -> ParseAnswer:
        """In the ReqParse node, in its task: the call's other events to `write`, in order, as
        they come; then its answer, or its error raised as the node's own call raises it."""
        async for event in self._events(until_sent=False):
            write(event)
        return await self._task

    def close(self) -> None:
        """A run that ends before its node took the call: stop the call (its error, if it
        had one, is the run's to report, not the loop's)."""
        if not self._task.done():
            self._task.cancel()
        elif not self._task.cancelled():
            self._task.exception()
