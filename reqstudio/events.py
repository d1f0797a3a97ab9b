"""What a run of any mode reports while it works: one union of eight event types.

Every mode's engine yields instances of these eight classes, so a consumer (the browser, the
CLI, a test, a record) can handle any mode's stream by matching on `type`:

- `started`: the run begins (`thread_id` when it is saved).
- `step_started` / `step_finished`: a stage of the run (a node, a reviewer, a reasoning round,
  a tool call, an agent's turn). `step` names it, `round` numbers it where the mode has
  rounds, `outcome` says how it ended ("done", "failed", "skipped", "reset": the step writes
  again and what was shown of it goes).
- `token`: a piece of streamed text (`reasoning`: a reasoning model's separate thinking).
- `notice`: something the user should know that does not stop the run; `code` and `values`
  say what, so the reader words it in their own language.
- `paused`: the run waits for the user (resume the thread with their decision).
- `failed`: the run could not finish; `code` and `values` give the reason, `partial` what
  it had produced so far (failure codes are plain strings so an enumeration can replace them).
- `finished`: the run ended; `result` is the mode's result.

How modes carry their own detail: a mode's events are subclasses of these eight, adding typed
fields (SRS's `NodeFinished` is a `StepFinished` with the requirement list, Review's
`ReviewerFinished` one with the review). Each subclass fixes `name`, the mode's own name for
the event ("node_finished", "reviewer_finished"), so a mode's consumer can tell its events
apart by `name` (or `isinstance`) while a shared consumer reads only `type` and the fields
above. `EventAdapter` parses a dumped event back into its core class (the mode's extra fields
are dropped); each mode keeps its own adapter, discriminated by `name`, where it reads its
events back whole.

The entry shape of a mode is `run(request, models, *, checkpointer=None, thread_id=None,
resume=False) -> AsyncIterator[Event]` (`RunEntry`): each mode's `entry.py` has one.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import Annotated, Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

Outcome = Literal["done", "failed", "skipped", "reset"]


class BaseEvent(BaseModel):
    """Fields every event has. `name`: the emitting mode's own name for it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    type: str
    name: str = ""


class Started(BaseEvent):
    type: Literal["started"] = "started"
    thread_id: str | None = None


class _StepEvent(BaseEvent):
    """`STEP_FIELD`: the field whose value names the step when `step` is not given (a mode's
    event about one reviewer, agent or section)."""

    STEP_FIELD: ClassVar[str] = ""

    step: str = ""
    round: int | None = None

    def model_post_init(self, context: Any) -> None:
        if self.STEP_FIELD:
            self.step = self.step or getattr(self, self.STEP_FIELD)


class StepStarted(_StepEvent):
    type: Literal["step_started"] = "step_started"


class StepFinished(_StepEvent):
    type: Literal["step_finished"] = "step_finished"
    outcome: Outcome = "done"


class StepReset(StepFinished):
    """A step's try broke off and it starts again: what was shown of the broken try goes."""

    outcome: Outcome = "reset"


class Token(BaseEvent):
    type: Literal["token"] = "token"
    text: str = ""
    reasoning: bool = False


class Notice(BaseEvent):
    type: Literal["notice"] = "notice"
    code: str = ""
    values: dict[str, Any] = Field(default_factory=dict)


class Paused(BaseEvent):
    type: Literal["paused"] = "paused"


class Failed(BaseEvent):
    type: Literal["failed"] = "failed"
    code: str = ""
    values: dict[str, Any] = Field(default_factory=dict)
    partial: Any = None


class Finished(BaseEvent):
    type: Literal["finished"] = "finished"
    result: Any = None


CORE_TYPES: tuple[type[BaseEvent], ...] = (
    Started,
    StepStarted,
    StepFinished,
    Token,
    Notice,
    Paused,
    Failed,
    Finished,
)

Event = Annotated[
    Started | StepStarted | StepFinished | Token | Notice | Paused | Failed | Finished,
    Field(discriminator="type"),
]

EventAdapter: TypeAdapter[Event] = TypeAdapter(Event)

EVENT_TYPES: frozenset[str] = frozenset(cls.model_fields["type"].default for cls in CORE_TYPES)


def in_union(event: object) -> bool:
    """True when `event` is one of the eight types (or a mode's subclass of one) and its
    `type` is the one its class fixes."""
    return (
        isinstance(event, CORE_TYPES)
        and event.type in EVENT_TYPES
        and EventAdapter.validate_python(event.model_dump()).type == event.type
    )


def core_type_of(event: BaseEvent) -> type[BaseEvent]:
    return next(cls for cls in CORE_TYPES if isinstance(event, cls))


def payload(event: BaseEvent, **dump: Any) -> dict[str, Any]:
    """The event's mode-specific fields as a dict (`model_dump(**dump)`), without `type`,
    `name` and the core fields its mode does not redeclare: what a mode's JSON outputs held
    before the union."""
    core = core_type_of(event)
    own: set[str] = set()
    for cls in type(event).__mro__:
        if cls is core:
            break
        own |= set(getattr(cls, "__annotations__", {}))
    return event.model_dump(exclude=(set(core.model_fields) - own) | {"type", "name"}, **dump)


def new_thread_id(checkpointer: Any, thread_id: str | None) -> str | None:
    """The id a saved run goes under: the caller's, or a fresh one when it is saved."""
    if checkpointer is not None and thread_id is None:
        return uuid.uuid4().hex
    return thread_id


async def opened(
    thread_id: str | None, stream: AsyncIterator[BaseEvent]
) -> AsyncIterator[BaseEvent]:
    """`Started`, then the engine's `stream` as it comes."""
    yield Started(name="started", thread_id=thread_id)
    async with aclosing(stream):  # type: ignore[type-var]
        async for event in stream:
            yield event


def checkpointed_entry(
    engine: Callable[..., AsyncIterator[BaseEvent]], doc: str
) -> Callable[..., AsyncIterator[BaseEvent]]:
    """The entry (`RunEntry`) of a mode whose `engine` takes the entry's own arguments and
    keywords (its checkpointer, thread id and resume, then its own `options`): `Started`
    under the thread id (a fresh one for a saved run that names none), then the engine's
    events. `doc` says what the mode's events and options are."""
    return _entry(engine, doc, refusal=None)


def unsaved_entry(
    engine: Callable[..., AsyncIterator[BaseEvent]], refusal: str, doc: str
) -> Callable[..., AsyncIterator[BaseEvent]]:
    """The entry (`RunEntry`) of a mode that saves no runs (it keeps its memory elsewhere):
    `checkpointer` is not used, resuming raises `ValueError(refusal)`, and the events are
    `engine(request, models, thread_id, **options)`'s. `doc` says what they and the mode's
    `options` are."""
    return _entry(engine, doc, refusal)


def _entry(
    engine: Callable[..., AsyncIterator[BaseEvent]], doc: str, refusal: str | None
) -> Callable[..., AsyncIterator[BaseEvent]]:
    """`checkpointed_entry` (`refusal` None) or `unsaved_entry`."""

    def run(
        request: Any,
        models: Any,
        *,
        checkpointer: Any = None,
        thread_id: str | None = None,
        resume: bool = False,
        **options: Any,
    ) -> AsyncIterator[BaseEvent]:
        if refusal is not None:
            if resume:
                raise ValueError(refusal)
            return engine(request, models, thread_id, **options)
        thread_id = new_thread_id(checkpointer, thread_id)
        return opened(
            thread_id,
            engine(request, models, checkpointer=checkpointer, thread_id=thread_id,
                   resume=resume, **options),
        )  # fmt: skip

    run.__doc__ = doc
    return run


class RunEntry(Protocol):
    """The one entry shape every mode's engine offers (`reqstudio.modes.<mode>.entry.run`)."""

    def __call__(
        self,
        request: Any,
        models: Any,
        *,
        checkpointer: Any = None,
        thread_id: str | None = None,
        resume: bool = False,
    ) -> AsyncIterator[BaseEvent]: ...


Send = Callable[[BaseEvent], Awaitable[None]]


async def sent_events(
    work: Callable[[Send], Awaitable[BaseEvent]], failed: Callable[[Exception], BaseEvent]
) -> AsyncIterator[BaseEvent]:
    """The events an engine that reports through a callback sends, as a stream: `work(send)`
    runs in a task of its own; each event it sends is yielded in order, and `send` returns
    only once the consumer has taken it and asked for the next (what the engine does after a
    retry's reset comes after the consumer showed the reset, as with a direct callback). Then
    the event `work` returns (its `finished`), or `failed(error)` for what it raised. Closing
    the stream early (the consumer stopped, or was cancelled) cancels `work`; what it sends
    while it ends (a stage's failure on its cancellation) no longer waits for anyone."""
    queue: asyncio.Queue[BaseEvent | None] = asyncio.Queue()
    closing = False

    async def send(event: BaseEvent) -> None:
        await queue.put(event)
        if not closing:
            await queue.join()

    async def run() -> None:
        try:
            last = await work(send)
        except Exception as error:
            last = failed(error)
        await queue.put(last)
        await queue.put(None)

    task = asyncio.create_task(run())
    try:
        while (event := await queue.get()) is not None:
            yield event
            queue.task_done()
        await task
    finally:
        closing = True
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


class StreamEnding:
    """How a stream of events ended, as its renderer (the command line's, the browser's)
    keeps it for the command or flow to act on: the `failed`, `finished` or `paused` event."""

    failed: Any = None  # the `failed` event, when the run failed
    finished: Any = None  # the `finished` event, when it finished
    paused: Any = None  # the `paused` event, when it waits for the user

    def keep_ending(self, event: BaseEvent) -> None:
        if event.type in ("failed", "finished", "paused"):
            setattr(self, event.type, event)

    def forget_ending(self) -> None:
        """A resumed run's stream is a new one: the last one's ending goes."""
        self.failed = self.finished = self.paused = None
